from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.2, 0.3]

@test_case(points=None, hidden=False)
def test_quantize_shapes(quantize_keys, k):
    from attnbook.exercise_checks.grading import guarded
    quantize_keys = guarded(quantize_keys, new_object=False)
    import torch
    out = quantize_keys(k, 4, 4)
    assert isinstance(out, tuple) and len(out) == 4, 'return four tensors: codes, scale, low, residual'
    codes, scale, low, residual = out
    assert codes.dtype == torch.uint8, f'codes must be torch.uint8, got {codes.dtype}'
    assert codes.shape == (1, 2, 8, 8) and residual.shape == (1, 2, 2, 8), f'10 tokens in groups of 4: two complete groups, codes (1, 2, 8, 8), and the last 10 % 4 = 2 tokens stay in the residual, (1, 2, 2, 8); got codes {tuple(codes.shape)} and residual {tuple(residual.shape)}: the incomplete last group is not quantised'
    assert scale.shape == low.shape == (1, 2, 2, 8), f'one scale and one minimum per group and channel: (1, 2, 2, 8), got {tuple(scale.shape)} and {tuple(low.shape)}; a last axis of 1 means one per token (the reduction ran over the channels, not over the G tokens of a group)'
    assert scale.dtype == low.dtype == residual.dtype == torch.float32, f"scale, low and residual keep the keys' dtype (float32 here), got {scale.dtype}, {low.dtype}, {residual.dtype}"
    assert torch.equal(residual, k[:, :, 8:]), f'the residual holds the last 2 tokens as they are, k[:, :, 8:], got another tensor (its first row {residual[0, 0, 0, :3].tolist()}, expected {k[0, 0, 8, :3].tolist()}, first three numbers)'
    back = codes.float() * scale.repeat_interleave(4, dim=2) + low.repeat_interleave(4, dim=2)
    err = float((back - k[:, :, :8]).abs().max())
    half = float(scale.max()) / 2
    assert err <= half + 1e-05, f"codes * scale + low should give the first 8 tokens back within half a step (at most {half:.4f} here), but they differ by up to {err:.4f}: each code is round((x - low) / scale) with low the group's minimum and scale = (max - min) / (2^bits - 1), per group and channel"
    two = quantize_keys(torch.cat([k, 2 * k]), 4, 4)
    assert torch.allclose(two[1][0], scale[0], rtol=1e-05, atol=1e-06) and torch.allclose(two[1][1], 2 * scale[0], rtol=1e-05, atol=1e-06), "a batch of two sequences, the second twice the first: each sequence gets its own scales (the second's twice the first's); reduce over the G tokens of a group only, never over the batch"
    k64 = torch.cat([k, 2 * k]).double().transpose(1, 2).contiguous().transpose(1, 2)
    try:
        out = quantize_keys(k64, 4, 4)
    except RuntimeError as error:
        raise AssertionError(f'keys laid out as the course makes them, x.view(B, T, H, d).transpose(1, 2), are not contiguous, and your function raised {error}: use reshape (or contiguous()), not view') from None
    dtypes = [str(t.dtype) for t in out[1:]]
    assert dtypes == ['torch.float64'] * 3, f'float64 keys give float64 scale, low and residual (the hidden tests use float64 keys too); got {dtypes}: do not convert the keys (k.float() makes them float32)'
    codes, scale, low, residual = quantize_keys(k, 4, 5)
    assert codes.shape == (1, 2, 10, 8) and residual.shape == (1, 2, 0, 8), f'10 tokens in groups of 5: both groups complete, codes (1, 2, 10, 8), and no residual, (1, 2, 0, 8); got codes {tuple(codes.shape)} and residual {tuple(residual.shape)}' + (': k[:, :, -(T % G):] is k[:, :, 0:], all of k, when G divides T' if residual.shape[2] == 10 else '')

@test_case(points=None, hidden=False)
def test_quantize_small_example(quantize_keys):
    import torch
    x = torch.tensor([[0.0, -1.0], [1.8, 1.0], [3.0, 0.2], [10.0, 4.0], [16.0, 4.3], [13.5, 7.0], [100.0, -50.0]]).view(1, 1, 7, 2)
    codes, scale, low, residual = quantize_keys(x, 2, 3)
    assert torch.equal(residual.flatten(), torch.tensor([100.0, -50.0])), f'the last T % G = 1 token, token 6, stays in full precision: residual [100, -50], got {residual.flatten().tolist()}: the groups start at token 0 and the residual is at the end'
    assert torch.allclose(low.flatten(), torch.tensor([0.0, -1.0, 10.0, 4.0])), f'the minima of group 0 (tokens 0-2) are 0 and -1, of group 1 (tokens 3-5) 10 and 4, low = [[0, -1], [10, 4]]; got {low.flatten().tolist()}: a group is G consecutive tokens'
    assert torch.allclose(scale.flatten(), torch.tensor([1.0, 2 / 3, 2.0, 1.0])), f'2 bits give 2^2 - 1 = 3 steps between minimum and maximum: scales 3/3, 2/3, 6/3, 3/3; got {scale.flatten().tolist()}'
    assert codes[0, 0, :, 0].tolist() == [0, 2, 3, 0, 3, 2], f'channel 0 holds 0, 1.8, 3 and 10, 16, 13.5: codes round((x - min) / s) = 0, 2, 3 and 0, 3, 2; got {codes[0, 0, :, 0].tolist()}: round to the nearest code, not down'

