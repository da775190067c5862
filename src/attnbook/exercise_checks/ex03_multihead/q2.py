from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_merge_shape(merge_heads):
    import torch
    heads = torch.arange(120.0).reshape(2, 3, 5, 4)
    out = merge_heads(heads)
    assert isinstance(out, torch.Tensor), f'return a torch tensor, got {type(out).__name__}'
    assert out.shape == (2, 5, 12), f'expected shape (B, T, H * d_k) = (2, 5, 12), got {tuple(out.shape)}'
    assert torch.equal(out, heads.transpose(1, 2).reshape(2, 5, 12)), "token t of the merged tensor holds head 0's features of token t, then head 1's, then head 2's"

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
    heads = torch.arange(12.0).reshape(1, 2, 3, 2)
    out = guarded(merge_heads, libraries=('einops',))(heads)
    assert tuple(out.shape) == (1, 3, 4), f'expected (1, 3, 4), got {tuple(out.shape)}'
    assert out[0, 0].tolist() == [0.0, 1.0, 6.0, 7.0], f"token 0 holds head 0's features of token 0, then head 1's, [0, 1, 6, 7], got {out[0, 0].tolist()}"

