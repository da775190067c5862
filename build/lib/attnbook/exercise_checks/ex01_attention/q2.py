from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [0, 0, 0]

@test_case(points=None, hidden=False)
def test_shapes(attention, Q, K, V):
    import numpy as np
    out, w = attention(Q, K, V)
    assert out.shape == (4, 8), f'output should be (T_q, d_v) = (4, 8), got {np.shape(out)}'
    assert w.shape == (4, 6), f'weights should be (T_q, T_k) = (4, 6), got {np.shape(w)}'

@test_case(points=None, hidden=False)
def test_weights_are_a_distribution(attention, Q, K, V):
    import numpy as np
    _, w = attention(Q, K, V)
    assert np.all(w >= 0), 'weights must be non-negative'
    np.testing.assert_allclose(w.sum(axis=1), np.ones(4), atol=1e-09)

@test_case(points=None, hidden=False)
def test_scores_are_scaled(attention):
    import numpy as np
    Q = np.array([[2.0, 0.0]])
    K = np.array([[1.0, 0.0], [0.0, 0.0]])
    V = np.array([[1.0], [0.0]])
    _, w = attention(Q, K, V)
    np.testing.assert_allclose(w, [[0.80442, 0.19558]], atol=0.0001, err_msg='did you divide the scores by sqrt(d_k), with d_k = Q.shape[-1] = 2?')

