from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_split_shape(split_heads, x, VARIANT):
    import torch

    def reference_split(t, n_head):
        if VARIANT['task'] == 'seqfirst':
            t = t.transpose(0, 1)
        if VARIANT['task'] == 'interleaved':
            return t.unflatten(-1, (-1, n_head)).permute(0, 3, 1, 2)
        return t.unflatten(-1, (n_head, -1)).transpose(1, 2)
    rule = {'contiguous': 'head h must hold features h*d_k .. (h+1)*d_k - 1 of every token', 'interleaved': 'head h must hold features h, h + H, h + 2H, ... of every token', 'seqfirst': 'head h of sequence b must hold features h*d_k .. (h+1)*d_k - 1 of token x[t, b], for every token t'}[VARIANT['task']]
    x_t = x.transpose(1, 2).contiguous().transpose(1, 2)
    for n_head, d_k in [(3, 4), (4, 3), (6, 2)]:
        for what, xs in (('x', x), ('a transposed view of x', x_t)):
            try:
                out = split_heads(xs, n_head)
            except RuntimeError as err:
                raise AssertionError(f'split_heads raised RuntimeError on {what} ({err}): a tensor that is a transposed view is not contiguous, so .view cannot reshape it; use reshape (or .contiguous() first)') from None
            assert isinstance(out, torch.Tensor), f'return a torch tensor, got {type(out).__name__}'
            assert out.shape == (2, n_head, 5, d_k), f'with {n_head} heads expected shape (B, H, T, d_k) = (2, {n_head}, 5, {d_k}), got {tuple(out.shape)}'
            assert torch.equal(out, reference_split(x, n_head)), f'{what}, {n_head} heads: {rule}'

@test_case(points=None, hidden=False)
def test_split_one_head(split_heads, x, VARIANT):
    import torch

    def reference_split(t, n_head):
        if VARIANT['task'] == 'seqfirst':
            t = t.transpose(0, 1)
        if VARIANT['task'] == 'interleaved':
            return t.unflatten(-1, (-1, n_head)).permute(0, 3, 1, 2)
        return t.unflatten(-1, (n_head, -1)).transpose(1, 2)
    out = split_heads(x, 1)
    assert out.shape == (2, 1, 5, 12), f'one head: expected shape (2, 1, 5, 12), got {tuple(out.shape)}'
    assert torch.equal(out[:, 0], reference_split(x, 1)[:, 0]), 'with one head, that head holds every feature of every token'
    for what, xs in (('bfloat16', x.to(torch.bfloat16)), ('requiring grad', x.clone().requires_grad_(True))):
        try:
            out = split_heads(xs, 3)
        except (RuntimeError, TypeError) as err:
            raise AssertionError(f'split_heads failed on a tensor {what} ({type(err).__name__}: {err}): stay in PyTorch (reshape, transpose or permute), NumPy has no bfloat16 and cannot hold a gradient') from None
        assert out.dtype == xs.dtype and torch.equal(out.detach().float(), reference_split(x.to(xs.dtype).float(), 3)), f'a tensor {what}: expected its 3 heads, in its own dtype {xs.dtype}'

@test_case(points=None, hidden=False)
def test_split_keeps_tokens_apart(split_heads, VARIANT):
    import torch
    seq, inter = (VARIANT['task'] == 'seqfirst', VARIANT['task'] == 'interleaved')
    xs = torch.arange(12, dtype=torch.float32).reshape((3, 1, 4) if seq else (1, 3, 4))
    out = split_heads(xs, 2)
    assert out.shape == (1, 2, 3, 2), f'expected (B, H, T, d_k) = (1, 2, 3, 2), got {tuple(out.shape)}'
    want, which = ([1.0, 3.0], '1 and 3') if inter else ([2.0, 3.0], '2 and 3')
    how = {'contiguous': 'reshape to (B, T, H, d_k) first, then swap the T and H axes (transpose)', 'interleaved': 'reshape to (B, T, d_k, H) first (feature f is position f // H of head f % H), then move the H axis to the front of T (permute)', 'seqfirst': 'reshape to (T, B, H, d_k) first, then move the axes to (B, H, T, d_k) (permute)'}
    assert out[0, 1, 0].tolist() == want, f'head 1 of token 0 must hold features {which} of token 0, {want}, got {out[0, 1, 0].tolist()}: ' + how[VARIANT['task']] + '; a direct view as (B, H, T, d_k) mixes the tokens up'

@test_case(points=None, hidden=False)
def test_split_house_rules(split_heads, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import torch
    seq, inter = (VARIANT['task'] == 'seqfirst', VARIANT['task'] == 'interleaved')
    xs = torch.arange(12.0).reshape((2, 1, 6) if seq else (1, 2, 6))
    out = guarded(split_heads, libraries=('einops',))(xs, 2)
    assert tuple(out.shape) == (1, 2, 2, 3), f'expected (1, 2, 2, 3), got {tuple(out.shape)}'
    want, which = ([[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]], '1, 3, 5') if inter else ([[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]], '3, 4, 5')
    assert out[0, 1].tolist() == want, f'head 1 holds features {which} of each token, {want}, got {out[0, 1].tolist()}'

