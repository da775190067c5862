from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.2, 0.1, 0.2]

@test_case(points=None, hidden=False)
def test_the_first_steps(decode_step):
    import torch
    q, k = (torch.tensor([1.0, 0.0]), torch.tensor([2.0, 0.0]))
    out, (K, V) = decode_step(q, k, torch.tensor([5.0, 7.0, 9.0]), None)
    assert K.shape == (1, 2) and V.shape == (1, 3), f'after the first token the cache holds one key (1, d_k) and one value (1, d_v), got {tuple(K.shape)} and {tuple(V.shape)}: append the new key and value to the cache before attending'
    torch.testing.assert_close(out, torch.tensor([5.0, 7.0, 9.0]), msg='a single key gets all the weight')
    out, (K, V) = decode_step(q, torch.tensor([0.0, 0.0]), torch.tensor([1.0, 1.0, 1.0]), (K, V))
    assert K.shape == (2, 2) and V.shape == (2, 3), 'the cache grows by one token per step'
    w = torch.softmax(torch.tensor([2.0, 0.0]) / 2 ** 0.5, dim=0)
    torch.testing.assert_close(out, w[0] * torch.tensor([5.0, 7.0, 9.0]) + w[1] * torch.ones(3), msg='the second token attends to both cached keys, scaled by sqrt(d_k)')

@test_case(points=None, hidden=False)
def test_decode_house_rules(decode_step):
    from attnbook.exercise_checks.grading import guarded
    import torch
    cache = (torch.ones(2, 3), torch.ones(2, 1))
    out, (K, V) = guarded(decode_step, names=('scaled_dot_product_attention', 'multi_head_attention_forward'))(torch.ones(3), torch.zeros(3), torch.zeros(1), cache)
    assert tuple(K.shape) == (3, 3), f'the cache grows by one token: expected keys (3, 3), got {tuple(K.shape)}'
    w = torch.softmax(torch.tensor([3.0, 3.0, 0.0]) / 3 ** 0.5, dim=0)
    want = w[0] + w[1]
    torch.testing.assert_close(out, torch.tensor([want]), msg=f'q = (1, 1, 1) over two cached keys of ones (values 1) and a new key of zeros (value 0): expected output [{float(want):.4f}], got {out.tolist()}')

@test_case(points=None, hidden=False)
def test_two_steps_keep_the_order(decode_step):
    import torch
    k0, k1 = (torch.tensor([1.0, 0.0]), torch.tensor([0.0, 3.0]))
    v0, v1 = (torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]))
    _, cache = decode_step(torch.ones(2), k0, v0, None)
    out, (K, V) = decode_step(torch.tensor([0.0, 2.0]), k1, v1, cache)
    assert tuple(K.shape) == (2, 2), f'after two steps the cache holds two keys (2, d_k) = (2, 2), got {tuple(K.shape)}'
    assert K.tolist() == [k0.tolist(), k1.tolist()] and V.tolist() == [v0.tolist(), v1.tolist()], f'after two steps the cached keys should be [k0, k1] = {[k0.tolist(), k1.tolist()]}, oldest first, got {K.tolist()}: append the new key after the cached ones (torch.cat([cache_K, new], dim=-2)), so that row t stays token t'
    w = torch.softmax(torch.tensor([0.0, 6.0]) / 2 ** 0.5, dim=0)
    torch.testing.assert_close(out, w[0] * v0 + w[1] * v1, msg=f'step 2 attends to k0 and k1 with weights {w.tolist()}, expected output {(w[0] * v0 + w[1] * v1).tolist()}, got {out.tolist()}')
    heads = torch.arange(48.0).reshape(2, 3, 2, 4).sin().transpose(1, 2)
    try:
        _, cache = decode_step(heads[:, :, 0], heads[:, :, 0], heads[:, :, 0], None)
        out, _ = decode_step(heads[:, :, 1], heads[:, :, 1], heads[:, :, 1], cache)
    except RuntimeError as error:
        raise AssertionError(f'q, k, v of shape (2, 2, 4) taken from heads split by a transpose (not contiguous in memory) raised RuntimeError: {error}; use .reshape or matrix products over the leading axes, not .view') from None
    two = heads[:, :, :2]
    w = torch.softmax((two @ heads[:, :, 1, :, None])[..., 0] / 2.0, dim=-1)
    want = (w[..., None] * two).sum(-2)
    torch.testing.assert_close(out, want, msg=f'batch (2, 2) of heads split by a transpose, step 2: expected {want.tolist()}, got {out.tolist()}')

