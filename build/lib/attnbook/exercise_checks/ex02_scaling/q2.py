from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [0, 0, 0]

@test_case(points=None, hidden=False)
def test_shape(scaled_scores, Q, K):
    import numpy as np
    S = scaled_scores(Q, K)
    assert np.shape(S) == (3, 5), f'expected (T_q, T_k) = (3, 5), got {np.shape(S)}'

@test_case(points=None, hidden=False)
def test_rows_are_queries(scaled_scores, Q, K):
    import numpy as np
    S = scaled_scores(Q, K)
    raw = Q @ K.T
    np.testing.assert_allclose(S / S[0, 0], raw / raw[0, 0], rtol=1e-09, err_msg='entry (i, j) should come from query i and key j')

@test_case(points=None, hidden=False)
def test_the_scale(scaled_scores):
    import numpy as np
    Q = np.array([[1.0, 1.0, 1.0, 1.0]])
    K = np.array([[1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(scaled_scores(Q, K), [[2.0, 1.0]], atol=1e-12, err_msg='the raw scores are [4, 2]; divide them by sqrt(d_k) = sqrt(4), where d_k is the width of a query, Q.shape[-1]')

