from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_split_shape(split_heads, x):
    import torch

    def reference_split(t, n_head):
        B, T, D = t.shape
        return t.reshape(B, T, n_head, D // n_head).transpose(1, 2)
    x_t = x.transpose(1, 2).contiguous().transpose(1, 2)
    for n_head, d_k in [(3, 4), (4, 3), (6, 2)]:
        for what, xs in (('x', x), ('a transposed view of x', x_t)):
            try:
                out = split_heads(xs, n_head)
            except RuntimeError as err:
                raise AssertionError(f'split_heads raised RuntimeError on {what} ({err}): a tensor that is a transposed view is not contiguous, so .view cannot reshape it; use reshape (or .contiguous() first)') from None
            assert isinstance(out, torch.Tensor), f'return a torch tensor, got {type(out).__name__}'
            assert out.shape == (2, n_head, 5, d_k), f'with {n_head} heads expected shape (B, H, T, d_k) = (2, {n_head}, 5, {d_k}), got {tuple(out.shape)}'
            assert torch.equal(out, reference_split(x, n_head)), f'{what}, {n_head} heads: head h must hold features h*d_k .. (h+1)*d_k - 1 of every token'

@test_case(points=None, hidden=False)
def test_split_one_head(split_heads, x):
    import torch
    out = split_heads(x, 1)
    assert out.shape == (2, 1, 5, 12), f'one head: expected shape (2, 1, 5, 12), got {tuple(out.shape)}'
    assert torch.equal(out[:, 0], x), 'with one head, that head holds every feature of every token'
    for what, xs in (('bfloat16', x.to(torch.bfloat16)), ('requiring grad', x.clone().requires_grad_(True))):
        try:
            out = split_heads(xs, 3)
        except (RuntimeError, TypeError) as err:
            raise AssertionError(f'split_heads failed on a tensor {what} ({type(err).__name__}: {err}): stay in PyTorch (reshape and transpose), NumPy has no bfloat16 and cannot hold a gradient') from None
        assert out.dtype == xs.dtype and torch.equal(out.detach().float(), x.to(xs.dtype).float().reshape(2, 5, 3, 4).transpose(1, 2)), f'a tensor {what}: expected its 3 heads, in its own dtype {xs.dtype}'

@test_case(points=None, hidden=False)
def test_split_keeps_tokens_apart(split_heads):
    import torch
    xs = torch.arange(12, dtype=torch.float32).reshape(1, 3, 4)
    out = split_heads(xs, 2)
    assert out.shape == (1, 2, 3, 2), f'expected (B, H, T, d_k) = (1, 2, 3, 2), got {tuple(out.shape)}'
    assert out[0, 1, 0].tolist() == [2.0, 3.0], f'head 1 of token 0 must hold features 2 and 3 of token 0, [2.0, 3.0], got {out[0, 1, 0].tolist()}: reshape to (B, T, H, d_k) first, then swap the T and H axes (transpose); a direct view as (B, H, T, d_k) mixes the tokens up'

@test_case(points=None, hidden=False)
def test_split_house_rules(split_heads):
    from attnbook.exercise_checks.grading import guarded
    import torch
    xs = torch.arange(12.0).reshape(1, 2, 6)
    out = guarded(split_heads, libraries=('einops',))(xs, 2)
    assert tuple(out.shape) == (1, 2, 2, 3), f'expected (1, 2, 2, 3), got {tuple(out.shape)}'
    assert out[0, 1].tolist() == [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]], f'head 1 holds features 3, 4, 5 of each token, [[3, 4, 5], [9, 10, 11]], got {out[0, 1].tolist()}'

