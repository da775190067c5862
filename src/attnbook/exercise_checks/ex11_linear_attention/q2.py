from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.25, 0.5, 0.25, 0.25]

@test_case(points=None, hidden=False)
def test_parallel_shape_and_no_loop(linear_attention_parallel, q, k, v):
    from attnbook.exercise_checks.grading import guarded
    import torch
    out = guarded(linear_attention_parallel, loops=False)(q, k, v)
    assert isinstance(out, torch.Tensor), 'return a torch tensor'
    assert out.shape == (2, 5, 3), f'expected (2, 5, 3), got {tuple(out.shape)}'
    small = torch.tensor([[[0.0], [1.0]]])
    y = linear_attention_parallel(small, small, torch.tensor([[[1.0], [4.0]]]))
    torch.testing.assert_close(y.flatten(), torch.tensor([1.0, 3.0]), atol=1e-05, rtol=1e-05, msg=f'q = k = [0, 1], v = [1, 4] (B = 1, T = 2, d_k = d_v = 1): expected [1, 3] (row 1 of A is [2 * 1, 2 * 2] = [2, 4], so y_1 = (2 * 1 + 4 * 4) / (2 + 4) = 3), got {y.flatten().tolist()}')
    meta = [torch.empty(t.shape, device='meta') for t in (q, k, v)]
    try:
        out = linear_attention_parallel(*meta)
    except (RuntimeError, NotImplementedError, TypeError) as err:
        if 'device' in str(err):
            made_on = 'cpu' if 'cpu' in str(err) else 'another device'
            raise AssertionError(f"q, k, v of the example's shapes on the meta device: your function made a tensor on {made_on} while the inputs were on meta: build the mask with device=q.device (torch.ones(T, T, device=q.device)), so that it runs where its inputs are") from None
        raise AssertionError(f"q, k, v of the example's shapes on the meta device (no numbers) failed with {type(err).__name__}: does your function read numbers out of a tensor (.item(), .tolist(), NumPy)? Stay in PyTorch, on the inputs' device") from None
    assert out.device.type == 'meta' and tuple(out.shape) == (2, 5, 3), f'q, k, v on the meta device: expected a (2, 5, 3) output on meta, got {tuple(out.shape)} on {out.device}'

@test_case(points=None, hidden=False)
def test_parallel_is_causal_and_normalised(linear_attention_parallel, q, k, v):
    import torch
    out = linear_attention_parallel(q, k, v)
    assert torch.isfinite(out).all(), 'inf or NaN: hide the future with zeros (multiply by the mask, or masked_fill with 0.0), not -inf'
    first = 'token 0 read nothing (its output is 0): keep the diagonal, j = i (tril() with diagonal 0, not tril(-1)): every token reads its own key' if bool((out[:, 0] == 0).all()) else 'the first token may read only its own key, so its output is its own value: are the entries above the diagonal (j > i) set to 0 before the row sums?'
    torch.testing.assert_close(out[:, 0], v[:, 0], atol=0.0001, rtol=0.0001, msg=first)
    ones = torch.ones(2, 5, 3)
    torch.testing.assert_close(linear_attention_parallel(q, k, ones), ones, atol=0.0001, rtol=0.0001, msg='with every value 1 each output must be 1: divide each row by the sum of its kept entries (+ EPS)')

@test_case(points=None, hidden=False)
def test_parallel_matches_the_loop(linear_attention_parallel, q, k, v):
    import torch
    import torch.nn.functional as F
    fq, fk = (F.elu(q) + 1, F.elu(k) + 1)
    want = []
    for t in range(5):
        s = (fq[:, t, None, :] * fk[:, :t + 1]).sum(-1)
        want.append((s[..., None] * v[:, :t + 1]).sum(1) / (s.sum(-1, keepdim=True) + 1e-06))
    torch.testing.assert_close(linear_attention_parallel(q, k, v), torch.stack(want, dim=1), atol=1e-05, rtol=1e-05, msg='the outputs differ from the recurrence written out token by token: phi on q and k, the lower triangle kept, its diagonal included (tril(), not triu or tril(-1)), rows divided by their own sums')

@test_case(points=None, hidden=False)
def test_parallel_float64_with_eps(linear_attention_parallel):
    import torch
    small = torch.tensor([[[0.0], [1.0]]], dtype=torch.float64)
    y = linear_attention_parallel(small, small, torch.tensor([[[1.0], [4.0]]], dtype=torch.float64))
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float64, f"float64 inputs: expected a float64 output, got {getattr(y, 'dtype', type(y).__name__)}: keep the inputs' dtype"
    exact = torch.tensor([1.0 / (1.0 + 1e-06), 18.0 / (6.0 + 1e-06)], dtype=torch.float64)
    fix = 'add EPS to every row sum, (A * M) 1 + EPS, as in the formula (the sums are positive, but EPS is part of the answer: a hidden test gives a row a sum of exactly 0), and compute in float64 throughout'
    no_eps = torch.tensor([1.0, 3.0], dtype=torch.float64)
    if y.shape == (1, 2, 1) and torch.allclose(y.flatten() - 1e-06, no_eps, atol=1e-12, rtol=0):
        fix = 'EPS went on the quotient: put it in the denominator, / (row sum + EPS)'
    torch.testing.assert_close(y.flatten(), exact, atol=1e-12, rtol=1e-12, msg=f'q = k = [0, 1], v = [1, 4] in float64, to 1e-12: expected [1 / (1 + EPS), 18 / (6 + EPS)] = {exact.tolist()}, got {y.flatten().tolist()}: {fix}')

