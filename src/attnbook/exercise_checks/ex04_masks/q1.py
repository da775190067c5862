from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_causal_type_and_shape(causal_mask, VARIANT):
    import torch

    def build(T, n):
        return causal_mask(T) if VARIANT['task'] == 'causal' else causal_mask(T, n)

    def expected(T, n):
        i = torch.arange(T)[:, None]
        if VARIANT['task'] == 'cache':
            return torch.arange(n + T)[None, :] <= i + n
        j = torch.arange(T)[None, :]
        return (j <= i) & (j > i - n) if VARIANT['task'] == 'window' else j <= i

    def call(T, n):
        return f'causal_mask({T})' if VARIANT['task'] == 'causal' else f'causal_mask({T}, {n})'
    rule = {'causal': 'query i reads keys 0..i', 'window': 'query i reads keys i - window + 1 .. i (itself and the window - 1 before it)', 'cache': 'query i, at position past + i, reads keys 0 .. past + i'}[VARIANT['task']]
    m = build(5, 2)
    assert isinstance(m, torch.Tensor), 'return a torch tensor'
    assert m.dtype == torch.bool, f'the mask must be boolean (True = may attend), got {m.dtype}'
    want = expected(5, 2)
    assert m.shape == want.shape, f'expected shape {tuple(want.shape)}, got {tuple(m.shape)}'
    assert m.tolist() == want.tolist(), f'{call(5, 2)}: expected {want.tolist()} ({rule}), got {m.tolist()}'

@test_case(points=None, hidden=False)
def test_causal_number_of_allowed_pairs(causal_mask, VARIANT):
    import torch

    def build(T, n):
        return causal_mask(T) if VARIANT['task'] == 'causal' else causal_mask(T, n)

    def expected(T, n):
        i = torch.arange(T)[:, None]
        if VARIANT['task'] == 'cache':
            return torch.arange(n + T)[None, :] <= i + n
        j = torch.arange(T)[None, :]
        return (j <= i) & (j > i - n) if VARIANT['task'] == 'window' else j <= i

    def call(T, n):
        return f'causal_mask({T})' if VARIANT['task'] == 'causal' else f'causal_mask({T}, {n})'
    for T, n in ((1, 1), (4, 2), (7, 3)):
        got, want = (int(build(T, n).sum()), int(expected(T, n).sum()))
        assert got == want, f"{call(T, n)}: {got} pairs may attend, but your variant's mask allows {want}"

@test_case(points=None, hidden=False)
def test_causal_first_and_last_query(causal_mask, VARIANT):
    import torch

    def build(T, n):
        return causal_mask(T) if VARIANT['task'] == 'causal' else causal_mask(T, n)

    def expected(T, n):
        i = torch.arange(T)[:, None]
        if VARIANT['task'] == 'cache':
            return torch.arange(n + T)[None, :] <= i + n
        j = torch.arange(T)[None, :]
        return (j <= i) & (j > i - n) if VARIANT['task'] == 'window' else j <= i

    def call(T, n):
        return f'causal_mask({T})' if VARIANT['task'] == 'causal' else f'causal_mask({T}, {n})'
    rule = {'causal': 'query i reads keys 0..i', 'window': 'query i reads keys i - window + 1 .. i (itself and the window - 1 before it)', 'cache': 'query i, at position past + i, reads keys 0 .. past + i'}[VARIANT['task']]
    m, want = (build(4, 2), expected(4, 2))
    assert m[0].tolist() == want[0].tolist(), f"{call(4, 2)}: query 0's row should be {want[0].tolist()}, but it is {m[0].tolist()}: {rule}, True = may attend"
    assert m[3].tolist() == want[3].tolist(), f"{call(4, 2)}: the last query's row should be {want[3].tolist()}, but it is {m[3].tolist()}: {rule}"

@test_case(points=None, hidden=False)
def test_causal_house_rules(causal_mask, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import torch
    causal_mask = guarded(causal_mask)

    def build(T, n):
        return causal_mask(T) if VARIANT['task'] == 'causal' else causal_mask(T, n)

    def expected(T, n):
        i = torch.arange(T)[:, None]
        if VARIANT['task'] == 'cache':
            return torch.arange(n + T)[None, :] <= i + n
        j = torch.arange(T)[None, :]
        return (j <= i) & (j > i - n) if VARIANT['task'] == 'window' else j <= i

    def call(T, n):
        return f'causal_mask({T})' if VARIANT['task'] == 'causal' else f'causal_mask({T}, {n})'
    m, want = (build(3, 1), expected(3, 1))
    assert tuple(m.shape) == tuple(want.shape), f'expected {tuple(want.shape)}, got {tuple(m.shape)}'
    assert m.tolist() == want.tolist(), f'{call(3, 1)}: expected {want.tolist()}, got {m.tolist()}'

