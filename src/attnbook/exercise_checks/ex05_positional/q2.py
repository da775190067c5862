from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.1, 0.1, 0.2, 0.1]

@test_case(points=None, hidden=False)
def test_angles_shape(angles, angle_rates):
    import numpy as np
    try:
        rates_ok = np.allclose(angle_rates(4), [1.0, 0.01], rtol=1e-09, atol=0)
    except Exception:
        rates_ok = False
    assert rates_ok, "this check runs your angle_rates (question 1), which does not give angle_rates(4) = [1, 0.01] yet: fix question 1 first (grading runs this question with the course's angle_rates)"
    import numpy as np
    a = angles(5, 8)
    assert isinstance(a, np.ndarray), 'return a NumPy array'
    assert a.shape == (5, 4), f'expected (seq_len, number of pairs) = (5, 4), got {a.shape}'
    np.testing.assert_allclose(a[1], [1.0, 0.1, 0.01, 0.001], rtol=1e-09, atol=1e-12, err_msg=f'seq_len = 5, d_model = 8, position 1: expected its angles to be the rates [1, 0.1, 0.01, 0.001], got {a[1].tolist()}')
    np.testing.assert_allclose(a[4], [4.0, 0.4, 0.04, 0.004], rtol=1e-09, atol=1e-12, err_msg=f'seq_len = 5, d_model = 8, position 4: expected 4 times the rates, [4, 0.4, 0.04, 0.004], got {a[4].tolist()}')

@test_case(points=None, hidden=False)
def test_first_pair_turns_one_radian_per_position(angles, angle_rates):
    import numpy as np
    try:
        rates_ok = np.allclose(angle_rates(4), [1.0, 0.01], rtol=1e-09, atol=0)
    except Exception:
        rates_ok = False
    assert rates_ok, "this check runs your angle_rates (question 1), which does not give angle_rates(4) = [1, 0.01] yet: fix question 1 first (grading runs this question with the course's angle_rates)"
    import numpy as np
    a = angles(6, 8)
    np.testing.assert_allclose(np.diff(a[:, 0]), np.ones(5), atol=1e-12, err_msg='pair 0 has rate 1: its angle grows by 1 per position')

@test_case(points=None, hidden=False)
def test_positions_count_from_zero(angles, angle_rates):
    import numpy as np
    try:
        rates_ok = np.allclose(angle_rates(4), [1.0, 0.01], rtol=1e-09, atol=0)
    except Exception:
        rates_ok = False
    assert rates_ok, "this check runs your angle_rates (question 1), which does not give angle_rates(4) = [1, 0.01] yet: fix question 1 first (grading runs this question with the course's angle_rates)"
    import numpy as np
    a = angles(3, 4)
    np.testing.assert_allclose(a[0], [0.0, 0.0], atol=1e-12, err_msg='position 0 has angle 0 in every pair: do positions start at 0?')
    np.testing.assert_allclose(a[2], [2.0, 0.02], rtol=1e-09, err_msg='position 2, d_model = 4: angles 2 * 1 and 2 * 0.01')

@test_case(points=None, hidden=False)
def test_angles_float64_and_house_rules(angles, angle_rates):
    import numpy as np
    try:
        rates_ok = np.allclose(angle_rates(4), [1.0, 0.01], rtol=1e-09, atol=0)
    except Exception:
        rates_ok = False
    assert rates_ok, "this check runs your angle_rates (question 1), which does not give angle_rates(4) = [1, 0.01] yet: fix question 1 first (grading runs this question with the course's angle_rates)"
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    a = guarded(angles, libraries=('torch',), loops=False)(4, 5)
    assert a.dtype == np.float64, f'work in float64: the hidden tests compare at 1e-9, got {a.dtype}'
    assert a.shape == (4, 3), f'd_model = 5 has ceil(5 / 2) = 3 pairs: expected (4, 3), got {a.shape}'
    want = 3 * 10000.0 ** (-np.arange(0, 5, 2) / 5)
    np.testing.assert_allclose(a[3], want, rtol=1e-09, atol=1e-12, err_msg=f'd_model = 5, position 3: expected 3 * 10000 ** (-2i / 5) = {want.tolist()}, got {a[3].tolist()}')

