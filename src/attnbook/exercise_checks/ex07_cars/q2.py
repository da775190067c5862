from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 5

@test_case(points=None, hidden=False)
def test_shape_and_a_batch_without_padding(masked_mean):
    import torch
    x = torch.arange(24, dtype=torch.float32).reshape(2, 4, 3)
    mask = torch.ones(2, 4, dtype=torch.bool)
    out = masked_mean(x, mask)
    assert isinstance(out, torch.Tensor), 'return a torch tensor'
    assert out.shape == (2, 3), f'expected (B, D) = (2, 3), got {tuple(out.shape)}'
    torch.testing.assert_close(out, x.mean(dim=1))

