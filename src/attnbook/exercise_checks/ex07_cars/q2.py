from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.2, 0.4, 0.2]

@test_case(points=None, hidden=False)
def test_shape_and_a_batch_without_padding(masked_mean):
    import torch
    x = torch.arange(24, dtype=torch.float32).reshape(2, 4, 3)
    mask = torch.ones(2, 4, dtype=torch.bool)
    out = masked_mean(x, mask)
    assert isinstance(out, torch.Tensor), 'return a torch tensor'
    assert out.shape == (2, 3), f'expected (B, D) = (2, 3), got {tuple(out.shape)}'
    torch.testing.assert_close(out, x.mean(dim=1), msg=f'no padding: the mean over all T tokens of each row, expected {x.mean(dim=1).tolist()}, got {out.tolist()}')

@test_case(points=None, hidden=False)
def test_padding_is_left_out(masked_mean):
    import torch
    x = torch.tensor([[[1.0], [3.0], [100.0], [100.0]]])
    mask = torch.tensor([[True, True, False, False]])
    out = masked_mean(x, mask)
    torch.testing.assert_close(out, torch.tensor([[2.0]]), msg=f"the mean of the real tokens 1 and 3 is 2, got {out.flatten().tolist()}: leave the padded vectors out of the sum and divide by the number of real tokens of each row (the mask's sum), not by T")
    padded = torch.tensor([[[1.0], [3.0], [float('inf')], [float('nan')]]])
    out = masked_mean(padded, mask)
    torch.testing.assert_close(out, torch.tensor([[2.0]]), msg=f'padding holding inf and nan changed the mean of the real tokens 1 and 3 to {out.flatten().tolist()}: multiplying by a 0/1 mask keeps them (0 * inf and 0 * nan are nan); select the real tokens instead (masked_fill, torch.where)')

@test_case(points=None, hidden=False)
def test_pooling_house_rules(masked_mean):
    from attnbook.exercise_checks.grading import guarded
    import torch
    x = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]], [[0.0, 0.0], [2.0, 2.0], [4.0, 4.0]]])
    mask = torch.tensor([[True, True, False], [True, True, True]])
    out = guarded(masked_mean)(x, mask)
    want = torch.tensor([[2.0, 3.0], [2.0, 2.0]])
    torch.testing.assert_close(out, want, msg=f'expected {want.tolist()}, got {out.tolist()}')
    xt = x.transpose(1, 2).contiguous().transpose(1, 2)
    try:
        out = masked_mean(xt, mask)
    except RuntimeError as error:
        raise AssertionError(f'x made by a transpose (not contiguous in memory) raised RuntimeError: {error}; use .reshape or broadcasting, which work on any layout, not .view') from None
    torch.testing.assert_close(out, want, msg=f'the same x in a transposed layout: expected {want.tolist()}, got {out.tolist()}')

