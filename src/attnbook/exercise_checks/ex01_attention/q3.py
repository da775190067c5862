from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.3, 0.3]

@test_case(points=None, hidden=False)
def test_projections_come_first(self_attention):
    import numpy as np
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    W_q = np.array([[2.0], [1.0]])
    W_k = np.array([[1.0], [0.0]])
    W_v = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    try:
        out, w = self_attention(X, W_q, W_k, W_v)
    except ValueError as err:
        raise AssertionError(f'self_attention raised ValueError ({err}) for X (2, 2), W_q and W_k (2, 1), W_v (2, 3): with tokens as rows, Q = X @ W_q is (T, d) @ (d, d_k), no transpose of W_q') from None
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
    X = np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 1.0], [2.0, 2.0]])
    W_q, W_k, W_v = (np.array([[1.0], [0.5]]), np.array([[0.5], [-1.0]]), np.array([[1.0, 0.0], [1.0, 1.0]]))
    out, w = self_attention(X, W_q, W_k, W_v)
    s = X @ W_q @ (X @ W_k).T
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    assert np.shape(w) == (4, 4) and np.shape(out) == (4, 2), f'4 tokens: weights (4, 4) and output (4, 2), got {np.shape(w)} and {np.shape(out)}: the rows of X are the tokens, and Q = X @ W_q (the other examples use X = the identity, where X @ W_q is W_q)'
    np.testing.assert_allclose(w, e / e.sum(axis=-1, keepdims=True), atol=1e-09, err_msg='4 tokens that are not the identity: Q = X @ W_q and K = X @ W_k')
    np.testing.assert_allclose(out, w @ (X @ W_v), atol=1e-09, err_msg='the output is the weights times X @ W_v')

