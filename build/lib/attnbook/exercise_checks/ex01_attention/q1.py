from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [0, 0, 0]

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

@test_case(points=None, hidden=False)
def test_each_row_of_a_matrix(scores_to_weights):
    import numpy as np
    w = scores_to_weights(np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]]))
    assert np.shape(w) == (2, 3), f'expected the shape of the scores, (2, 3), got {np.shape(w)}'
    assert np.allclose(w.sum(axis=-1), 1.0), f'rows sum to {w.sum(axis=-1)}, not 1: is the softmax over the last axis (the keys), with keepdims=True so that each row is divided by its own sum?'
    np.testing.assert_allclose(w[1], [1 / 3, 1 / 3, 1 / 3], atol=1e-09, err_msg='equal scores in a row give equal weights')

