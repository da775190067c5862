from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

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

