from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [0, 0, 0, 0]

@test_case(points=None, hidden=False)
def test_a_reproducible_number(dot_product_variance):
    import numpy as np
    v = dot_product_variance(4, 1000, 0)
    assert np.ndim(v) == 0, f'return a single number, got something of shape {np.shape(v)}'
    assert float(v) > 0, 'a variance cannot be negative or zero here'
    assert dot_product_variance(4, 1000, 0) == v, 'the same seed must give the same answer'

@test_case(points=None, hidden=False)
def test_width_one(dot_product_variance):
    v = dot_product_variance(1, 20000, 1)
    assert 0.9 < v < 1.1, f'for d_k = 1 the variance should be close to 1, got {v:.3f}'

@test_case(points=None, hidden=False)
def test_width_sixteen(dot_product_variance):
    v = dot_product_variance(16, 4000, 0)
    assert 13 < v < 19, f'for d_k = 16 the variance should be close to 16, got {v:.3f}: is it the variance of the dot products q . k (one number per pair, a sum over the width), not of the entries or their standard deviation?'

@test_case(points=None, hidden=False)
def test_own_generator_and_house_rules(dot_product_variance):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    v = guarded(dot_product_variance, libraries=('torch', 'scipy'), loops=False)(8, 300, 5)
    assert np.ndim(v) == 0, f'return a single number, got something of shape {np.shape(v)}'

