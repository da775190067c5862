from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.08, 0.08, 0.08, 0.08, 0.08]

@test_case(points=None, hidden=False)
def test_temperature_one(softmax_with_temperature):
    import numpy as np
    w = softmax_with_temperature(np.array([1.0, 2.0, 3.0]), 1.0)
    assert isinstance(w, np.ndarray) and w.shape == (3,), f'return an array of the shape of the scores, (3,), got {type(w).__name__} of shape {np.shape(w)}'
    np.testing.assert_allclose(w, [0.09003057, 0.24472847, 0.66524096], atol=1e-06, err_msg='at temperature 1 this is the plain softmax of [1, 2, 3]')

@test_case(points=None, hidden=False)
def test_rows_sum_to_one(softmax_with_temperature):
    import numpy as np

    def reference(s, tau):
        z = np.asarray(s, dtype=np.float64) / tau
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    s = np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 5.0, -5.0]])
    w = softmax_with_temperature(s, 2.0)
    assert np.shape(w) == (2, 4), f'expected shape (2, 4), got {np.shape(w)}'
    assert np.all(w >= 0), 'weights cannot be negative'
    np.testing.assert_allclose(w.sum(axis=-1), [1.0, 1.0], atol=1e-09, err_msg='each row (one query) must sum to 1 at any temperature')
    np.testing.assert_allclose(w, reference(s, 2.0), atol=1e-09, err_msg='two rows at temperature 2: each row its own softmax of scores / 2')

@test_case(points=None, hidden=False)
def test_temperature_divides_the_scores(softmax_with_temperature):
    import numpy as np

    def reference(s, tau):
        z = np.asarray(s, dtype=np.float64) / tau
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    w = softmax_with_temperature(np.array([0.0, 2.0]), 2.0)
    np.testing.assert_allclose(w, [0.26894142, 0.73105858], atol=1e-06, err_msg='at temperature 2 the scores [0, 2] become [0, 1]: divide the scores by the temperature, before the softmax')
    s = np.array([[0.5, -1.0, 2.0], [3.0, 3.0, 0.0]])
    for tau in (0.25, 0.7, 3.0, 40.0):
        np.testing.assert_allclose(softmax_with_temperature(s, tau), reference(s, tau), atol=1e-09, err_msg=f'temperature {tau}: softmax(scores / {tau}) for every temperature')

@test_case(points=None, hidden=False)
def test_rejects_zero(softmax_with_temperature):
    import numpy as np
    np.testing.assert_allclose(softmax_with_temperature(np.array([1.0, 3.0]), 2.0), [0.26894142, 0.73105858], atol=1e-06, err_msg='a valid temperature (2) must still give the softmax of scores / 2')
    try:
        softmax_with_temperature(np.array([1.0, 2.0]), 0.0)
    except ValueError:
        return
    raise AssertionError('temperature = 0 should raise a ValueError (it divides the scores by 0)')

@test_case(points=None, hidden=False)
def test_softmax_house_rules(softmax_with_temperature):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np

    def reference(s, tau):
        z = np.asarray(s, dtype=np.float64) / tau
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    s = np.array([[4.0, 1.0], [2.0, 2.0]])
    w = guarded(softmax_with_temperature, libraries=('torch', 'scipy'))(s, 0.5)
    np.testing.assert_allclose(w, reference(s, 0.5), atol=1e-09, err_msg='temperature 0.5: softmax(scores / 0.5)')

