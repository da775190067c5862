from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_vector(scores_to_weights):
    import numpy as np
    w = scores_to_weights(np.array([1.0, 2.0, 3.0]))
    assert isinstance(w, np.ndarray), f'return a NumPy array, got {type(w).__name__}'
    assert w.shape == (3,), f'expected shape (3,), got {w.shape}'
    assert w.dtype == np.float64, f"return float64 weights, got {w.dtype}: compute in float64 (NumPy's default); float32 is off by about 1e-8 and the hidden tests compare at 1e-9"
    np.testing.assert_allclose(w, [0.09003057, 0.24472847, 0.66524096], atol=1e-06, err_msg='the softmax of [1, 2, 3] is [0.0900, 0.2447, 0.6652]: exp of each score, divided by the sum of the three')

@test_case(points=None, hidden=False)
def test_minus_infinity(scores_to_weights):
    import numpy as np
    w = scores_to_weights(np.array([0.5, -np.inf, 0.5]))
    np.testing.assert_allclose(w, [0.5, 0.0, 0.5], atol=1e-12, err_msg='scores [0.5, -inf, 0.5] give weights [0.5, 0, 0.5]: exp(-inf) is exactly 0, and the two equal scores share the weight')

@test_case(points=None, hidden=False)
def test_each_row_of_a_matrix(scores_to_weights):
    import numpy as np
    w = scores_to_weights(np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]]))
    assert np.shape(w) == (2, 3), f'expected the shape of the scores, (2, 3), got {np.shape(w)}'
    assert np.allclose(w.sum(axis=-1), 1.0), f'rows sum to {w.sum(axis=-1)}, not 1: is the softmax over the last axis (the keys), with keepdims=True so that each row is divided by its own sum?'
    np.testing.assert_allclose(w[1], [1 / 3, 1 / 3, 1 / 3], atol=1e-09, err_msg='equal scores in a row give equal weights')
    s = np.arange(24.0).reshape(2, 3, 4) % 5
    w = scores_to_weights(s)
    assert np.shape(w) == (2, 3, 4), f'a batch of scores (2, 3, 4) gives weights (2, 3, 4), got {np.shape(w)}'
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(w, e / e.sum(axis=-1, keepdims=True), atol=1e-09, err_msg='a batch (2, 3, 4): every row of every matrix is a softmax over its own last axis; use axis=-1 and keepdims=True (transposes work only for one or two axes)')

@test_case(points=None, hidden=False)
def test_extreme_rows_and_house_rules(scores_to_weights):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    softmax = guarded(scores_to_weights, libraries=('torch', 'scipy'))
    s = np.array([[-np.inf, 0.0, 2.0], [900.0, 901.0, -900.0]])
    with np.errstate(all='ignore'):
        w = softmax(s)
    assert np.all(np.isfinite(w)), f'inf or NaN in {w.tolist()}: a row that starts with -inf, or scores near 900, need each row shifted by its own maximum (not by its first score, its mean or the largest score of the whole array) before np.exp'
    assert w[0, 0] == 0.0, 'a score of -inf must get a weight of exactly 0'
    np.testing.assert_allclose(w.sum(axis=-1), [1.0, 1.0], atol=1e-12, err_msg='each row must sum to 1, whatever its scale')

