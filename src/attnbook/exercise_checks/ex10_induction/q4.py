from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_zero_head_small(zero_head):
    from attnbook.exercise_checks.grading import guarded
    zero_head = guarded(zero_head, names=('ablate_heads',), no_views=True)
    import torch
    z = torch.arange(12.0).view(1, 2, 6)
    out = zero_head(z, 1, 2)
    want = torch.tensor([[[0.0, 1, 0, 0, 4, 5], [6, 7, 0, 0, 10, 11]]])
    assert isinstance(out, torch.Tensor) and out.shape == z.shape, f'return a tensor of the shape of z, {tuple(z.shape)}'
    assert torch.equal(out, want), f'head 1 of width 2 is columns 2 and 3: expected {want.tolist()}, got {out.tolist()}' + ("; nothing was zeroed: a head's columns are on the last axis, whatever the rank of z: out[..., a:b]" if torch.equal(out, z) else '')
    assert torch.equal(z, torch.arange(12.0).view(1, 2, 6)), 'z itself changed: clone it and write the zeros into the copy'

@test_case(points=None, hidden=False)
def test_zero_head_in_a_layer(zero_head):
    import torch
    from attnbook.multihead import MultiHeadAttention
    torch.manual_seed(0)
    layer = MultiHeadAttention(8, 2)
    x = torch.randn(1, 5, 8)
    hook = layer.W_o.register_forward_pre_hook(lambda m, args: (zero_head(args[0].detach().requires_grad_(), 0, 4),))
    try:
        out, _ = layer(x, is_causal=True)
    except RuntimeError as err:
        if 'in-place' not in str(err):
            raise
        raise AssertionError('used in a pre-hook on W_o, on activations that require grad: your zero_head wrote into its input in place, which autograd refuses; clone z and write the zeros into the copy') from None
    finally:
        hook.remove()
    with torch.no_grad():
        layer.W_o.weight[:, :4] = 0.0
        want, _ = layer(x, is_causal=True)
    out = out.detach()
    worst = (out - want).abs().amax(-1)[0]
    t = int(worst.argmax())
    assert torch.allclose(out, want, atol=1e-06), f"used in a pre-hook on W_o of a layer of 2 heads of width 4 (5 positions), zero_head(z, 0, 4) must give the layer's output without head 0 (W_o's columns 0-3 zeroed): at position {t}, expected {[round(v, 3) for v in want[0, t].tolist()]}, got {[round(v, 3) for v in out[0, t].tolist()]}; largest difference {float(worst.max()):.3g}"
    from attnbook.exercise_checks.grading import grad_of
    z = torch.randn(1, 5, 8, generator=torch.Generator().manual_seed(1))
    try:
        _, (dz,) = grad_of(zero_head, z, 0, 4)
    except AssertionError:
        raise AssertionError("detached: no gradient reaches z from your zero_head's output (.detach(), .data, torch.no_grad() or torch.tensor(z) cut the autograd graph), so in a layer trained or attributed through this hook the other heads get no gradient either; clone z, which keeps the graph") from None
    keep = torch.ones(8)
    keep[:4] = 0.0
    assert torch.equal(dz, keep.expand(1, 5, 8)), f"z (1, 5, 8) requiring grad, head 0 of width 4: the gradient of your output's sum with respect to z should be 1 on the columns 4-7 you keep and 0 on head 0's columns 0-3; per column it is {[round(v, 3) for v in dz.mean((0, 1)).tolist()]}"

@test_case(points=None, hidden=False)
def test_zero_head_any_leading_shape(zero_head):
    import torch
    for shape in ((4, 6), (6,), (2, 1, 3, 6)):
        z = torch.arange(1.0, torch.Size(shape).numel() + 1.0).reshape(shape)
        try:
            out = zero_head(z, 2, 2)
        except (IndexError, RuntimeError) as err:
            raise AssertionError(f"z of shape {shape}, head 2 of width 2, raised {type(err).__name__}: {str(err).splitlines()[0]}; zero the last axis's columns whatever axes come first: index with z[..., a:b]") from None
        want = z.clone()
        want[..., 4:6] = 0.0
        if isinstance(out, torch.Tensor) and out.shape == z.shape and (not torch.equal(out, want)):
            zeroed = [col for col in range(6) if bool((out[..., col] == 0).all())]
            assert zeroed == [4, 5], f'z of shape {shape}, head 2 of width 2: expected the columns 4 and 5 zeroed (head * d_head up to (head + 1) * d_head, the end excluded), got the columns {zeroed} zeroed'
        assert isinstance(out, torch.Tensor) and torch.equal(out, want), f"z of shape {shape}: zero the last axis's columns 4 and 5 whatever axes come first (index with z[..., a:b], not z[:, :, a:b])"
    z = torch.arange(12.0, dtype=torch.float64).reshape(2, 6)
    out = zero_head(z, 1, 3)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64, f"z in float64 must give a copy in float64, got {getattr(out, 'dtype', type(out).__name__)}: clone z (or use torch.zeros_like(z)); torch.zeros(shape) or a .float() makes float32"
    assert torch.equal(out, torch.cat([z[:, :3], torch.zeros(2, 3, dtype=torch.float64)], dim=1)), f'z of shape (2, 6) in float64, head 1 of width 3: expected columns 3-5 zeroed, got {out.tolist()}'
    z = torch.arange(1.0, 13.0, dtype=torch.bfloat16).reshape(2, 6)
    out = zero_head(z, 0, 2)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16, f"z in bfloat16 must give a copy in bfloat16 (keep z's dtype), got {getattr(out, 'dtype', type(out).__name__)}: a mask or zeros made with torch.ones(...) or torch.zeros(...) are float32 and promote the result; clone z, or make the mask with dtype=z.dtype, device=z.device"
    z = torch.arange(24.0).reshape(2, 2, 6).transpose(0, 1)
    try:
        out = zero_head(z, 0, 3)
    except RuntimeError as error:
        raise AssertionError(f'z made by a transpose (not contiguous in memory; a clone keeps its layout) raised RuntimeError: {error}; index z[..., a:b], or flatten with .reshape, not .view') from None
    want = z.clone()
    want[..., :3] = 0.0
    assert isinstance(out, torch.Tensor) and torch.equal(out, want), f'z of shape (2, 2, 6) made by a transpose, head 0 of width 3: expected columns 0-2 zeroed, {want.tolist()}, got {(out.tolist() if isinstance(out, torch.Tensor) else out)}'

