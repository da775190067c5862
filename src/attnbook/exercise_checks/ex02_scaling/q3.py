from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_vjp_by_hand(softmax_vjp):
    import numpy as np
    got = softmax_vjp(np.array([0.5, 0.25, 0.25]), np.array([1.0, 0.0, 0.0]))
    assert np.shape(got) == (3,), f'expected the shape of the weights, (3,), got {np.shape(got)}'
    np.testing.assert_allclose(got, [0.25, -0.125, -0.125], atol=1e-12, err_msg='a = [0.5, 0.25, 0.25], g = [1, 0, 0]: a . g = 0.5, so a * (g - a . g) = [0.25, -0.125, -0.125]; check the sign (g minus a . g) and that you multiply by a')

@test_case(points=None, hidden=False)
def test_vjp_rows_sum_to_zero(softmax_vjp):
    import numpy as np
    rng = np.random.default_rng(1)
    s, g = (rng.normal(size=(3, 5)), rng.normal(size=(3, 5)))
    a = np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
    got = softmax_vjp(a, g)
    assert np.shape(got) == (3, 5), f'expected shape (3, 5), got {np.shape(got)}'
    np.testing.assert_allclose(got.sum(axis=-1), np.zeros(3), atol=1e-12, err_msg='each row of the gradient must sum to 0 (adding a constant to a row of scores changes nothing): a . g is one number per row, np.sum(a * g, axis=-1, keepdims=True)')
    np.testing.assert_allclose(got, a * (g - (a * g).sum(axis=-1, keepdims=True)), atol=1e-12, err_msg='three rows of five: a * (g - a . g), a . g computed row by row')

@test_case(points=None, hidden=False)
def test_unscaled_gradients_vanish(score_gradient_norm):
    import numpy as np

    def recipe(d_k, n_keys, n_queries, seed, scaled):
        draws = np.random.default_rng(seed)
        q, k = (draws.standard_normal((n_queries, d_k)), draws.standard_normal((n_keys, d_k)))
        up = draws.standard_normal((n_queries, n_keys))
        s = q @ k.T / (np.sqrt(d_k) if scaled else 1.0)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        a = e / e.sum(axis=-1, keepdims=True)
        return float(np.linalg.norm(a * (up - (a * up).sum(-1, keepdims=True)), axis=-1).mean())
    raw = score_gradient_norm(1024, 16, 200, 0, scaled=False)
    fair = score_gradient_norm(1024, 16, 200, 0, scaled=True)
    assert isinstance(raw, float) and isinstance(fair, float), 'return Python floats'
    assert raw < 0.25 * fair, f'd_k = 1024: without scaling the gradient reaching the scores should be far smaller than with it, got {raw:.4f} vs {fair:.4f}: are the raw scores left undivided when scaled is false?'
    for scaled in (True, False):
        want, got = (recipe(8, 5, 3, 1, scaled), score_gradient_norm(8, 5, 3, 1, scaled))
        assert abs(got - want) <= 1e-09 * want + 1e-12, f'd_k = 8, 5 keys, 3 queries, seed 1, scaled = {scaled}: expected {want:.6f}, got {got:.6f}'

@test_case(points=None, hidden=False)
def test_gradient_house_rules(softmax_vjp, score_gradient_norm):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    a, g = (np.array([[0.2, 0.3, 0.5]]), np.array([[1.0, -1.0, 2.0]]))
    got = guarded(softmax_vjp, libraries=('torch', 'scipy'))(a, g)
    assert np.shape(got) == (1, 3), f'expected the shape of the weights, (1, 3), got {np.shape(got)}'
    got = guarded(score_gradient_norm, libraries=('torch', 'scipy'))(4, 3, 2, 0, True)
    draws = np.random.default_rng(0)
    q, k, up = (draws.standard_normal((2, 4)), draws.standard_normal((3, 4)), draws.standard_normal((2, 3)))
    e = np.exp(q @ k.T / 2.0 - (q @ k.T / 2.0).max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    want = float(np.linalg.norm(w * (up - (w * up).sum(-1, keepdims=True)), axis=-1).mean())
    assert abs(got - want) <= 1e-09 * want, f'd_k = 4, 3 keys, 2 queries, seed 0, scaled: expected {want:.6f}, got {got:.6f}: draw from one np.random.default_rng(seed) the queries, then the keys, then the upstream gradients, in that order'

