from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q5"
points = [0.2, 0.2]

@test_case(points=None, hidden=False)
def test_wide_vectors_saturate_without_scaling(mean_max_weight, VARIANT):
    import numpy as np
    task = VARIANT['task']

    def recipe(d_k, n_q, n_k, seed, scaled):
        draws = np.random.default_rng(seed)
        q, k = (draws.standard_normal((n_q, d_k)), draws.standard_normal((n_k, d_k)))
        if task == 'init':
            q, k = (q / np.sqrt(3), k / np.sqrt(3))
        s = q @ k.T / ((d_k if task == 'dk' else np.sqrt(d_k)) if scaled else 1.0)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return float((e / e.sum(axis=-1, keepdims=True)).max(axis=-1).mean())
    rule = {'sqrt': 'unit-variance draws, scores / sqrt(d_k)', 'dk': 'unit-variance draws, scores / d_k', 'init': 'draws / sqrt(3), scores / sqrt(d_k)'}[task]
    raw = mean_max_weight(512, 200, 16, 0, scaled=False)
    fair = mean_max_weight(512, 200, 16, 0, scaled=True)
    assert isinstance(raw, float) and isinstance(fair, float), 'return Python floats'
    peaked, spread = {'sqrt': (0.9, 0.6), 'dk': (0.9, 0.1), 'init': (0.8, 0.2)}[task]
    assert raw > peaked, f'd_k = 512 without scaling ({rule}): each query should put most of its weight on one key (above {peaked}), got a mean largest weight of {raw:.3f}: are the raw scores left undivided?'
    assert fair < spread, f'd_k = 512 with scaling ({rule}): the weights should stay spread out (below {spread}), got {fair:.3f}: divide the scores as your task says when scaled is true'
    for scaled in (True, False):
        want, got = (recipe(16, 5, 8, 3, scaled), mean_max_weight(16, 5, 8, 3, scaled))
        assert abs(got - want) < 1e-12, f'd_k = 16, 5 queries, 8 keys, seed 3, scaled = {scaled} ({rule}): expected {want:.6f}, got {got:.6f}'

@test_case(points=None, hidden=False)
def test_draws_queries_then_keys(mean_max_weight, VARIANT):
    import numpy as np
    task = VARIANT['task']

    def recipe(d_k, n_q, n_k, seed, scaled):
        draws = np.random.default_rng(seed)
        q, k = (draws.standard_normal((n_q, d_k)), draws.standard_normal((n_k, d_k)))
        if task == 'init':
            q, k = (q / np.sqrt(3), k / np.sqrt(3))
        s = q @ k.T / ((d_k if task == 'dk' else np.sqrt(d_k)) if scaled else 1.0)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return float((e / e.sum(axis=-1, keepdims=True)).max(axis=-1).mean())
    rule = {'sqrt': 'unit-variance draws, scores / sqrt(d_k)', 'dk': 'unit-variance draws, scores / d_k', 'init': 'draws / sqrt(3), scores / sqrt(d_k)'}[task]
    seed = VARIANT['seed']
    want, got = (recipe(2, 3, 4, seed, True), mean_max_weight(2, 3, 4, seed, scaled=True))
    assert abs(got - want) < 1e-12, f"d_k = 2, 3 queries, 4 keys, seed {seed}, scaled ({rule}): expected {want:.6f}, got {got:.6f}: draw the queries, then the keys, from np.random.default_rng(seed), and average each row's largest weight"

