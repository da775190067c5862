from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [0, 0]

@test_case(points=None, hidden=False)
def test_quantize_shapes(quantize_keys, k):
    import torch
    out = quantize_keys(k, 8)
    assert isinstance(out, tuple) and len(out) == 3, 'return three tensors: codes, scale, low'
    codes, scale, low = out
    assert codes.shape == (1, 2, 6, 4), f'codes must have the shape of k, (1, 2, 6, 4), got {tuple(codes.shape)}'
    assert codes.dtype == torch.uint8, f'codes must be torch.uint8, got {codes.dtype}'
    assert scale.shape == low.shape == (1, 2, 1, 4), f'one scale and one minimum per channel: expected (1, 2, 1, 4), got {tuple(scale.shape)} and {tuple(low.shape)}; a shape (1, 2, 6, 1) means one per token (the reduction ran over the channels)'

@test_case(points=None, hidden=False)
def test_quantize_small_example(quantize_keys):
    import torch
    x = torch.tensor([[1.0, 100.0], [2.0, 300.0], [4.0, 200.0]]).view(1, 1, 3, 2)
    codes, scale, low = quantize_keys(x, 8)
    assert torch.allclose(low.flatten(), torch.tensor([1.0, 100.0])), f'the minima of the two channels are 1 and 100, got {low.flatten().tolist()}'
    assert torch.allclose(scale.flatten(), torch.tensor([3.0, 200.0]) / 255), f'8 bits give 2^8 - 1 = 255 steps between minimum and maximum: scales 3/255 and 200/255, got {scale.flatten().tolist()}'
    assert codes[0, 0, :, 0].tolist() == [0, 85, 255], f'channel 0 holds 1, 2, 4: codes round((x - 1) / (3/255)) = 0, 85, 255; got {codes[0, 0, :, 0].tolist()}'

