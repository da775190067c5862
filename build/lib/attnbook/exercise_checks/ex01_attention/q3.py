from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [0]

@test_case(points=None, hidden=False)
def test_projections_come_first(self_attention):
    import numpy as np
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    W_q = np.array([[2.0], [0.0]])
    W_k = np.array([[1.0], [0.0]])
    W_v = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    out, w = self_attention(X, W_q, W_k, W_v)
    assert np.shape(out) == (2, 3) and np.shape(w) == (2, 2), f'expected output (T, d_v) = (2, 3) and weights (2, 2), got {np.shape(out)} and {np.shape(w)}'
    np.testing.assert_allclose(w[0], [np.e ** 2 / (np.e ** 2 + 1), 1 / (np.e ** 2 + 1)], atol=1e-09, err_msg='token 0: scores [2, 0] (its query 2 times the keys 1 and 0, d_k = 1): project X with W_q, W_k and W_v before attending')
    np.testing.assert_allclose(w[1], [0.5, 0.5], atol=1e-12, err_msg="token 1's query is 0: equal weights")

