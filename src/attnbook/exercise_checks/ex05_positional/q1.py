from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.2, 0.1]

@test_case(points=None, hidden=False)
def test_rates_shape(angle_rates):
    import numpy as np
    r = angle_rates(8)
    assert isinstance(r, np.ndarray), 'return a NumPy array'
    assert r.shape == (4,), f'd_model = 8 has 4 pairs of columns, so 4 rates; got shape {r.shape}'
    assert np.isclose(r[0], 1.0), f'the first pair (i = 0) has rate 1, got {r[0]}'
    np.testing.assert_allclose(r, [1.0, 0.1, 0.01, 0.001], rtol=1e-09, err_msg=f'd_model = 8: expected the rates 10000 ** (-2i / 8) = [1, 0.1, 0.01, 0.001], got {r.tolist()}')

@test_case(points=None, hidden=False)
def test_rates_get_slower(angle_rates):
    import numpy as np
    r = angle_rates(16)
    assert np.all(r > 0) and np.all(r <= 1), 'every rate lies in (0, 1]'
    assert np.all(np.diff(r) < 0), 'each pair turns more slowly than the one before it'
    want = 10000.0 ** (-np.arange(0, 16, 2) / 16)
    np.testing.assert_allclose(r, want, rtol=1e-09, err_msg=f'd_model = 16: expected the rates 10000 ** (-2i / 16), from 1 down to {want[-1]:.6g}, got {np.asarray(r).tolist()}')

@test_case(points=None, hidden=False)
def test_the_second_pair_of_four(angle_rates):
    import numpy as np
    np.testing.assert_allclose(angle_rates(4), [1.0, 0.01], rtol=1e-09, err_msg=f'd_model = 4: pair i = 1 turns at 10000 ** (-2i / d_model) = 10000 ** (-2 / 4) = 0.01, got {np.asarray(angle_rates(4)).tolist()}; is the exponent 2i / d_model?')
    np.testing.assert_allclose(angle_rates(10), [1.0, 0.1585, 0.02512, 0.003981, 0.000631], rtol=0.001, err_msg=f'd_model = 10: the rates 10000 ** (-2i / 10) for i = 0 .. 4, got {np.asarray(angle_rates(10)).tolist()}')

@test_case(points=None, hidden=False)
def test_rates_float64_and_house_rules(angle_rates):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    r = guarded(angle_rates, libraries=('torch',))(6)
    assert r.dtype == np.float64, f"work in float64 (NumPy's default): the hidden tests compare at 1e-9, got {r.dtype}"
    assert r.shape == (3,), f'd_model = 6 has 3 pairs, so 3 rates; got shape {r.shape}'
    np.testing.assert_allclose(r, 10000.0 ** (-np.arange(0, 6, 2) / 6), rtol=1e-09, err_msg=f'd_model = 6: expected the rates 10000 ** (-2i / 6), got {r.tolist()}')
    odd = angle_rates(7)
    assert np.shape(odd) == (4,), f'd_model = 7 has ceil(7 / 2) = 4 pairs (the last one a single column), so 4 rates; got shape {np.shape(odd)}: 2 * np.arange(d_model // 2) drops the last pair of an odd width, np.arange(0, d_model, 2) keeps it'
    np.testing.assert_allclose(odd, 10000.0 ** (-np.arange(0, 7, 2) / 7), rtol=1e-09, err_msg='d_model = 7: the rates 10000 ** (-2i / 7) for i = 0 .. 3')

