from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_a_reproducible_number(dot_product_variance):
    import numpy as np

    def recipe(d_k, n, seed):
        draws = np.random.default_rng(seed)
        q, k = (draws.standard_normal((n, d_k)), draws.standard_normal((n, d_k)))
        return float(np.var((q * k).sum(axis=1)))

    def matches(got, want, n):
        return abs(got - want) <= 0.001 * want or abs(got - want * n / (n - 1)) <= 0.001 * want
    v = dot_product_variance(4, 1000, 0)
    assert np.ndim(v) == 0, f'return a single number, got something of shape {np.shape(v)}'
    assert float(v) > 0, f'a variance cannot be negative or zero here, got {v}'
    assert dot_product_variance(4, 1000, 0) == v, 'the same seed must give the same answer'
    want = recipe(4, 1000, 0)
    assert matches(v, want, 1000), f'd_k = 4, 1000 samples, seed 0: expected {want:.4f}, got {float(v):.4f}: the variance of the 1000 dot products q_i . k_i, all the q drawn first, then all the k'

@test_case(points=None, hidden=False)
def test_matched_pairs_at_a_small_size(dot_product_variance):
    import numpy as np

    def recipe(d_k, n, seed):
        draws = np.random.default_rng(seed)
        q, k = (draws.standard_normal((n, d_k)), draws.standard_normal((n, d_k)))
        return float(np.var((q * k).sum(axis=1)))

    def matches(got, want, n):
        return abs(got - want) <= 0.001 * want or abs(got - want * n / (n - 1)) <= 0.001 * want
    want, got = (recipe(3, 50, 6), dot_product_variance(3, 50, 6))
    assert matches(got, want, 50), f'd_k = 3, 50 samples, seed 6: expected {want:.4f}, got {got:.4f}: one dot product per pair, q_i . k_i (np.sum(q * k, axis=1)), not every query with every key (q @ k.T holds n * n products, and at 20,000 samples 3.2 GB)'
    v = dot_product_variance(1, 2000, 1)
    assert 0.85 < v < 1.15, f'for d_k = 1 the variance should be close to 1, got {v:.3f}'

@test_case(points=None, hidden=False)
def test_width_sixteen(dot_product_variance):
    import numpy as np

    def recipe(d_k, n, seed):
        draws = np.random.default_rng(seed)
        q, k = (draws.standard_normal((n, d_k)), draws.standard_normal((n, d_k)))
        return float(np.var((q * k).sum(axis=1)))

    def matches(got, want, n):
        return abs(got - want) <= 0.001 * want or abs(got - want * n / (n - 1)) <= 0.001 * want
    v, want = (dot_product_variance(16, 2000, 0), recipe(16, 2000, 0))
    assert matches(v, want, 2000), f'for d_k = 16 the variance should be {want:.3f} (close to 16), got {v:.3f}: is it the variance of the dot products q . k (one number per pair, a sum over the width), not of the entries or their standard deviation?'

@test_case(points=None, hidden=False)
def test_own_generator_and_house_rules(dot_product_variance):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np

    def recipe(d_k, n, seed):
        draws = np.random.default_rng(seed)
        q, k = (draws.standard_normal((n, d_k)), draws.standard_normal((n, d_k)))
        return float(np.var((q * k).sum(axis=1)))

    def matches(got, want, n):
        return abs(got - want) <= 0.001 * want or abs(got - want * n / (n - 1)) <= 0.001 * want
    v = guarded(dot_product_variance, libraries=('torch', 'scipy'), loops=False)(8, 300, 5)
    assert np.ndim(v) == 0, f'return a single number, got something of shape {np.shape(v)}'
    want = recipe(8, 300, 5)
    assert matches(v, want, 300), f'd_k = 8, 300 samples, seed 5: expected {want:.4f}, got {float(v):.4f}'

