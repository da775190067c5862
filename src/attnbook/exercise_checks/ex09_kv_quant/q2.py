from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [0]

@test_case(points=None, hidden=False)
def test_dequantize_small_example(dequantize):
    import torch
    codes = torch.tensor([0, 85, 255], dtype=torch.uint8).view(1, 1, 3, 1)
    out = dequantize(codes, torch.tensor([3.0 / 255]).view(1, 1, 1, 1), torch.tensor([1.0]).view(1, 1, 1, 1))
    assert out.dtype == torch.float32, f'the result takes the dtype of scale, float32; got {out.dtype}'
    assert torch.allclose(out.flatten(), torch.tensor([1.0, 2.0, 4.0])), f'codes 0, 85, 255 with minimum 1 and scale 3/255 are 1, 2, 4; got {out.flatten().tolist()}: is the minimum added back?'

