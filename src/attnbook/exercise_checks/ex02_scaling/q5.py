from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = [0, 0]

@test_case(points=None, hidden=False)
def test_wide_vectors_saturate_without_scaling(mean_max_weight):
    raw = mean_max_weight(512, 200, 16, 0, scaled=False)
    fair = mean_max_weight(512, 200, 16, 0, scaled=True)
    assert isinstance(raw, float) and isinstance(fair, float), 'return Python floats'
    assert raw > 0.9, f'd_k = 512 without scaling: each query should put almost all its weight on one key, got a mean largest weight of {raw:.3f}: are the raw scores left undivided?'
    assert fair < 0.6, f'd_k = 512 with scaling: the weights should stay spread out, got {fair:.3f}: divide the scores by sqrt(d_k) when scaled is true'

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

