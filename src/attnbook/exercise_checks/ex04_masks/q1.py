from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_causal_type_and_shape(causal_mask):
    import torch
    m = causal_mask(5)
    assert isinstance(m, torch.Tensor), 'return a torch tensor'
    assert m.dtype == torch.bool, f'the mask must be boolean (True = may attend), got {m.dtype}'
    assert m.shape == (5, 5), f'expected shape (5, 5), got {tuple(m.shape)}'
    want = [[j <= i for j in range(5)] for i in range(5)]
    assert m.tolist() == want, f'T = 5: expected True on and below the diagonal (query i reads keys 0..i), {want}, got {m.tolist()}'

@test_case(points=None, hidden=False)
def test_causal_number_of_allowed_pairs(causal_mask):
    for T in (1, 4, 7):
        n = int(causal_mask(T).sum())
        assert n == T * (T + 1) // 2, f'T={T}: {n} pairs may attend, but a causal mask allows T(T+1)/2'

@test_case(points=None, hidden=False)
def test_causal_first_and_last_query(causal_mask):
    m = causal_mask(4)
    assert m[0].tolist() == [True, False, False, False], f'query 0 may attend to key 0 only, but its row is {m[0].tolist()}: the allowed pairs are on and below the diagonal (the lower triangle, tril), True = may attend'
    assert m[3].tolist() == [True] * 4, f'the last query may attend to every key, but its row is {m[3].tolist()}'

@test_case(points=None, hidden=False)
def test_causal_house_rules(causal_mask):
    from attnbook.exercise_checks.grading import guarded
    m = guarded(causal_mask)(3)
    assert tuple(m.shape) == (3, 3), f'expected (3, 3), got {tuple(m.shape)}'
    want = [[True, False, False], [True, True, False], [True, True, True]]
    assert m.tolist() == want, f'T = 3: expected the lower triangle {want}, got {m.tolist()}'

