from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3

@test_case(points=None, hidden=False)
def test_angles_shape(angles):
    import numpy as np
    a = angles(5, 8)
    assert isinstance(a, np.ndarray), 'return a NumPy array'
    assert a.shape == (5, 4), f'expected (seq_len, number of pairs) = (5, 4), got {a.shape}'

@test_case(points=None, hidden=False)
def test_first_pair_turns_one_radian_per_position(angles):
    import numpy as np
    a = angles(6, 8)
    np.testing.assert_allclose(np.diff(a[:, 0]), np.ones(5), atol=1e-12, err_msg='pair 0 has rate 1: its angle grows by 1 per position')

