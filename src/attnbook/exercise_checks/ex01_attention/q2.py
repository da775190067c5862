from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 6

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

