from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [0, 0]

@test_case(points=None, hidden=False)
def test_table_shape_and_range(sinusoidal_encoding):
    import numpy as np
    pe = sinusoidal_encoding(10, 16)
    assert isinstance(pe, np.ndarray), 'return a NumPy array'
    assert pe.shape == (10, 16), f'expected (seq_len, d_model) = (10, 16), got {pe.shape}'
    assert np.all(np.abs(pe) <= 1 + 1e-12), 'sines and cosines lie in [-1, 1]'

@test_case(points=None, hidden=False)
def test_position_zero(sinusoidal_encoding):
    import numpy as np
    pe = sinusoidal_encoding(3, 8)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1, 0, 1, 0, 1], atol=1e-12, err_msg='at position 0 every sine is 0 and every cosine is 1')

