from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.3, 0.3, 0.1, 0.3]

@test_case(points=None, hidden=False)
def test_gqa_shape(gqa_attention, q, k, v, expand_kv, VARIANT):
    import torch
    order = [0.0, 1.0, 0.0, 1.0] if VARIANT['task'] == 'strided' else [0.0, 0.0, 1.0, 1.0]
    heads = torch.arange(2.0).view((1, 1, 2, 1) if VARIANT['task'] == 'tokens' else (1, 2, 1, 1))
    try:
        expand_ok = expand_kv(heads, 2).flatten().tolist() == order
    except Exception:
        expand_ok = False
    assert expand_ok, f"expected your expand_kv (question 1) to turn heads 0, 1 into {', '.join([str(int(h)) for h in order])}; it does not yet, so this check cannot judge gqa_attention"
    import torch

    def spread(x, n_rep):
        if VARIANT['task'] == 'strided':
            return x.repeat(1, n_rep, 1, 1)
        return x.repeat_interleave(n_rep, dim=1)
    if VARIANT['task'] == 'tokens':
        k, v = (k.transpose(1, 2), v.transpose(1, 2))
    if VARIANT['task'] == 'tokens':
        heads_first = gqa_attention

        def gqa_attention(q, k, v, causal):
            return heads_first(q, k.transpose(1, 2), v.transpose(1, 2), causal)
    H, H_kv, n_rep = (q.shape[1], k.shape[1], q.shape[1] // k.shape[1])
    try:
        out = gqa_attention(q, k, v, causal=True)
    except RuntimeError as err:
        if 'must match the size' not in str(err):
            raise
        raise AssertionError(f'the example ({H} query heads, {H_kv} key/value heads), causal: your function raised RuntimeError: {str(err).splitlines()[0]}: a product met other than {H} key/value heads; expand both k and v with expand_kv(..., H // H_kv) before the two products (the weights (B, {H}, T_q, T_k) times a v of {H_kv} heads cannot broadcast)') from None
    assert not isinstance(out, tuple), f"got a tuple of {len(out)}: return only the output, not a tuple (the chapter's attention function also returns the weights; this one returns one tensor, weights @ v)"
    assert isinstance(out, torch.Tensor), f'return a torch tensor, got {type(out).__name__}'
    assert out.shape == q.shape, f'expected the shape of q, {tuple(q.shape)}, got {tuple(out.shape)}'
    ones = gqa_attention(q, k, torch.ones_like(v), False)
    assert isinstance(ones, torch.Tensor), f'return one tensor (the output), got {type(ones).__name__}'
    assert torch.allclose(ones, torch.ones_like(ones), atol=1e-05), f"the example with every value set to 1, no mask: each query's weights sum to 1 over the keys, so every output must be 1; yours range from {ones.min().item():.3f} to {ones.max().item():.3f}: take the softmax over the last axis (the keys, dim=-1), not dim=-2 (the queries)"
    plain = torch.softmax(q @ spread(k, n_rep).transpose(-2, -1) / 8 ** 0.5, dim=-1)
    unmasked = gqa_attention(q, k, v, False)
    masked = plain.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), 0.0)
    masked = masked / masked.sum(-1, keepdim=True) @ spread(v, n_rep)
    assert not (isinstance(unmasked, torch.Tensor) and unmasked.shape == masked.shape and torch.allclose(unmasked, masked, atol=1e-05)), 'the example with causal=False gave the causal outputs: your output ignores the causal flag; no key is hidden when causal is false, so apply the mask only `if causal:`'
    g = torch.Generator().manual_seed(5)
    q6 = torch.randn(2, 3, 6, 4, generator=g).transpose(1, 2)
    k2, v2 = (torch.randn(2, 3, 2, 4, generator=g).transpose(1, 2) for _ in range(2))
    reads = 'h % 2 (the 2 heads tiled 3 times: n_rep = H // H_kv = 3' if VARIANT['task'] == 'strided' else 'h // 3 (groups of 3: n_rep = H // H_kv = 3'
    hint = f'6 query heads over 2 key/value heads, d_k = 4, no mask: expected the scores divided by sqrt(q.shape[-1]) = 2 and query head h to read key/value head {reads}; an example with 4 over 2 cannot tell H // H_kv from H_kv); the inputs here come from a transpose, so use reshape, not view'
    try:
        out6 = gqa_attention(q6, k2, v2, causal=False)
    except RuntimeError as err:
        raise AssertionError(f'{hint}; your function raised {err}') from None
    k6, v6 = (spread(k2, 3), spread(v2, 3))
    want = torch.softmax(q6 @ k6.transpose(-2, -1) / 2.0, dim=-1) @ v6
    assert tuple(out6.shape) == (2, 6, 3, 4), f'{hint}; expected (2, 6, 3, 4), got {tuple(out6.shape)}'
    for scale, said in ((4.0, 'd_k = 4'), (1.0, 'nothing'), (8 ** 0.5, 'sqrt(d_k * H_kv) = sqrt(8)')):
        wrong = torch.softmax(q6 @ k6.transpose(-2, -1) / scale, dim=-1) @ v6
        assert not torch.allclose(out6, wrong, atol=1e-05), f'6 query heads over 2 key/value heads, d_k = 4, no mask: your outputs are those of scores divided by {said}; divide them by sqrt(q.shape[-1]) = sqrt(4) = 2'
    torch.testing.assert_close(out6, want, msg=lambda m: '; '.join([hint, *(line.strip() for line in m.splitlines() if line.strip() and (not line.startswith('Tensor-likes')))]))

@test_case(points=None, hidden=False)
def test_gqa_small_example(gqa_attention, q, k, v, expand_kv, VARIANT):
    import torch
    order = [0.0, 1.0, 0.0, 1.0] if VARIANT['task'] == 'strided' else [0.0, 0.0, 1.0, 1.0]
    heads = torch.arange(2.0).view((1, 1, 2, 1) if VARIANT['task'] == 'tokens' else (1, 2, 1, 1))
    try:
        expand_ok = expand_kv(heads, 2).flatten().tolist() == order
    except Exception:
        expand_ok = False
    assert expand_ok, f"expected your expand_kv (question 1) to turn heads 0, 1 into {', '.join([str(int(h)) for h in order])}; it does not yet, so this check cannot judge gqa_attention"
    import math
    import torch

    def spread(x, n_rep):
        if VARIANT['task'] == 'strided':
            return x.repeat(1, n_rep, 1, 1)
        return x.repeat_interleave(n_rep, dim=1)
    if VARIANT['task'] == 'tokens':
        k, v = (k.transpose(1, 2), v.transpose(1, 2))
    if VARIANT['task'] == 'tokens':
        heads_first = gqa_attention

        def gqa_attention(q, k, v, causal):
            return heads_first(q, k.transpose(1, 2), v.transpose(1, 2), causal)
    n_rep = q.shape[1] // k.shape[1]
    out = gqa_attention(q, k, v, causal=True)
    rows = int(torch.isnan(out).any(-1).sum())
    assert rows == 0, f'the example, causal: {rows} query rows are NaN, the softmax of a row whose every key is hidden: is the mask inverted? it must hide the future (the keys j > i, torch.ones(T_q, T_k).triu(1) marks them), never the past, and every query sees at least itself'
    k2, v2 = (spread(k, n_rep), spread(v, n_rep))
    zero_scores = q @ k2.transpose(-2, -1) / math.sqrt(8) * torch.ones(6, 6).tril()
    assert not torch.allclose(out, torch.softmax(zero_scores, dim=-1) @ v2, atol=1e-05), "the example, causal: your outputs are those of a softmax in which the hidden keys got a score of 0, which exp turns into a weight of 1 before normalising: set their scores to -inf (scores.masked_fill(future, float('-inf'))); a mask of zeros suits linear attention, not a softmax"
    free = torch.softmax(q @ spread(k, n_rep).transpose(-2, -1) / math.sqrt(8), dim=-1)
    assert not torch.allclose(out, free @ spread(v, n_rep), atol=1e-05), 'the example with causal=True gave the unmasked outputs: your output ignores the causal flag; when causal is true, hide the keys j > i before the softmax'
    assert torch.allclose(out[:, :, 0], spread(v, n_rep)[:, :, 0], atol=1e-06), 'with the causal mask the first query sees only the first key, so its output is the first value of its key/value head: is the mask applied to the scores before the softmax?'
    k2, v2 = (spread(k, n_rep), spread(v, n_rep))
    scores = q @ k2.transpose(-2, -1) / math.sqrt(8)
    scores = scores.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), float('-inf'))
    want = torch.softmax(scores, dim=-1) @ v2
    assert torch.allclose(out, want, atol=1e-05), 'the outputs differ from softmax(Q K^T / sqrt(d_k)) V with the causal mask: check the division by sqrt(d_k) (of the scores, before the softmax) and that the softmax runs over the keys (the last axis)'

@test_case(points=None, hidden=False)
def test_gqa_house_rules(gqa_attention, q, k, v, expand_kv, VARIANT):
    import torch
    order = [0.0, 1.0, 0.0, 1.0] if VARIANT['task'] == 'strided' else [0.0, 0.0, 1.0, 1.0]
    heads = torch.arange(2.0).view((1, 1, 2, 1) if VARIANT['task'] == 'tokens' else (1, 2, 1, 1))
    try:
        expand_ok = expand_kv(heads, 2).flatten().tolist() == order
    except Exception:
        expand_ok = False
    assert expand_ok, f"expected your expand_kv (question 1) to turn heads 0, 1 into {', '.join([str(int(h)) for h in order])}; it does not yet, so this check cannot judge gqa_attention"
    from attnbook.exercise_checks.grading import guarded

    def spread(x, n_rep):
        if VARIANT['task'] == 'strided':
            return x.repeat(1, n_rep, 1, 1)
        return x.repeat_interleave(n_rep, dim=1)
    if VARIANT['task'] == 'tokens':
        k, v = (k.transpose(1, 2), v.transpose(1, 2))
    if VARIANT['task'] == 'tokens':
        heads_first = gqa_attention

        def gqa_attention(q, k, v, causal):
            return heads_first(q, k.transpose(1, 2), v.transpose(1, 2), causal)
    n_rep, shape = (q.shape[1] // k.shape[1], tuple(q.shape))
    out = guarded(gqa_attention, names=('scaled_dot_product_attention',))(q, k, v, True)
    assert out.shape == shape, f'expected the shape of q, {shape}, got {tuple(out.shape)}'
    k2, v2 = (spread(k, n_rep), spread(v, n_rep))
    scores = (q @ k2.transpose(-2, -1) / 8 ** 0.5).masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), float('-inf'))
    torch.testing.assert_close(out, torch.softmax(scores, dim=-1) @ v2, atol=1e-05, rtol=1e-05, msg=lambda m: 'the example, causal: expected softmax(Q K^T / sqrt(8)) V with the key/value heads ' + ('tiled (query head h reads head h % H_kv); ' if VARIANT['task'] == 'strided' else 'repeated in place; ') + '; '.join([line.strip() for line in m.splitlines() if line.strip() and (not line.startswith('Tensor-likes'))]))
    on_meta = [t.to('meta') for t in (q, k, v)]
    try:
        meta = gqa_attention(*on_meta, True)
    except (RuntimeError, NotImplementedError, TypeError) as err:
        raise AssertionError(f'inputs on the meta device failed ({err}): build the mask on q.device (torch.ones(..., device=q.device)), never on the CPU by default') from None
    assert meta.device.type == 'meta' and tuple(meta.shape) == shape, f'inputs on the meta device gave a {tuple(meta.shape)} output on {meta.device}'
    big = gqa_attention(300.0 * q, k, v, True)
    bad = int((~torch.isfinite(big)).sum())
    assert bad == 0, f"the example's queries times 300 (scores of order 1000), causal: {bad} of {big.numel()} outputs are inf or NaN; exp(s) overflows float32 once s > 88: use torch.softmax, or subtract each row's maximum before exp"
    q0 = q.clone()
    q0[:, :, 3] = 0.0
    got = gqa_attention(q0, k, v, True)[:, :, 3]
    want = spread(v, n_rep)[:, :, :4].mean(-2)
    assert torch.allclose(got, want, atol=1e-05), f'the example with query 3 set to zeros, causal: its scores on keys 0..3 are exactly 0, an ordinary score, so its output must be the mean of the values of keys 0..3; yours differs by up to {float((got - want).abs().max()):.3g}: hide the keys the mask names (the future), never a score because it is 0'

@test_case(points=None, hidden=False)
def test_gqa_decoding_in_float64_at_width_4(gqa_attention, expand_kv, VARIANT):
    import re
    import torch
    order = [0.0, 1.0, 0.0, 1.0] if VARIANT['task'] == 'strided' else [0.0, 0.0, 1.0, 1.0]
    heads = torch.arange(2.0).view((1, 1, 2, 1) if VARIANT['task'] == 'tokens' else (1, 2, 1, 1))
    try:
        expand_ok = expand_kv(heads, 2).flatten().tolist() == order
    except Exception:
        expand_ok = False
    assert expand_ok, f"expected your expand_kv (question 1) to turn heads 0, 1 into {', '.join([str(int(h)) for h in order])}; it does not yet, so this check cannot judge gqa_attention"
    import torch
    if VARIANT['task'] == 'tokens':
        heads_first = gqa_attention

        def gqa_attention(q, k, v, causal):
            return heads_first(q, k.transpose(1, 2), v.transpose(1, 2), causal)
    g = torch.Generator().manual_seed(7)
    q = torch.randn(1, 2, 1, 4, generator=g, dtype=torch.float64)
    k, v = (torch.randn(1, 1, 3, 4, generator=g, dtype=torch.float64) for _ in range(2))
    try:
        out = gqa_attention(q, k, v, True)
    except RuntimeError as err:
        if re.search('Double|Float|dtype|scalar type', str(err)):
            raise AssertionError(f"float64 inputs met a float32 tensor that your code (or your expand_kv, question 1) made: keep q's dtype (no .float(), no torch.zeros without dtype=); your function raised RuntimeError: {str(err).splitlines()[0]}") from None
        raise AssertionError(f"one query at the last of 3 positions (T_q = 1, T_k = 3, a decoding step with a cache): the causal mask must be (T_q, T_k) = (1, 3): read the lengths from q.shape[-2] and k.shape[-2], not from the notebook's T; your function raised RuntimeError: {str(err).splitlines()[0]}") from None
    assert out.shape == (1, 2, 1, 4) and out.dtype == torch.float64, f'float64 inputs, T_q = 1: expected a float64 (1, 2, 1, 4) output, got {out.dtype} {tuple(out.shape)}'
    weights = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1)
    top_left = v[:, :, :1].expand(1, 2, 1, 4)
    saw = "your output is key 0's value: your mask is aligned at the top-left (as PyTorch's is_causal), so the one query saw only key 0; align it at the bottom-right" if torch.allclose(out, top_left, atol=1e-12) else 'the scores are divided by sqrt(q.shape[-1]) = 2 (not a fixed number), and every step stays in float64'
    torch.testing.assert_close(out, weights @ v, atol=1e-12, rtol=1e-12, msg=f'one query at the last of 3 positions, d_k = 4, float64: it sees every key (the mask is (T_q, T_k), aligned at the bottom-right): {saw}')
    q2 = torch.randn(1, 2, 2, 4, generator=g, dtype=torch.float64)
    k4, v4 = (torch.randn(1, 1, 4, 4, generator=g, dtype=torch.float64) for _ in range(2))
    hint = "two queries at the last 2 of 4 positions (T_q = 2, T_k = 4, a decoding step with a cache): the causal mask must be (T_q, T_k) = (2, 4), not (T, T) from q's length alone or the notebook's T; query i sits at position T_k - T_q + i and may attend to the keys j <= T_k - T_q + i (torch.ones(T_q, T_k).triu(T_k - T_q + 1) marks the future)"
    try:
        out = gqa_attention(q2, k4, v4, True)
    except RuntimeError as err:
        raise AssertionError(f'{hint}; your function raised RuntimeError: {str(err).splitlines()[0]}') from None
    assert tuple(out.shape) == (1, 2, 2, 4), f'{hint}; expected the shape of q, (1, 2, 2, 4), got {tuple(out.shape)}'
    future = torch.tensor([[False, False, False, True], [False, False, False, False]])
    weights = torch.softmax((q2 @ k4.transpose(-2, -1) / 2.0).masked_fill(future, float('-inf')), dim=-1)
    scores = q2 @ k4.transpose(-2, -1) / 2.0
    if torch.allclose(out, torch.softmax(scores.masked_fill(torch.ones(2, 4, dtype=torch.bool).triu(1), float('-inf')), dim=-1) @ v4, atol=1e-12):
        hint = "your mask is aligned at the top-left (as PyTorch's is_causal): query 0 saw key 0 only and query 1 keys 0, 1; query i sits at position T_k - T_q + i: mark the future with torch.ones(T_q, T_k).triu(T_k - T_q + 1)"
    elif torch.allclose(out, torch.softmax(scores * ~future, dim=-1) @ v4, atol=1e-12):
        hint = "the hidden key got a score of 0, which exp turns into a weight of 1 before normalising: set the hidden scores to -inf (masked_fill(future, float('-inf')))"
    torch.testing.assert_close(out, weights @ v4, atol=1e-12, rtol=1e-12, msg=f'two queries at the last 2 of 4 positions: expected query 0 to see keys 0..2 and query 1 all 4; {hint}')

