from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3

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

