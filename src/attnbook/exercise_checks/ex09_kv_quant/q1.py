from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.2, 0.3]

@test_case(points=None, hidden=False)
def test_quantize_shapes(quantize_keys, k, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    quantize_keys = guarded(quantize_keys, new_object=False)
    import torch
    task = VARIANT['task']

    def call(f, x, bits, G, R):
        return f(x, bits, G) if task == 'keys' else f(x, bits, G, R)

    def truth(x, bits, G, R):
        B, H, T, d = x.shape
        if task == 'keys':
            m = T // G * G
        else:
            m = T // R * R if task == 'window' else max(T - R, 0)
        if task == 'token':
            g = x[:, :, :m].reshape(B, H, m, d // G, G)
        else:
            g = x[:, :, :m].reshape(B, H, m // G, G, d).transpose(3, 4)
        low, scale = (g.amin(-1), (g.amax(-1) - g.amin(-1)) / (2 ** bits - 1))
        return (m, 3 if task == 'token' else 2, low, torch.where(scale > 0, scale, torch.ones_like(scale)))

    def spread(t, G, axis):
        return t.repeat_interleave(G, dim=axis)

    def called(G, R):
        return f'G = {G}' + ('' if task == 'keys' else f', R = {R}')
    rule = {'keys': 'keys per channel in groups of G consecutive tokens, the last T % G tokens kept', 'window': 'keys per channel in groups of G consecutive tokens, quantised R at a time, the last T % R kept', 'token': 'per token in groups of G consecutive channels, the newest R tokens kept'}[task]
    R = {'keys': None, 'window': 8, 'token': 2}[task]
    out = call(quantize_keys, k, 4, 4, R)
    assert isinstance(out, tuple) and len(out) == 4, 'return four tensors: codes, scale, low, residual'
    codes, scale, low, residual = out
    m, axis, want_low, _ = truth(k, 4, 4, R)
    assert codes.dtype == torch.uint8, f'codes must be torch.uint8, got {codes.dtype}'
    assert codes.shape == (1, 2, m, 8) and residual.shape == (1, 2, 10 - m, 8), f'10 tokens, {called(4, R)} ({rule}): {m} tokens quantised, codes (1, 2, {m}, 8), and the other {10 - m} in the residual, (1, 2, {10 - m}, 8); got codes {tuple(codes.shape)} and residual {tuple(residual.shape)}'
    assert scale.shape == low.shape == want_low.shape, f'one scale and one minimum per group: {tuple(want_low.shape)}, got {tuple(scale.shape)} and {tuple(low.shape)} ({rule}): reduce over the G numbers of a group, no other axis'
    assert scale.dtype == low.dtype == residual.dtype == torch.float32, f"scale, low and residual keep the input's dtype (float32 here), got {scale.dtype}, {low.dtype}, {residual.dtype}"
    assert torch.equal(residual, k[:, :, m:]), f'the residual holds the last {10 - m} tokens as they are, k[:, :, {m}:], got another tensor'
    back = spread(low, 4, axis) + codes.float() * spread(scale, 4, axis)
    err = float((back - k[:, :, :m]).abs().max())
    half = float(scale.max()) / 2
    assert err <= half + 1e-05, f"codes * scale + low should give the first {m} tokens back within half a step (at most {half:.4f} here), but they differ by up to {err:.4f}: each code is round((x - low) / scale) with low the group's minimum and scale = (max - min) / (2^bits - 1), one per group ({rule})"
    two = call(quantize_keys, torch.cat([k, 2 * k]), 4, 4, R)
    assert torch.allclose(two[1][0], scale[0], rtol=1e-05, atol=1e-06) and torch.allclose(two[1][1], 2 * scale[0], rtol=1e-05, atol=1e-06), "a batch of two sequences, the second twice the first: each sequence gets its own scales (the second's twice the first's); reduce over the G numbers of a group only, never over the batch"
    k64 = torch.cat([k, 2 * k]).double().transpose(1, 2).contiguous().transpose(1, 2)
    try:
        out = call(quantize_keys, k64, 4, 4, R)
    except RuntimeError as error:
        raise AssertionError(f'inputs laid out as the course makes them, x.view(B, T, H, d).transpose(1, 2), are not contiguous, and your function raised {error}: use reshape (or contiguous()), not view') from None
    dtypes = [str(t.dtype) for t in out[1:]]
    assert dtypes == ['torch.float64'] * 3, f'float64 inputs give float64 scale, low and residual (the hidden tests use float64 too); got {dtypes}: do not convert the input (k.float() makes it float32)'
    full = {'keys': (5, None), 'window': (5, 10), 'token': (4, 0)}[task]
    codes, scale, low, residual = call(quantize_keys, k, 4, *full)
    assert codes.shape == (1, 2, 10, 8) and residual.shape == (1, 2, 0, 8), f'10 tokens, {called(*full)}: every token is quantised, codes (1, 2, 10, 8), and no residual, (1, 2, 0, 8); got codes {tuple(codes.shape)} and residual {tuple(residual.shape)}' + (': k[:, :, -n:] is k[:, :, 0:], all of k, when n is 0' if residual.shape[2] == 10 else '')

@test_case(points=None, hidden=False)
def test_quantize_small_example(quantize_keys, VARIANT):
    import torch
    task = VARIANT['task']

    def call(f, x, bits, G, R):
        return f(x, bits, G) if task == 'keys' else f(x, bits, G, R)

    def truth(x, bits, G, R):
        B, H, T, d = x.shape
        if task == 'keys':
            m = T // G * G
        else:
            m = T // R * R if task == 'window' else max(T - R, 0)
        if task == 'token':
            g = x[:, :, :m].reshape(B, H, m, d // G, G)
        else:
            g = x[:, :, :m].reshape(B, H, m // G, G, d).transpose(3, 4)
        low, scale = (g.amin(-1), (g.amax(-1) - g.amin(-1)) / (2 ** bits - 1))
        return (m, 3 if task == 'token' else 2, low, torch.where(scale > 0, scale, torch.ones_like(scale)))

    def spread(t, G, axis):
        return t.repeat_interleave(G, dim=axis)

    def called(G, R):
        return f'G = {G}' + ('' if task == 'keys' else f', R = {R}')
    rule = {'keys': 'keys per channel in groups of G consecutive tokens, the last T % G tokens kept', 'window': 'keys per channel in groups of G consecutive tokens, quantised R at a time, the last T % R kept', 'token': 'per token in groups of G consecutive channels, the newest R tokens kept'}[task]
    if task == 'token':
        x = torch.tensor([[0.0, 1.8, 3.0, 10.0, 16.0, 13.5], [-1.0, 1.0, 0.2, 4.0, 4.3, 7.0], [100.0, -50.0, 0.0, 0.0, 0.0, 0.0]]).view(1, 1, 3, 6)
        codes, scale, low, residual = quantize_keys(x, 2, 3, 1)
        lows, scales, first = ([0.0, 10.0, -1.0, 4.0], [1.0, 2.0, 2 / 3, 1.0], codes[0, 0, 0].tolist())
        kept, where = ([100.0, -50.0, 0.0, 0.0, 0.0, 0.0], 'the newest token, token 2,')
        groups, row = ('of token 0 (channels 0-2, then 3-5) are 0 and 10, of token 1 -1 and 4', 'token 0')
    else:
        x = torch.tensor([[0.0, -1.0], [1.8, 1.0], [3.0, 0.2], [10.0, 4.0], [16.0, 4.3], [13.5, 7.0], [100.0, -50.0]]).view(1, 1, 7, 2)
        codes, scale, low, residual = call(quantize_keys, x, 2, 3, 6)
        lows, scales, first = ([0.0, -1.0, 10.0, 4.0], [1.0, 2 / 3, 2.0, 1.0], codes[0, 0, :, 0].tolist())
        kept, where = ([100.0, -50.0], 'the last token, token 6,')
        groups, row = ('of group 0 (tokens 0-2) are 0 and -1, of group 1 (tokens 3-5) 10 and 4', 'channel 0')
    assert torch.equal(residual.flatten(), torch.tensor(kept)), f'{where} stays in full precision: residual {kept}, got {residual.flatten().tolist()} ({rule})'
    assert torch.allclose(low.flatten(), torch.tensor(lows)), f'the minima {groups}, low = {lows}; got {low.flatten().tolist()}: a group is G consecutive ' + ('channels of one token' if task == 'token' else 'tokens of one channel')
    assert torch.allclose(scale.flatten(), torch.tensor(scales)), f'2 bits give 2^2 - 1 = 3 steps between minimum and maximum: scales {[round(s, 4) for s in scales]}; got {scale.flatten().tolist()}'
    assert first == [0, 2, 3, 0, 3, 2], f'{row} holds 0, 1.8, 3 and 10, 16, 13.5: codes round((x - min) / s) = 0, 2, 3 and 0, 3, 2; got {first}: round to the nearest code, not down'

