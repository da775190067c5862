from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_zero_head_small(zero_head, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    zero_head = guarded(zero_head, names=('ablate_heads',), no_views=True)
    import torch
    mean = VARIANT['task'] == 'mean'

    def ablated(z, head, d_head):
        want = z.clone()
        cols = slice(head * d_head, (head + 1) * d_head)
        want[..., cols] = z[..., cols].mean(0) if mean else 0.0
        return want

    def same(out, want):
        if not isinstance(out, torch.Tensor) or out.shape != want.shape:
            return False
        if not mean:
            return torch.equal(out, want)
        tol = 0.01 if want.dtype in (torch.bfloat16, torch.float16) else 1e-06
        return bool(((out.double() - want.double()).abs() <= tol * (1 + want.double().abs())).all())
    z = torch.arange(24.0).view(2, 2, 6) if mean else torch.arange(12.0).view(1, 2, 6)
    keep = z.clone()
    try:
        out = zero_head(z, 1, 2)
    except (RuntimeError, ValueError, IndexError) as err:
        heads = z.shape[-1] // 2
        msg = f'z of shape {tuple(z.shape)} (its last axis {heads} heads of width 2), head 1: your function raised {type(err).__name__}: {str(err).splitlines()[0]}' + (f"; the number of heads is z.shape[-1] // d_head, {heads} here, not a fixed number: or index the head's columns directly, z[..., head * d_head : (head + 1) * d_head]" if 'shape' in str(err) and 'invalid' in str(err) else '')
        raise AssertionError(msg) from None
    want = ablated(keep, 1, 2)
    msg = f'return a tensor of the shape of z, {tuple(z.shape)}'
    assert isinstance(out, torch.Tensor) and out.shape == z.shape, msg
    how = 'their mean over the batch (dim 0) at each position' if mean else '0'
    hint = "; nothing was changed: a head's columns are on the last axis, whatever the rank of z: out[..., a:b]" if torch.equal(out, keep) else ''
    zeroed = keep.clone()
    zeroed[..., 2:4] = 0.0
    if mean and torch.equal(out, zeroed):
        hint = '; you zeroed them (zero ablation): your variant writes their mean over the batch there'
    elif mean and (not hint) and isinstance(out, torch.Tensor) and (out.shape == z.shape) and (not torch.equal(out, want)):
        mine = out[..., 2:4].double()
        for name, dim in (('the batch and the positions together', (0, 1)), ('the positions (dim 1), not the batch', 1), ("the head's own two columns (dim -1)", -1), ('every axis (.mean() with no dim: one number for the whole head)', (0, 1, 2))):
            if torch.allclose(mine, keep[..., 2:4].double().mean(dim, keepdim=True).expand_as(mine)):
                hint = f'; yours are their mean over {name}: take it over the batch only (dim 0), one mean per position'
                break
    if not hint and isinstance(out, torch.Tensor) and (out.shape == z.shape) and (not torch.equal(out, want)):
        changed = [col for col in range(6) if not torch.equal(out[..., col], keep[..., col])]
        if changed and changed != [2, 3]:
            hint = f"; yours changes the columns {changed}: head 1's are 2 and 3, head * d_head up to (head + 1) * d_head, the end of a slice excluded"
    msg = f'head 1 of width 2 is columns 2 and 3, set to {how}: expected {want.tolist()}, got {out.tolist()}{hint}'
    assert torch.equal(out, want), msg
    msg = 'z itself changed: clone it and write into the copy'
    assert torch.equal(z, keep), msg
    d_head, seed = (VARIANT['d_head'], VARIANT['seed'])
    head = seed % 4
    z = torch.randn(3, 5, 4 * d_head, generator=torch.Generator().manual_seed(seed))
    out, want = (zero_head(z, head, d_head), ablated(z, head, d_head))
    cols = f'{head * d_head}-{(head + 1) * d_head - 1}'
    got = out[0, 0].tolist() if isinstance(out, torch.Tensor) and out.shape == z.shape else out
    msg = f'your example, z = torch.randn(3, 5, {4 * d_head}) drawn with seed {seed}, head {head} of width {d_head} (columns {cols}): expected sequence 0, position 0 to read {[round(v, 4) for v in want[0, 0].tolist()]}, got {(got if not isinstance(got, list) else [round(v, 4) for v in got])}'
    assert same(out, want), msg

@test_case(points=None, hidden=False)
def test_zero_head_in_a_layer(zero_head, VARIANT):
    import torch
    from attnbook.multihead import MultiHeadAttention
    mean = VARIANT['task'] == 'mean'
    torch.manual_seed(0)
    layer = MultiHeadAttention(8, 2)
    B = 3 if mean else 1
    x = torch.randn(B, 5, 8)
    hook = layer.W_o.register_forward_pre_hook(lambda m, args: (zero_head(args[0].detach().requires_grad_(), 0, 4),))
    try:
        out, _ = layer(x, is_causal=True)
    except RuntimeError as err:
        if 'shape' in str(err) and 'invalid' in str(err):
            msg = f"used in a pre-hook on W_o of a layer of 2 heads of width 4, zero_head(z, 0, 4) on z of shape ({B}, 5, 8) raised RuntimeError: {str(err).splitlines()[0]}; the number of heads is z.shape[-1] // d_head, 2 here, not a fixed number: or index the head's columns directly, z[..., head * d_head : (head + 1) * d_head]"
            raise AssertionError(msg) from None
        if 'in-place' not in str(err):
            raise
        msg = 'used in a pre-hook on W_o, on activations that require grad: your zero_head wrote into its input in place, which autograd refuses; clone z and write into the copy'
        raise AssertionError(msg) from None
    finally:
        hook.remove()

    def written(module, args):
        z = args[0].clone()
        z[..., :4] = args[0][..., :4].mean(0)
        return (z,)
    with torch.no_grad():
        if mean:
            handle = layer.W_o.register_forward_pre_hook(written)
            try:
                want, _ = layer(x, is_causal=True)
            finally:
                handle.remove()
        else:
            layer.W_o.weight[:, :4] = 0.0
            want, _ = layer(x, is_causal=True)
    out = out.detach()
    worst = (out - want).abs().amax(-1)
    b, t = divmod(int(worst.argmax()), 5)
    what = "with head 0's inputs to W_o (columns 0-3) replaced by their mean over the 3 sequences" if mean else "without head 0 (W_o's columns 0-3 zeroed)"
    msg = f"used in a pre-hook on W_o of a layer of 2 heads of width 4 ({B} x 5 positions), zero_head(z, 0, 4) must give the layer's output {what}: at sequence {b}, position {t}, expected {[round(v, 3) for v in want[b, t].tolist()]}, got {[round(v, 3) for v in out[b, t].tolist()]}; largest difference {float(worst.max()):.3g}"
    if not torch.allclose(out, want, atol=1e-06):
        probe = torch.arange(1.0, 8.0 * B + 1.0).reshape(B, 8)
        try:
            result = zero_head(probe, 0, 4)
            changed = [col for col in range(8) if not torch.equal(result[:, col], probe[:, col])]
        except Exception:
            changed = [0, 1, 2, 3]
        if changed != [0, 1, 2, 3]:
            msg += f'; on a z of shape ({B}, 8) yours changes the columns {changed} for head 0 of width 4: expected 0-3, head * d_head up to (head + 1) * d_head, with the d_head passed in'
    assert torch.allclose(out, want, atol=1e-06), msg
    from attnbook.exercise_checks.grading import grad_of
    z = torch.randn(B, 5, 8, generator=torch.Generator().manual_seed(1))
    try:
        _, (dz,) = grad_of(zero_head, z, 0, 4)
    except AssertionError:
        msg = "detached: no gradient reaches z from your zero_head's output (.detach(), .data, torch.no_grad() or torch.tensor(z) cut the autograd graph), so in a layer trained or attributed through this hook the other heads get no gradient either; clone z, which keeps the graph"
        raise AssertionError(msg) from None
    keep = torch.ones(8)
    if not mean:
        keep[:4] = 0.0
    should = "1 on every column: the columns you keep pass it back as it is, and head 0's mean passes 1/3 of each sequence's back to each of the 3" if mean else "1 on the columns 4-7 you keep and 0 on head 0's columns 0-3"
    msg = f"z ({B}, 5, 8) requiring grad, head 0 of width 4: the gradient of your output's sum with respect to z should be {should}; per column it is {[round(v, 3) for v in dz.mean((0, 1)).tolist()]}"
    detached_mean = mean and isinstance(dz, torch.Tensor) and (dz.shape == (B, 5, 8)) and torch.allclose(dz[..., :4], torch.zeros(1)) and torch.allclose(dz[..., 4:], torch.ones(1))
    if detached_mean:
        msg += ": 0 on head 0's columns, so the mean you write there is detached (.detach(), .data or torch.no_grad()); compute it from z itself, which keeps the graph"
    assert isinstance(dz, torch.Tensor) and torch.allclose(dz, keep.expand(B, 5, 8), atol=1e-06), msg

@test_case(points=None, hidden=False)
def test_zero_head_any_leading_shape(zero_head, VARIANT):
    import torch
    mean = VARIANT['task'] == 'mean'

    def ablated(z, head, d_head):
        want = z.clone()
        cols = slice(head * d_head, (head + 1) * d_head)
        want[..., cols] = z[..., cols].mean(0) if mean else 0.0
        return want

    def same(out, want):
        if not isinstance(out, torch.Tensor) or out.shape != want.shape:
            return False
        if not mean:
            return torch.equal(out, want)
        tol = 0.01 if want.dtype in (torch.bfloat16, torch.float16) else 1e-06
        return bool(((out.double() - want.double()).abs() <= tol * (1 + want.double().abs())).all())
    what = "replace the last axis's columns 4 and 5 by their mean over the first axis, the batch" if mean else "zero the last axis's columns 4 and 5"
    shapes = ((4, 6), (3, 2, 6), (2, 1, 3, 6)) if mean else ((4, 6), (6,), (2, 1, 3, 6))
    for shape in shapes:
        z = torch.arange(1.0, torch.Size(shape).numel() + 1.0).reshape(shape)
        keep = z.clone()
        try:
            out = zero_head(z, 2, 2)
        except (IndexError, RuntimeError, ValueError) as err:
            fixed = 'shape' in str(err) and 'invalid' in str(err)
            msg = f'z of shape {shape}, head 2 of width 2, raised {type(err).__name__}: {str(err).splitlines()[0]}; ' + (f'here the last axis holds 6 // 2 = 3 heads: the number of heads is z.shape[-1] // d_head, not a fixed number; or {what} directly, z[..., a:b]' if fixed else f'{what} whatever axes come first: index with z[..., a:b] (z may have any number of axes: do not unpack z.shape into three names)')
            raise AssertionError(msg) from None
        msg = f'z of shape {shape}: z itself changed: clone it and write into the copy'
        assert torch.equal(z, keep), msg
        want = ablated(z, 2, 2)
        if isinstance(out, torch.Tensor) and out.shape == z.shape and (not torch.equal(out, want)):
            changed = [col for col in range(6) if not torch.equal(out[..., col], z[..., col])]
            msg = f"z of shape {shape}, head 2 of width 2: expected the columns 4 and 5 {('replaced' if mean else 'zeroed')} (head * d_head up to (head + 1) * d_head, the end excluded), got the columns {changed} changed" + ("; nothing changed: check the slice's ends, head * d_head and (head + 1) * d_head, and if your function catches an error and returns z (or its copy), let the error show" if not changed else '')
            assert changed == [4, 5], msg
        if mean and isinstance(out, torch.Tensor) and (out.shape == z.shape) and (not torch.equal(out, want)):
            at = (0,) * (z.dim() - 1)
            mine = out[..., 4:6]
            slips: list[tuple[str, int | tuple[int, ...]]] = [('the batch and the positions together', tuple(range(z.dim() - 1))), ('the positions (dim -2), not the batch', -2), ("the head's own two columns (dim -1)" + ('; on this 2-D z that is dim 1: the batch is axis 0, whatever axes follow it' if z.dim() == 2 else ''), -1)]
            named = [name for name, dim in slips if z.dim() > 2 or dim == -1 if torch.allclose(mine.double(), z[..., 4:6].mean(dim, keepdim=True).expand_as(mine).double())]
            msg = f"z of shape {shape}, head 2 of width 2: expected the columns 4 and 5 to hold their mean over the first axis (the batch) at each position, {want[at][4:6].tolist()} at z[{', '.join('0' * len(at))}], got {out[at][4:6].tolist()}" + (f': yours are their mean over {named[0]}' if named else '')
            raise AssertionError(msg)
        msg = f'z of shape {shape}: {what}, whatever axes come first (index with z[..., a:b], not z[:, :, a:b])'
        assert isinstance(out, torch.Tensor) and torch.equal(out, want), msg
    z = torch.arange(12.0, dtype=torch.float64).reshape(2, 6)
    out = zero_head(z, 1, 3)
    msg = f"z in float64 must give a copy in float64, got {getattr(out, 'dtype', type(out).__name__)}: clone z (or use torch.zeros_like(z)); torch.zeros(shape) or a .float() makes float32"
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64, msg
    msg = f"z of shape (2, 6) in float64, head 1 of width 3: expected columns 3-5 {('replaced by their mean over the 2 rows' if mean else 'zeroed')}, got {out.tolist()}"
    assert torch.equal(out, ablated(z, 1, 3)), msg
    z = torch.arange(1.0, 13.0, dtype=torch.bfloat16).reshape(2, 6)
    out = zero_head(z, 0, 2)
    msg = f"z in bfloat16 must give a copy in bfloat16 (keep z's dtype), got {getattr(out, 'dtype', type(out).__name__)}: a mask or zeros made with torch.ones(...) or torch.zeros(...) are float32 and promote the result; clone z, or make the mask with dtype=z.dtype, device=z.device"
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16, msg
    z = torch.arange(24.0).reshape(2, 2, 6).transpose(0, 1)
    try:
        out = zero_head(z, 0, 3)
    except RuntimeError as error:
        msg = f'z made by a transpose (not contiguous in memory; a clone keeps its layout) raised RuntimeError: {error}; index z[..., a:b], or flatten with .reshape, not .view'
        raise AssertionError(msg) from None
    want = ablated(z, 0, 3)
    msg = f"z of shape (2, 2, 6) made by a transpose, head 0 of width 3: expected columns 0-2 {('replaced by their mean over the first axis' if mean else 'zeroed')}, {want.tolist()}, got {(out.tolist() if isinstance(out, torch.Tensor) else out)}"
    assert isinstance(out, torch.Tensor) and torch.equal(out, want), msg

