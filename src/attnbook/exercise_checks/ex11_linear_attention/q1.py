from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.25, 0.25, 0.25, 0.25]

@test_case(points=None, hidden=False)
def test_recurrent_shape(linear_attention_recurrent, q, k, v, VARIANT):
    import torch

    def extra(x, keep):
        if VARIANT['task'] == 'decay':
            return (keep,)
        if VARIANT['task'] == 'gate':
            b, t = torch.meshgrid(torch.arange(x.shape[0]), torch.arange(x.shape[1]), indexing='ij')
            return ((keep + (1 - keep) * ((3 * t + 5 * b) % 7) / 6).to(x.dtype).to(x.device),)
        return ()
    task = VARIANT['task']
    d = 1.0 if task == 'plain' else 0.5
    hand = {'plain': (), 'decay': (0.5,), 'gate': (torch.tensor([[0.9, 0.5]], dtype=torch.float32),)}[task]
    said = {'plain': '', 'decay': ', gamma = 0.5', 'gate': ", alpha = [0.9, 0.5] (token 1's gate 0.5)"}[task]
    keep = VARIANT.get('keep', 100) / 100
    out = linear_attention_recurrent(q, k, v, *extra(q, keep))
    assert isinstance(out, torch.Tensor), 'return a torch tensor'
    assert out.shape == v.shape, f'expected one output row of d_v = {v.shape[-1]} numbers per token, {tuple(v.shape)}, got {tuple(out.shape)}: the state phi(k_t)^T v_t is (d_k, d_v), a column times a row, and the query reads it as phi(q_t) S'
    small = torch.tensor([[[0.0], [1.0]]])
    y = linear_attention_recurrent(small, small, torch.tensor([[[1.0], [4.0]]]), *hand)
    assert tuple(y.shape) == (1, 2, 1), f'q = k = [0, 1], v = [1, 4] (B = 1, T = 2, d_k = d_v = 1){said}: expected (1, 2, 1), got {tuple(y.shape)}'
    first = float(y.flatten()[0])
    why = '; y_0 is far above v_0 = 1: token 0 read a normaliser of 0, so add phi(k_t) to z before the read, as S gets phi(k_t)^T v_t' if abs(first) > 1000.0 else '; y_0 = 2 = phi(v_0): phi maps the queries and keys only, the values are averaged as they are' if abs(first - 2.0) < 0.0001 else ''
    y_1 = 2 * (d + 8) / (2 * (d + 2))
    torch.testing.assert_close(y.flatten(), torch.tensor([1.0, y_1]), atol=1e-05, rtol=1e-05, msg=f'q = k = [0, 1], v = [1, 4] (B = 1, T = 2, d_k = d_v = 1){said}: expected [1, {y_1:g}] (phi(q_1) = phi(k_1) = 2, so y_1 = 2 ({d:g} * 1 * 1 + 2 * 4) / (2 ({d:g} * 1 + 2)) = {y_1:g}), got {y.flatten().tolist()}{why}')
    meta = [torch.empty(t.shape, device='meta') for t in (q, k, v)]
    try:
        out = linear_attention_recurrent(*meta, *extra(meta[0], keep))
    except (RuntimeError, NotImplementedError, TypeError) as err:
        if 'device' in str(err):
            made_on = 'cpu' if 'cpu' in str(err) else 'another device'
            raise AssertionError(f"q, k, v of the example's shapes on the meta device: your function made a tensor on {made_on} while the inputs were on meta: create the state and the normaliser with device=k.device (or k.new_zeros), so that it runs where its inputs are") from None
        raise AssertionError(f"q, k, v of the example's shapes on the meta device (no numbers) failed with {type(err).__name__}: does your function read numbers out of a tensor (.item(), .tolist(), NumPy)? Stay in PyTorch, on the inputs' device") from None
    assert out.device.type == 'meta' and out.shape == v.shape, f'q, k, v on the meta device: expected a {tuple(v.shape)} output on meta, got {tuple(out.shape)} on {out.device}'

@test_case(points=None, hidden=False)
def test_recurrent_first_token_and_normaliser(linear_attention_recurrent, q, k, v, VARIANT):
    import torch

    def extra(x, keep):
        if VARIANT['task'] == 'decay':
            return (keep,)
        if VARIANT['task'] == 'gate':
            b, t = torch.meshgrid(torch.arange(x.shape[0]), torch.arange(x.shape[1]), indexing='ij')
            return ((keep + (1 - keep) * ((3 * t + 5 * b) % 7) / 6).to(x.dtype).to(x.device),)
        return ()
    ex = extra(q, VARIANT.get('keep', 100) / 100)
    out = linear_attention_recurrent(q, k, v, *ex)
    torch.testing.assert_close(out[:, 0], v[:, 0], atol=0.0001, rtol=0.0001, msg='the first token sees only itself, so its output must be its own value: does token t write phi(k_t)^T v_t into the state before it reads, and divide by the normaliser phi(q_t) . z_t?')
    ones = torch.ones_like(v)
    torch.testing.assert_close(linear_attention_recurrent(q, k, ones, *ex), ones, atol=0.0001, rtol=0.0001, msg='with every value equal to 1 each output must be 1 (the weights of a row sum to 1): divide phi(q_t) S_t by phi(q_t) . z_t + EPS, with z_t the sum of phi(k_i) so far' + ('' if VARIANT['task'] == 'plain' else ', decayed exactly as the state is'))

@test_case(points=None, hidden=False)
def test_recurrent_small_example(linear_attention_recurrent, q, k, v, VARIANT):
    import torch
    import torch.nn.functional as F

    def extra(x, keep):
        if VARIANT['task'] == 'decay':
            return (keep,)
        if VARIANT['task'] == 'gate':
            b, t = torch.meshgrid(torch.arange(x.shape[0]), torch.arange(x.shape[1]), indexing='ij')
            return ((keep + (1 - keep) * ((3 * t + 5 * b) % 7) / 6).to(x.dtype).to(x.device),)
        return ()
    ex = extra(q, VARIANT.get('keep', 100) / 100)
    fq, fk = (F.elu(q) + 1, F.elu(k) + 1)
    scores = (fq[0, 2] * fk[0, :3]).sum(-1)
    what = 'sum_i phi(q_2).phi(k_i) v_i / sum_i phi(q_2).phi(k_i) over i = 0, 1, 2'
    if VARIANT['task'] == 'decay':
        scores = scores * ex[0] ** torch.tensor([2.0, 1.0, 0.0])
        what = what.replace('phi(k_i)', 'phi(k_i) gamma^(2 - i)')
    if VARIANT['task'] == 'gate':
        a = ex[0][0]
        scores = scores * torch.stack([a[1] * a[2], a[2], torch.ones(())])
        what = what.replace('phi(k_i)', 'phi(k_i) D_i') + ', D = (alpha_1 alpha_2, alpha_2, 1)'
    want = scores @ v[0, :3] / (scores.sum() + 1e-06)
    out = linear_attention_recurrent(q, k, v, *ex)
    torch.testing.assert_close(out[0, 2], want, atol=1e-05, rtol=1e-05, msg=f'token 2 of the first sequence: expected {what}: is phi applied to both q and k, and do the sequences of the batch keep separate states?')

@test_case(points=None, hidden=False)
def test_recurrent_float64_with_eps(linear_attention_recurrent, VARIANT):
    import torch
    task = VARIANT['task']
    d = 1.0 if task == 'plain' else 0.5
    hand = {'plain': (), 'decay': (0.5,), 'gate': (torch.tensor([[0.9, 0.5]], dtype=torch.float64),)}[task]
    said = {'plain': '', 'decay': ', gamma = 0.5', 'gate': ", alpha = [0.9, 0.5] (token 1's gate 0.5)"}[task]
    small = torch.tensor([[[0.0], [1.0]]], dtype=torch.float64)
    try:
        y = linear_attention_recurrent(small, small, torch.tensor([[[1.0], [4.0]]], dtype=torch.float64), *hand)
    except RuntimeError as err:
        raise AssertionError(f'float64 inputs raised RuntimeError ({str(err).splitlines()[0]}): they met a float32 tensor your function made; torch.zeros(...) without dtype= is float32 (and on the CPU), and S += ... cannot write float64 into it: make the state and the normaliser with k.new_zeros(...)') from None
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float64, f"float64 inputs: expected a float64 output, got {getattr(y, 'dtype', type(y).__name__)}: keep the inputs' dtype"
    want = torch.tensor([1.0 / (1.0 + 1e-06), 2 * (d + 8) / (2 * (d + 2) + 1e-06)], dtype=torch.float64)
    torch.testing.assert_close(y.flatten(), want, atol=1e-12, rtol=1e-12, msg=f'q = k = [0, 1], v = [1, 4]{said} in float64, to 1e-12: expected [1 / (1 + EPS), {2 * (d + 8):g} / ({2 * (d + 2):g} + EPS)] = {want.tolist()}, got {y.flatten().tolist()}: add EPS to every normaliser, phi(q_t) . z_t + EPS, as in the formula, and only there, not to the numerator (phi > 0, but EPS is part of the answer: a hidden test gives a query a normaliser of exactly 0), and compute in float64 throughout')

