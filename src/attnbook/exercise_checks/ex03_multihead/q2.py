from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [0, 0, 0, 0]

@test_case(points=None, hidden=False)
def test_merge_shape(merge_heads):
    import torch
    out = merge_heads(torch.zeros(2, 3, 5, 4))
    assert isinstance(out, torch.Tensor), 'return a torch tensor'
    assert out.shape == (2, 5, 12), f'expected shape (B, T, H * d_k) = (2, 5, 12), got {tuple(out.shape)}'

@test_case(points=None, hidden=False)
def test_merge_one_head(merge_heads, x):
    import torch
    assert torch.equal(merge_heads(x[:, None]), x), 'with one head, merging just drops the head axis'

@test_case(points=None, hidden=False)
def test_merge_puts_heads_side_by_side(merge_heads):
    import torch
    heads = torch.arange(12, dtype=torch.float32).reshape(1, 2, 3, 2)
    out = merge_heads(heads)
    assert out.shape == (1, 3, 4), f'expected (B, T, H * d_k) = (1, 3, 4), got {tuple(out.shape)}'
    assert out[0, 2].tolist() == [4.0, 5.0, 10.0, 11.0], f"token 2 must hold head 0's features of token 2 then head 1's, [4.0, 5.0, 10.0, 11.0], got {out[0, 2].tolist()}: swap the H and T axes back (transpose) before the reshape"

@test_case(points=None, hidden=False)
def test_merge_house_rules(merge_heads):
    from attnbook.exercise_checks.grading import guarded
    import torch
    out = guarded(merge_heads, libraries=('einops',))(torch.zeros(1, 2, 3, 2))
    assert tuple(out.shape) == (1, 3, 4), f'expected (1, 3, 4), got {tuple(out.shape)}'

