from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.2, 0.2]

@test_case(points=None, hidden=False)
def test_position_one_turns_by_one_radian(rotary, angles):
    import numpy as np
    try:
        angles_ok = np.allclose(angles(3, 4), [[0.0, 0.0], [1.0, 0.01], [2.0, 0.02]], rtol=1e-09, atol=1e-12)
    except Exception:
        angles_ok = False
    assert angles_ok, "this check runs your angles (question 2, with your angle_rates of question 1), which does not give angles(3, 4) = [[0, 0], [1, 0.01], [2, 0.02]] yet: fix questions 1 and 2 first (grading runs this question with the course's angles)"
    import numpy as np
    y = rotary(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    assert np.shape(y) == (3, 2), f'expected the shape of x, (3, 2), got {np.shape(y)}'
    np.testing.assert_allclose(y[0], [1.0, 0.0], atol=1e-12, err_msg='position 0 is not rotated')
    np.testing.assert_allclose(y[1], [np.cos(1.0), np.sin(1.0)], atol=1e-12, err_msg='position 1, d = 2: (1, 0) turns by +1 radian to (cos 1, sin 1); check the signs: y_even = x_even cos - x_odd sin, y_odd = x_even sin + x_odd cos')
    np.testing.assert_allclose(y[2], [-np.sin(2.0), np.cos(2.0)], atol=1e-12, err_msg='position 2 turns by 2 radians')

@test_case(points=None, hidden=False)
def test_pairs_are_neighbouring_columns(rotary, angles):
    import numpy as np
    try:
        angles_ok = np.allclose(angles(3, 4), [[0.0, 0.0], [1.0, 0.01], [2.0, 0.02]], rtol=1e-09, atol=1e-12)
    except Exception:
        angles_ok = False
    assert angles_ok, "this check runs your angles (question 2, with your angle_rates of question 1), which does not give angles(3, 4) = [[0, 0], [1, 0.01], [2, 0.02]] yet: fix questions 1 and 2 first (grading runs this question with the course's angles)"
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    x = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    y = guarded(rotary, libraries=('torch',))(x)
    np.testing.assert_allclose(y[1], [-np.sin(1.0), np.cos(1.0), 0.0, 0.0], atol=1e-12, err_msg='d = 4, position 1: pair 0 is columns (0, 1), neighbours, not (0, 2) (the half-split layout of some libraries): x = (0, 1, 0, 0) turns by 1 radian to (-sin 1, cos 1, 0, 0)')
    x = np.zeros((6, 4))
    x[:, 2] = 1.0
    y = rotary(x)
    np.testing.assert_allclose(y[5], [0.0, 0.0, np.cos(0.05), np.sin(0.05)], atol=1e-12, err_msg='d = 4, position 5: pair 1 turns at its own rate, 10000 ** (-2 / 4) = 0.01, so (1, 0) in columns (2, 3) turns by 5 * 0.01 = 0.05 radians; use the angles of the full width d (your angles(T, d))')

