from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.25, 0.5, 0.25, 0.25]

@test_case(points=None, hidden=False)
def test_parallel_shape_and_no_loop(linear_attention_parallel, q, k, v, VARIANT):
    from attnbook.exercise_checks.grading import guarded
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
    out = guarded(linear_attention_parallel, loops=False)(q, k, v, *extra(q, keep))
    assert isinstance(out, torch.Tensor), 'return a torch tensor'
    assert out.shape == v.shape, f'expected {tuple(v.shape)}, got {tuple(out.shape)}'
    small = torch.tensor([[[0.0], [1.0]]])
    y = linear_attention_parallel(small, small, torch.tensor([[[1.0], [4.0]]]), *hand)
    y_1 = 2 * (d + 8) / (2 * (d + 2))
    torch.testing.assert_close(y.flatten(), torch.tensor([1.0, y_1]), atol=1e-05, rtol=1e-05, msg=f'q = k = [0, 1], v = [1, 4] (B = 1, T = 2, d_k = d_v = 1){said}: expected [1, {y_1:g}] (row 1 of A is [2 * 1 * {d:g}, 2 * 2] = [{2 * d:g}, 4], so y_1 = ({2 * d:g} * 1 + 4 * 4) / ({2 * d:g} + 4) = {y_1:g}), got {y.flatten().tolist()}')
    meta = [torch.empty(t.shape, device='meta') for t in (q, k, v)]
    try:
        out = linear_attention_parallel(*meta, *extra(meta[0], keep))
    except (RuntimeError, NotImplementedError, TypeError) as err:
        if 'device' in str(err):
            made_on = 'cpu' if 'cpu' in str(err) else 'another device'
            raise AssertionError(f"q, k, v of the example's shapes on the meta device: your function made a tensor on {made_on} while the inputs were on meta: build the mask with device=q.device (torch.ones(T, T, device=q.device)), so that it runs where its inputs are") from None
        raise AssertionError(f"q, k, v of the example's shapes on the meta device (no numbers) failed with {type(err).__name__}: does your function read numbers out of a tensor (.item(), .tolist(), NumPy)? Stay in PyTorch, on the inputs' device") from None
    assert out.device.type == 'meta' and out.shape == v.shape, f'q, k, v on the meta device: expected a {tuple(v.shape)} output on meta, got {tuple(out.shape)} on {out.device}'

@test_case(points=None, hidden=False)
def test_parallel_is_causal_and_normalised(linear_attention_parallel, q, k, v, VARIANT):
    import torch

    def extra(x, keep):
        if VARIANT['task'] == 'decay':
            return (keep,)
        if VARIANT['task'] == 'gate':
            b, t = torch.meshgrid(torch.arange(x.shape[0]), torch.arange(x.shape[1]), indexing='ij')
            return ((keep + (1 - keep) * ((3 * t + 5 * b) % 7) / 6).to(x.dtype).to(x.device),)
        return ()
    ex = extra(q, VARIANT.get('keep', 100) / 100)
    out = linear_attention_parallel(q, k, v, *ex)
    assert torch.isfinite(out).all(), 'inf or NaN: hide the future with zeros (multiply by the mask, or masked_fill with 0.0), not -inf'
    first = 'token 0 read nothing (its output is 0): keep the diagonal, j = i (tril() with diagonal 0, not tril(-1)): every token reads its own key' if bool((out[:, 0] == 0).all()) else 'the first token may read only its own key, so its output is its own value: are the entries above the diagonal (j > i) set to 0 before the row sums?'
    torch.testing.assert_close(out[:, 0], v[:, 0], atol=0.0001, rtol=0.0001, msg=first)
    ones = torch.ones_like(v)
    torch.testing.assert_close(linear_attention_parallel(q, k, ones, *ex), ones, atol=0.0001, rtol=0.0001, msg='with every value 1 each output must be 1: divide each row by the sum of its kept entries (+ EPS)' + ('' if VARIANT['task'] == 'plain' else ', decayed as they are in A V'))

@test_case(points=None, hidden=False)
def test_parallel_matches_the_loop(linear_attention_parallel, q, k, v, VARIANT):
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
    want = []
    for t in range(q.shape[1]):
        s = (fq[:, t, None, :] * fk[:, :t + 1]).sum(-1)
        if VARIANT['task'] == 'decay':
            s = s * ex[0] ** torch.arange(t, -1, -1.0)
        if VARIANT['task'] == 'gate':
            s = s * torch.stack([ex[0][:, j + 1:t + 1].prod(-1) for j in range(t + 1)], dim=-1)
        want.append((s[..., None] * v[:, :t + 1]).sum(1) / (s.sum(-1, keepdim=True) + 1e-06))
    weights = {'plain': '', 'decay': ', each entry (i, j) times gamma^(i - j)', 'gate': ', each entry (i, j) times the gates alpha_{j+1} ... alpha_i (1 on the diagonal)'}
    torch.testing.assert_close(linear_attention_parallel(q, k, v, *ex), torch.stack(want, dim=1), atol=1e-05, rtol=1e-05, msg='the outputs differ from the recurrence written out token by token: phi on q and k, the lower triangle kept, its diagonal included (tril(), not triu or tril(-1))' + weights[VARIANT['task']] + ', rows divided by their own sums')

@test_case(points=None, hidden=False)
def test_parallel_float64_with_eps(linear_attention_parallel, VARIANT):
    import torch
    task = VARIANT['task']
    d = 1.0 if task == 'plain' else 0.5
    hand = {'plain': (), 'decay': (0.5,), 'gate': (torch.tensor([[0.9, 0.5]], dtype=torch.float64),)}[task]
    said = {'plain': '', 'decay': ', gamma = 0.5', 'gate': ", alpha = [0.9, 0.5] (token 1's gate 0.5)"}[task]
    small = torch.tensor([[[0.0], [1.0]]], dtype=torch.float64)
    y = linear_attention_parallel(small, small, torch.tensor([[[1.0], [4.0]]], dtype=torch.float64), *hand)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float64, f"float64 inputs: expected a float64 output, got {getattr(y, 'dtype', type(y).__name__)}: keep the inputs' dtype"
    exact = torch.tensor([1.0 / (1.0 + 1e-06), (2 * d + 16) / (2 * d + 4 + 1e-06)], dtype=torch.float64)
    fix = 'add EPS to every row sum, (A * M) 1 + EPS, as in the formula (the sums are positive, but EPS is part of the answer: a hidden test gives a row a sum of exactly 0), and compute in float64 throughout'
    no_eps = torch.tensor([1.0, (2 * d + 16) / (2 * d + 4)], dtype=torch.float64)
    if y.shape == (1, 2, 1) and torch.allclose(y.flatten() - 1e-06, no_eps, atol=1e-12, rtol=0):
        fix = 'EPS went on the quotient: put it in the denominator, / (row sum + EPS)'
    torch.testing.assert_close(y.flatten(), exact, atol=1e-12, rtol=1e-12, msg=f'q = k = [0, 1], v = [1, 4]{said} in float64, to 1e-12: expected [1 / (1 + EPS), {2 * d + 16:g} / ({2 * d + 4:g} + EPS)] = {exact.tolist()}, got {y.flatten().tolist()}: {fix}')

