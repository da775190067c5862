from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 4

@test_case(points=None, hidden=False)
def test_vector(scores_to_weights):
    import numpy as np
    w = scores_to_weights(np.array([1.0, 2.0, 3.0]))
    assert isinstance(w, np.ndarray), 'return a NumPy array'
    assert w.shape == (3,), f'expected shape (3,), got {w.shape}'
    np.testing.assert_allclose(w, [0.09003057, 0.24472847, 0.66524096], atol=1e-06)

@test_case(points=None, hidden=False)
def test_minus_infinity(scores_to_weights):
    import numpy as np
    w = scores_to_weights(np.array([0.5, -np.inf, 0.5]))
    np.testing.assert_allclose(w, [0.5, 0.0, 0.5], atol=1e-12)

