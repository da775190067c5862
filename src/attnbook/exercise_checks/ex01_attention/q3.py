from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [0, 0]

@test_case(points=None, hidden=False)
def test_projections_come_first(self_attention):
    import numpy as np
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    W_q = np.array([[2.0], [1.0]])
    W_k = np.array([[1.0], [0.0]])
    W_v = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    out, w = self_attention(X, W_q, W_k, W_v)
    assert np.shape(out) == (2, 3) and np.shape(w) == (2, 2), f'expected output (T, d_v) = (2, 3) and weights (2, 2), got {np.shape(out)} and {np.shape(w)}'
    np.testing.assert_allclose(w[0], [np.e ** 2 / (np.e ** 2 + 1), 1 / (np.e ** 2 + 1)], atol=1e-09, err_msg='token 0: scores [2, 0] (its query 2 times the keys 1 and 0, d_k = 1): project X with W_q, W_k and W_v before attending')
    np.testing.assert_allclose(w[1], [np.e / (np.e + 1), 1 / (np.e + 1)], atol=1e-09, err_msg='token 1: scores [1, 0] (its query 1 times the keys 1 and 0): are the queries X @ W_q and the keys X @ W_k, not the other way round?')
    np.testing.assert_allclose(out, w @ (X @ W_v), atol=1e-09, err_msg='the output is the weights times the values V = X @ W_v, features in their order')

@test_case(points=None, hidden=False)
def test_self_attention_house_rules(self_attention):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    X, W = (np.eye(3), np.arange(9.0).reshape(3, 3) / 9)
    out, w = guarded(self_attention, libraries=('torch', 'scipy'))(X, W, W.T, W)
    assert np.shape(w) == (3, 3), f'weights should be (T, T) = (3, 3), got {np.shape(w)}'

