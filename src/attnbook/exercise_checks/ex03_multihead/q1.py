from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [0, 0, 0, 0]

@test_case(points=None, hidden=False)
def test_split_shape(split_heads, x):
    import torch
    for n_head, d_k in [(3, 4), (4, 3), (6, 2)]:
        out = split_heads(x, n_head)
        assert isinstance(out, torch.Tensor), 'return a torch tensor'
        assert out.shape == (2, n_head, 5, d_k), f'with {n_head} heads expected shape (B, H, T, d_k) = (2, {n_head}, 5, {d_k}), got {tuple(out.shape)}'

@test_case(points=None, hidden=False)
def test_split_one_head(split_heads, x):
    import torch
    out = split_heads(x, 1)
    assert out.shape == (2, 1, 5, 12), f'one head: expected shape (2, 1, 5, 12), got {tuple(out.shape)}'
    assert torch.equal(out[:, 0], x), 'with one head, that head holds every feature of every token'

@test_case(points=None, hidden=False)
def test_split_keeps_tokens_apart(split_heads):
    import torch
    xs = torch.arange(12, dtype=torch.float32).reshape(1, 3, 4)
    out = split_heads(xs, 2)
    assert out.shape == (1, 2, 3, 2), f'expected (B, H, T, d_k) = (1, 2, 3, 2), got {tuple(out.shape)}'
    assert out[0, 1, 0].tolist() == [2.0, 3.0], f'head 1 of token 0 must hold features 2 and 3 of token 0, [2.0, 3.0], got {out[0, 1, 0].tolist()}: reshape to (B, T, H, d_k) first, then swap the T and H axes (transpose); a direct view as (B, H, T, d_k) mixes the tokens up'

@test_case(points=None, hidden=False)
def test_split_house_rules(split_heads):
    from attnbook.exercise_checks.grading import guarded
    import torch
    out = guarded(split_heads, libraries=('einops',))(torch.zeros(1, 2, 6), 2)
    assert tuple(out.shape) == (1, 2, 2, 3), f'expected (1, 2, 2, 3), got {tuple(out.shape)}'

