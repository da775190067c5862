from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.2, 0.3, 0.2]

@test_case(points=None, hidden=False)
def test_expand_shape(expand_kv, k, VARIANT):
    import torch
    if VARIANT['task'] == 'tokens':
        k = k.transpose(1, 2)
    if VARIANT['task'] == 'tokens':
        token_major = expand_kv

        def expand_kv(x, n_rep):
            out = token_major(x.transpose(1, 2), n_rep)
            if not isinstance(out, torch.Tensor):
                return out
            B, H_kv, T, d = tuple(x.shape)
            assert tuple(out.shape) == (B, T, H_kv * n_rep, d), f'keys of shape (B, T, H_kv, d) = {(B, T, H_kv, d)}, n_rep = {n_rep}: expected a result of shape (B, T, H_kv * n_rep, d) = {(B, T, H_kv * n_rep, d)}, got {tuple(out.shape)}'
            return out.transpose(1, 2)
    B, H_kv, T, d = k.shape
    n_rep = VARIANT['group']
    tiled = VARIANT['task'] == 'strided'
    source = [h % H_kv if tiled else h // n_rep for h in range(H_kv * n_rep)]
    order = ', '.join(map(str, source))
    out = expand_kv(k, n_rep)
    assert isinstance(out, torch.Tensor), 'return a torch tensor'
    want = (B, H_kv * n_rep, T, d)
    assert out.shape == want, f'{H_kv} key/value heads repeated {n_rep} times: expected {want}, got {tuple(out.shape)}'
    for h, s in enumerate(source):
        assert torch.equal(out[:, h], k[:, s]), f"the example's keys, {H_kv} heads repeated {n_rep} times: expected head {h} of the result to be key head {s} ({('the whole set of heads tiled' if tiled else 'each head repeated in place')}: {order}), got another tensor: of its first row {out[0, h, 0, :3].tolist()} (expected {k[0, s, 0, :3].tolist()}, first three numbers)"

@test_case(points=None, hidden=False)
def test_copies_sit_next_to_each_other(expand_kv, VARIANT):
    import torch
    if VARIANT['task'] == 'tokens':
        token_major = expand_kv

        def expand_kv(x, n_rep):
            out = token_major(x.transpose(1, 2), n_rep)
            if not isinstance(out, torch.Tensor):
                return out
            B, H_kv, T, d = tuple(x.shape)
            assert tuple(out.shape) == (B, T, H_kv * n_rep, d), f'keys of shape (B, T, H_kv, d) = {(B, T, H_kv, d)}, n_rep = {n_rep}: expected a result of shape (B, T, H_kv * n_rep, d) = {(B, T, H_kv * n_rep, d)}, got {tuple(out.shape)}'
            return out.transpose(1, 2)
    heads = torch.arange(3.0).view(1, 3, 1, 1)
    try:
        out = expand_kv(heads, 2)
    except RuntimeError as error:
        raise AssertionError(f"x of shape (1, 3, 1, 1), n_rep = 2: expected a result of shape (1, 6, 1, 1), but your function raised RuntimeError ({str(error).splitlines()[0]}): read B, H_kv, T and d from x.shape, not from the notebook's variables") from None
    assert tuple(out.shape) == (1, 6, 1, 1), f'heads of shape (1, 3, 1, 1) repeated twice: expected (1, 6, 1, 1), got {tuple(out.shape)}: the copies go along the head axis (dim 1), not the batch (dim 0) or another axis'
    got = out.flatten().tolist()
    if VARIANT['task'] == 'strided':
        in_place = got == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]
        assert got == [0.0, 1.0, 2.0, 0.0, 1.0, 2.0], f'heads 0, 1, 2 repeated twice should read 0, 1, 2, 0, 1, 2 in your variant (query head h reads key head h % H_kv); got {got}: ' + ('repeat_interleave repeats each head in place (0, 0, 1, 1, 2, 2), so query head 1 would read key head 0 instead of 1; ' if in_place else '') + 'tile the whole set of heads (x.repeat(1, n_rep, 1, 1), or a new axis before the heads, expand, reshape)'
        return
    tiled = got == [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]
    assert got == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0], f'heads 0, 1, 2 repeated twice should read 0, 0, 1, 1, 2, 2; got {got}: ' + ('x.repeat(1, n_rep, 1, 1) tiles the whole set (0, 1, 2, 0, 1, 2), so query head 1 would read key head 1 instead of 0; ' if tiled else '') + 'repeat each head in place (repeat_interleave, or a new axis after the heads, expand, reshape)'

@test_case(points=None, hidden=False)
def test_expand_house_rules(expand_kv, k, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import torch
    if VARIANT['task'] == 'tokens':
        k = k.transpose(1, 2)
    if VARIANT['task'] == 'tokens':
        token_major = expand_kv

        def expand_kv(x, n_rep):
            out = token_major(x.transpose(1, 2), n_rep)
            if not isinstance(out, torch.Tensor):
                return out
            B, H_kv, T, d = tuple(x.shape)
            assert tuple(out.shape) == (B, T, H_kv * n_rep, d), f'keys of shape (B, T, H_kv, d) = {(B, T, H_kv, d)}, n_rep = {n_rep}: expected a result of shape (B, T, H_kv * n_rep, d) = {(B, T, H_kv * n_rep, d)}, got {tuple(out.shape)}'
            return out.transpose(1, 2)
    B, H_kv, T, d = k.shape
    n_rep = VARIANT['group']

    def spread(x, n_rep):
        if VARIANT['task'] == 'strided':
            return x.repeat(1, n_rep, 1, 1)
        return x.repeat_interleave(n_rep, dim=1)
    tiled = VARIANT['task'] == 'strided'
    order = ', '.join([str(h % H_kv if tiled else h // n_rep) for h in range(H_kv * n_rep)])
    before = k.clone()
    out = guarded(expand_kv, new_object=False)(k, n_rep)
    assert torch.equal(k, before), 'expand_kv changed the keys it was given'
    as_torch = f'k.repeat(1, {n_rep}, 1, 1)' if tiled else f'k.repeat_interleave({n_rep}, dim=1)'
    torch.testing.assert_close(out, spread(k, n_rep), atol=0, rtol=0, msg=lambda m: f"the example's keys repeated {n_rep} times: expected {('the whole set of heads tiled' if tiled else 'each head in place')}, heads {order} (as {as_torch}); " + '; '.join([line.strip() for line in m.splitlines() if line.strip() and (not line.startswith('Tensor-likes'))]))
    want = (B, H_kv * n_rep, T, d)
    assert out.shape == want, f'{H_kv} key/value heads repeated {n_rep} times: expected {want}, got {tuple(out.shape)}'
    kt = k.transpose(1, 2).contiguous().transpose(1, 2)
    try:
        out_t = expand_kv(kt, n_rep)
    except RuntimeError as error:
        raise AssertionError(f'keys laid out as the course makes them, x.view(B, T, H_kv, d).transpose(1, 2), are not contiguous, and your function raised {error}: use reshape (or contiguous()), not view') from None
    assert torch.equal(out_t, out), 'the same keys, laid out as the course makes them (not contiguous), gave other values'
    try:
        meta = expand_kv(torch.empty(2, 2, 6, 8, device='meta'), 2)
    except (RuntimeError, NotImplementedError, TypeError) as err:
        raise AssertionError(f'keys on the meta device failed ({err}): ' + 'build new tensors from x or on x.device (torch.zeros(..., device=x.device)), never on the CPU by default') from None
    assert meta.device.type == 'meta' and tuple(meta.shape) == (2, 4, 6, 8), f'keys on the meta device gave a {tuple(meta.shape)} result on {meta.device}: ' + 'build new tensors from x or on x.device (torch.zeros(..., device=x.device)), never on the CPU by default'
    wide = expand_kv(k.double(), 2)
    assert wide.dtype == torch.float64, f"the example's keys in float64 gave a {wide.dtype} result: keep x's dtype: build the result from x (expand and reshape, repeat_interleave, x.new_zeros), with no .float() and no torch.zeros or torch.empty without dtype=x.dtype"
    tracked = k.clone().requires_grad_()
    assert expand_kv(tracked, 2).requires_grad, "the example's keys with requires_grad=True gave a result that does not require gradients: the copies must stay in the autograd graph, so build them from x itself (not from x.data, x.detach() or NumPy)"

