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
def test_rates_get_slower(angle_rates, VARIANT):
    import numpy as np
    task = VARIANT['task']
    mine = VARIANT.get('base', VARIANT.get('stretch'))

    def rates(d, x):
        return angle_rates(d) if task == 'fixed' else angle_rates(d, x)

    def want(d, x):
        i = np.arange((d + 1) // 2)
        if task == 'base':
            return float(x) ** (-2 * i / d)
        slower = float(x) ** (-i / max(len(i) - 1, 1)) if task == 'stretch' else 1.0
        return 10000.0 ** (-2 * i / d) * slower

    def call(d, x):
        return f'angle_rates({d})' if task == 'fixed' else f'angle_rates({d}, {x})'
    rule = {'fixed': '10000 ** (-2i / d_model)', 'base': 'base ** (-2i / d_model)', 'stretch': '10000 ** (-2i / d_model) * stretch ** (-i / (n - 1)), n = ceil(d_model / 2) pairs'}[task]
    r = rates(16, mine)
    assert np.all(r > 0) and np.all(r <= 1), f'{call(16, mine)}: every rate lies in (0, 1]'
    assert np.all(np.diff(r) < 0), f'{call(16, mine)}: each pair turns more slowly than the one before it'
    np.testing.assert_allclose(r, want(16, mine), rtol=1e-09, err_msg=f'{call(16, mine)}: expected the rates {rule}, from 1 down to {want(16, mine)[-1]:.6g}, got {np.asarray(r).tolist()}')

@test_case(points=None, hidden=False)
def test_the_second_pair_of_four(angle_rates, VARIANT):
    import numpy as np
    task = VARIANT['task']
    mine = VARIANT.get('base', VARIANT.get('stretch'))

    def rates(d, x):
        return angle_rates(d) if task == 'fixed' else angle_rates(d, x)

    def want(d, x):
        i = np.arange((d + 1) // 2)
        if task == 'base':
            return float(x) ** (-2 * i / d)
        slower = float(x) ** (-i / max(len(i) - 1, 1)) if task == 'stretch' else 1.0
        return 10000.0 ** (-2 * i / d) * slower

    def call(d, x):
        return f'angle_rates({d})' if task == 'fixed' else f'angle_rates({d}, {x})'
    rule = {'fixed': '10000 ** (-2i / d_model)', 'base': 'base ** (-2i / d_model)', 'stretch': '10000 ** (-2i / d_model) * stretch ** (-i / (n - 1)), n = ceil(d_model / 2) pairs'}[task]
    np.testing.assert_allclose(rates(4, mine), want(4, mine), rtol=1e-09, err_msg=f'{call(4, mine)}: pair i = 1 turns at {rule} = {want(4, mine)[1]:.6g}, got {np.asarray(rates(4, mine)).tolist()}; is the exponent 2i / d_model?')
    d = VARIANT['width']
    np.testing.assert_allclose(rates(d, mine), want(d, mine), rtol=1e-09, atol=1e-12, err_msg=f'{call(d, mine)}: the rates {rule} for i = 0 .. {(d - 1) // 2}, the last {want(d, mine)[-1]:.10g}')

@test_case(points=None, hidden=False)
def test_rates_float64_and_house_rules(angle_rates, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    task = VARIANT['task']
    mine = VARIANT.get('base', VARIANT.get('stretch'))

    def rates(d, x):
        return angle_rates(d) if task == 'fixed' else angle_rates(d, x)

    def want(d, x):
        i = np.arange((d + 1) // 2)
        if task == 'base':
            return float(x) ** (-2 * i / d)
        slower = float(x) ** (-i / max(len(i) - 1, 1)) if task == 'stretch' else 1.0
        return 10000.0 ** (-2 * i / d) * slower

    def call(d, x):
        return f'angle_rates({d})' if task == 'fixed' else f'angle_rates({d}, {x})'
    rule = {'fixed': '10000 ** (-2i / d_model)', 'base': 'base ** (-2i / d_model)', 'stretch': '10000 ** (-2i / d_model) * stretch ** (-i / (n - 1)), n = ceil(d_model / 2) pairs'}[task]
    angle_rates = guarded(angle_rates, libraries=('torch',))
    r = rates(6, mine)
    assert r.dtype == np.float64, f"work in float64 (NumPy's default): the hidden tests compare at 1e-9, got {r.dtype}"
    assert r.shape == (3,), f'd_model = 6 has 3 pairs, so 3 rates; got shape {r.shape}'
    np.testing.assert_allclose(r, want(6, mine), rtol=1e-09, err_msg=f'{call(6, mine)}: expected the rates {rule}, got {r.tolist()}')
    odd = rates(7, mine)
    assert np.shape(odd) == (4,), f'd_model = 7 has ceil(7 / 2) = 4 pairs (the last one a single column), so 4 rates; got shape {np.shape(odd)}: 2 * np.arange(d_model // 2) drops the last pair of an odd width, np.arange(0, d_model, 2) keeps it'
    np.testing.assert_allclose(odd, want(7, mine), rtol=1e-09, err_msg=f'{call(7, mine)}: the rates {rule} for i = 0 .. 3')

