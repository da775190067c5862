from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.2, 0.2, 0.2, 0.3, 0.2, 0.2]

@test_case(points=None, hidden=False)
def test_masked_attention_shapes(masked_attention, q, k, v):
    import torch
    mask = torch.ones(5, 5, dtype=torch.bool)
    out, w = masked_attention(q, k, v, mask)
    assert w.shape == (2, 5, 5), f'weights should be (B, T_q, T_k) = (2, 5, 5), got {tuple(w.shape)}'
    assert out.shape == (2, 5, 3), f'output should be (B, T_q, d_v) = (2, 5, 3), got {tuple(out.shape)}'
    want = torch.softmax(q @ k.transpose(-2, -1) / 8 ** 0.5, dim=-1)
    torch.testing.assert_close(w, want, atol=1e-06, rtol=0, msg=lambda m: f'a mask of all True masks nothing: expected the weights softmax(q k^T / sqrt(8)): {m.splitlines()[0]}')
    torch.testing.assert_close(out, want @ v, atol=1e-06, rtol=0, msg=lambda m: f'a mask of all True: expected the output weights @ v: {m.splitlines()[0]}')

@test_case(points=None, hidden=False)
def test_masked_weights(masked_attention, q, k, v):
    import torch
    mask = torch.tensor([[1, 0, 0, 1, 0], [1, 1, 0, 0, 0], [0, 1, 1, 1, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]], dtype=torch.bool)
    _, w = masked_attention(q, k, v, mask)
    assert (w[:, ~mask] == 0).all(), 'the weights of masked pairs must be exactly 0'
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 5), atol=1e-06, rtol=0, msg='every row of weights must sum to 1')
    scores = (q @ k.transpose(-2, -1) / 8 ** 0.5).masked_fill(~mask, float('-inf'))
    torch.testing.assert_close(w, torch.softmax(scores, dim=-1), atol=1e-06, rtol=0, msg=lambda m: f'expected each row to be the softmax of its allowed scores q k^T / sqrt(8) (the masked ones set to -inf before the softmax): {m.splitlines()[0]}')

@test_case(points=None, hidden=False)
def test_a_query_without_keys(masked_attention, q, k, v):
    import torch
    mask = torch.ones(5, 5, dtype=torch.bool)
    mask[1] = False
    out, w = masked_attention(q, k, v, mask)
    assert not torch.isnan(w).any() and (not torch.isnan(out).any()), 'a query whose keys are all masked gave NaN: the softmax of a row of only -inf is 0 / 0; give such a row zero weights (and mind its gradients too)'
    assert (w[:, 1] == 0).all() and (out[:, 1] == 0).all(), 'a query without keys gets zero weights and a zero output'
    rows = [0, 2, 3, 4]
    want = torch.softmax(q[:, rows] @ k.transpose(-2, -1) / 8 ** 0.5, dim=-1)
    torch.testing.assert_close(w[:, rows], want, atol=1e-06, rtol=0, msg=lambda m: f'queries 0, 2, 3, 4 see every key: expected their weights softmax(q k^T / sqrt(8)): {m.splitlines()[0]}')

@test_case(points=None, hidden=False)
def test_scaled_scores_and_an_allowed_zero_score(masked_attention):
    from attnbook.exercise_checks.grading import guarded
    import torch
    q = torch.tensor([[[2.0, 0.0, 0.0, 0.0]]])
    k = torch.tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]])
    v = torch.eye(3)[None]
    mask = torch.tensor([[True, True, False]])
    out, w = guarded(masked_attention, names=('scaled_dot_product_attention', 'multi_head_attention_forward'))(q, k, v, mask)
    e = torch.e
    torch.testing.assert_close(w[0, 0], torch.tensor([e / (e + 1), 1 / (e + 1), 0.0]), atol=1e-06, rtol=0, msg='scores [2, 0] / sqrt(4) = [1, 0] for the two allowed keys: divide by sqrt(d_k); key 1 is allowed and its score is exactly 0, so it keeps its weight (mask where the mask is False, not where a score is 0)')

@test_case(points=None, hidden=False)
def test_no_nan_gradient_through_a_query_without_keys(masked_attention, q, k, v):
    from attnbook.exercise_checks.grading import grad_of
    import torch
    mask = torch.ones(5, 5, dtype=torch.bool)
    mask[3] = False
    _, (dq, dk, dv) = grad_of(masked_attention, q, k, v, mask, wrt=(0, 1, 2), output=0)
    finite = [bool(torch.isfinite(d).all()) for d in (dq, dk, dv)]
    assert all(finite), f'finite gradients for q, k, v: {finite}; training through a query without keys gives NaN: torch.softmax of a row of only -inf has a NaN backward pass even when nan_to_num cleans the output, so give such a row finite scores before the softmax and zero its weights after it'
    rows = [0, 1, 2, 4]
    qr, kr, vr = (t.clone().requires_grad_(True) for t in (q, k, v))
    (torch.softmax(qr[:, rows] @ kr.transpose(-2, -1) / 8 ** 0.5, dim=-1) @ vr).sum().backward()
    for name, mine, want in zip('qkv', (dq, dk, dv), (qr.grad, kr.grad, vr.grad)):
        gap = float((mine - want).abs().max())
        assert torch.allclose(mine, want, atol=1e-05, rtol=1e-05), f'expected the gradient of {name} of attention over the queries that have keys (query 3 passes none back); yours differs from it by up to {gap:.3g}'

@test_case(points=None, hidden=False)
def test_heads_split_by_a_transpose(masked_attention, q, k, v):
    import torch
    qs, ks, vs = (torch.stack([t, t], dim=2).transpose(1, 2) for t in (q, k, v))
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    try:
        out, w = masked_attention(qs, ks, vs, mask)
    except RuntimeError as error:
        raise AssertionError(f'q, k, v of shape (2, 2, 5, d) made by a transpose (not contiguous in memory) raised RuntimeError: {error}; use .reshape or .transpose, which work on any layout, not .view') from None
    want, _ = masked_attention(q, k, v, mask)
    assert tuple(out.shape) == (2, 2, 5, 3), f'expected output (B, H, T_q, d_v) = (2, 2, 5, 3), got {tuple(out.shape)}'
    torch.testing.assert_close(out, torch.stack([want, want], dim=1), msg='the same q, k, v in a transposed layout gave another output: the layout must not change the result')
    scores = (q @ k.transpose(-2, -1) / 8 ** 0.5).masked_fill(~mask, float('-inf'))
    ref = torch.softmax(scores, dim=-1) @ v
    torch.testing.assert_close(out[:, 0], ref, atol=1e-06, rtol=0, msg=lambda m: f"expected each head's output to be causal attention softmax(q k^T / sqrt(8)) @ v: {m.splitlines()[0]}")

