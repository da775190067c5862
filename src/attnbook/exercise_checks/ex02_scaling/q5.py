from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q5"
points = [0.2, 0.2]

@test_case(points=None, hidden=False)
def test_wide_vectors_saturate_without_scaling(mean_max_weight):
    import numpy as np

    def recipe(d_k, n_q, n_k, seed, scaled):
        draws = np.random.default_rng(seed)
        q, k = (draws.standard_normal((n_q, d_k)), draws.standard_normal((n_k, d_k)))
        s = q @ k.T / (np.sqrt(d_k) if scaled else 1.0)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return float((e / e.sum(axis=-1, keepdims=True)).max(axis=-1).mean())
    raw = mean_max_weight(512, 200, 16, 0, scaled=False)
    fair = mean_max_weight(512, 200, 16, 0, scaled=True)
    assert isinstance(raw, float) and isinstance(fair, float), 'return Python floats'
    assert raw > 0.9, f'd_k = 512 without scaling: each query should put almost all its weight on one key, got a mean largest weight of {raw:.3f}: are the raw scores left undivided?'
    assert fair < 0.6, f'd_k = 512 with scaling: the weights should stay spread out, got {fair:.3f}: divide the scores by sqrt(d_k) when scaled is true'
    for scaled in (True, False):
        want, got = (recipe(16, 5, 8, 3, scaled), mean_max_weight(16, 5, 8, 3, scaled))
        assert abs(got - want) < 1e-12, f'd_k = 16, 5 queries, 8 keys, seed 3, scaled = {scaled}: expected {want:.6f}, got {got:.6f}'

@test_case(points=None, hidden=False)
def test_draws_queries_then_keys(mean_max_weight):
    import numpy as np
    draws = np.random.default_rng(11)
    q, k = (draws.standard_normal((3, 2)), draws.standard_normal((4, 2)))
    s = q @ k.T / np.sqrt(2)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    want = float((e / e.sum(axis=-1, keepdims=True)).max(axis=-1).mean())
    got = mean_max_weight(2, 3, 4, 11, scaled=True)
    assert abs(got - want) < 1e-12, f"d_k = 2, 3 queries, 4 keys, seed 11: expected {want:.6f}, got {got:.6f}: draw the queries, then the keys, from np.random.default_rng(seed), and average each row's largest weight"

