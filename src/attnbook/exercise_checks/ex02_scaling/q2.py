from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [0, 0, 0, 0, 0]

@test_case(points=None, hidden=False)
def test_temperature_one(softmax_with_temperature):
    import numpy as np
    w = softmax_with_temperature(np.array([1.0, 2.0, 3.0]), 1.0)
    assert isinstance(w, np.ndarray) and w.shape == (3,), 'return an array of the same shape'
    np.testing.assert_allclose(w, [0.09003057, 0.24472847, 0.66524096], atol=1e-06)

@test_case(points=None, hidden=False)
def test_rows_sum_to_one(softmax_with_temperature):
    import numpy as np
    w = softmax_with_temperature(np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 5.0, -5.0]]), 2.0)
    assert np.shape(w) == (2, 4), f'expected shape (2, 4), got {np.shape(w)}'
    assert np.all(w >= 0), 'weights cannot be negative'
    np.testing.assert_allclose(w.sum(axis=-1), [1.0, 1.0], atol=1e-09, err_msg='each row (one query) must sum to 1 at any temperature')

@test_case(points=None, hidden=False)
def test_temperature_divides_the_scores(softmax_with_temperature):
    import numpy as np
    w = softmax_with_temperature(np.array([0.0, 2.0]), 2.0)
    np.testing.assert_allclose(w, [0.26894142, 0.73105858], atol=1e-06, err_msg='at temperature 2 the scores [0, 2] become [0, 1]: divide the scores by the temperature, before the softmax')

@test_case(points=None, hidden=False)
def test_rejects_zero(softmax_with_temperature):
    import numpy as np
    try:
        softmax_with_temperature(np.array([1.0, 2.0]), 0.0)
    except ValueError:
        return
    raise AssertionError('temperature = 0 should raise a ValueError')

@test_case(points=None, hidden=False)
def test_softmax_house_rules(softmax_with_temperature):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    w = guarded(softmax_with_temperature, libraries=('torch', 'scipy'))(np.array([[4.0, 1.0], [2.0, 2.0]]), 0.5)
    np.testing.assert_allclose(np.sum(w, axis=-1), [1.0, 1.0], atol=1e-09)

