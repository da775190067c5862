from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.1, 0.1, 0.3]

@test_case(points=None, hidden=False)
def test_table_shape_and_range(sinusoidal_encoding, angles):
    import numpy as np
    try:
        angles_ok = np.allclose(angles(3, 4), [[0.0, 0.0], [1.0, 0.01], [2.0, 0.02]], rtol=1e-09, atol=1e-12)
    except Exception:
        angles_ok = False
    assert angles_ok, "this check runs your angles (question 2, with your angle_rates of question 1), which does not give angles(3, 4) = [[0, 0], [1, 0.01], [2, 0.02]] yet: fix questions 1 and 2 first (grading runs this question with the course's angles)"
    import numpy as np
    pe = sinusoidal_encoding(10, 16)
    assert isinstance(pe, np.ndarray), 'return a NumPy array'
    assert pe.shape == (10, 16), f'expected (seq_len, d_model) = (10, 16), got {pe.shape}'
    assert np.all(np.abs(pe) <= 1 + 1e-12), 'sines and cosines lie in [-1, 1]'
    rates = 10000.0 ** (-np.arange(0, 16, 2) / 16)
    want = np.stack([np.sin(9 * rates), np.cos(9 * rates)], axis=-1).reshape(16)
    np.testing.assert_allclose(pe[9], want, rtol=0, atol=1e-09, err_msg=f'seq_len = 10, d_model = 16, position 9: expected sin(9 omega_i) in column 2i and cos(9 omega_i) in column 2i + 1, {np.round(want, 4).tolist()}, got {np.round(pe[9], 4).tolist()}')

@test_case(points=None, hidden=False)
def test_position_zero(sinusoidal_encoding, angles):
    import numpy as np
    try:
        angles_ok = np.allclose(angles(3, 4), [[0.0, 0.0], [1.0, 0.01], [2.0, 0.02]], rtol=1e-09, atol=1e-12)
    except Exception:
        angles_ok = False
    assert angles_ok, "this check runs your angles (question 2, with your angle_rates of question 1), which does not give angles(3, 4) = [[0, 0], [1, 0.01], [2, 0.02]] yet: fix questions 1 and 2 first (grading runs this question with the course's angles)"
    import numpy as np
    pe = sinusoidal_encoding(3, 8)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1, 0, 1, 0, 1], atol=1e-12, err_msg=f'at position 0 every sine is 0 and every cosine is 1, interleaved (sine in the even columns, cosine in the odd ones): expected [0, 1, 0, 1, ...], got {pe[0].tolist()}')

@test_case(points=None, hidden=False)
def test_position_one_float64_and_house_rules(sinusoidal_encoding, angles):
    import numpy as np
    try:
        angles_ok = np.allclose(angles(3, 4), [[0.0, 0.0], [1.0, 0.01], [2.0, 0.02]], rtol=1e-09, atol=1e-12)
    except Exception:
        angles_ok = False
    assert angles_ok, "this check runs your angles (question 2, with your angle_rates of question 1), which does not give angles(3, 4) = [[0, 0], [1, 0.01], [2, 0.02]] yet: fix questions 1 and 2 first (grading runs this question with the course's angles)"
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    table = guarded(sinusoidal_encoding, libraries=('torch',), separate_results=True)
    pe = table(3, 4)
    assert pe.dtype == np.float64, f"build the table in float64 (NumPy's default), got {pe.dtype}: the hidden tests compare at 1e-9, and a float32 table (what chapter 5's package returns for model weights) is off by about 1e-7"
    np.testing.assert_allclose(pe[1], [np.sin(1.0), np.cos(1.0), np.sin(0.01), np.cos(0.01)], rtol=0, atol=1e-12, err_msg='position 1, d_model = 4: columns (0, 1) turn at rate 1 and columns (2, 3) at rate 0.01 (one rate per *pair* of columns, sine then cosine)')
    table(3, 4)
    wide = table(3, 8)
    assert wide.shape == (3, 8), f'sinusoidal_encoding(3, 8) after (3, 4) gave shape {wide.shape}: each call must answer for its own sizes (a table kept between calls?)'

