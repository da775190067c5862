from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.15, 0.15, 0.15, 0.15]

@test_case(points=None, hidden=False)
def test_layer_shapes(multihead_attention, x, W_q, W_k, W_v, W_o, VARIANT):
    import torch

    def lay(t):
        return t.transpose(0, 1) if VARIANT['task'] == 'seqfirst' else t

    def reference(x, Wq, Wk, Wv, Wo, H):
        x = lay(x)
        B, T, D = x.shape
        inter = VARIANT['task'] == 'interleaved'

        def split(t):
            return t.reshape(B, T, D // H, H).permute(0, 3, 1, 2) if inter else t.reshape(B, T, H, D // H).transpose(1, 2)
        q, k, v = (split(x @ Wq), split(x @ Wk), split(x @ Wv))
        w = torch.softmax(q @ k.transpose(-2, -1) / (D // H) ** 0.5, dim=-1)
        heads = (w @ v).permute(0, 2, 3, 1) if inter else (w @ v).transpose(1, 2)
        return (lay(heads.reshape(B, T, D) @ Wo), w)
    out, w = multihead_attention(x, W_q, W_k, W_v, W_o, 3)
    ref_out, ref_w = reference(x, W_q, W_k, W_v, W_o, 3)
    axes = '(T, B, D)' if VARIANT['task'] == 'seqfirst' else '(B, T, D)'
    assert out.shape == ref_out.shape, f'output should be {axes} = {tuple(ref_out.shape)}, got {tuple(out.shape)}'
    assert w.shape == (2, 3, 5, 5), f'weights should be (B, H, T, T) = (2, 3, 5, 5), got {tuple(w.shape)}'
    torch.testing.assert_close(w, ref_w, atol=1e-05, rtol=0, msg='the weights of the example, 3 heads')
    torch.testing.assert_close(out, ref_out, atol=1e-05, rtol=0, msg='the output of the example, 3 heads')

@test_case(points=None, hidden=False)
def test_layer_weights_are_distributions(multihead_attention, x, W_q, W_k, W_v, W_o, VARIANT):
    import torch

    def lay(t):
        return t.transpose(0, 1) if VARIANT['task'] == 'seqfirst' else t

    def reference(x, Wq, Wk, Wv, Wo, H):
        x = lay(x)
        B, T, D = x.shape
        inter = VARIANT['task'] == 'interleaved'

        def split(t):
            return t.reshape(B, T, D // H, H).permute(0, 3, 1, 2) if inter else t.reshape(B, T, H, D // H).transpose(1, 2)
        q, k, v = (split(x @ Wq), split(x @ Wk), split(x @ Wv))
        w = torch.softmax(q @ k.transpose(-2, -1) / (D // H) ** 0.5, dim=-1)
        heads = (w @ v).permute(0, 2, 3, 1) if inter else (w @ v).transpose(1, 2)
        return (lay(heads.reshape(B, T, D) @ Wo), w)
    _, w = multihead_attention(x, W_q, W_k, W_v, W_o, 2)
    assert w.shape == (2, 2, 5, 5), f'2 heads: weights should be (B, H, T, T) = (2, 2, 5, 5), got {tuple(w.shape)}'
    assert bool((w >= 0).all()), 'weights must be non-negative'
    torch.testing.assert_close(w.sum(dim=-1), torch.ones(2, 2, 5), atol=1e-05, rtol=0, msg='each row of weights (one query, all keys) must sum to 1')
    torch.testing.assert_close(w, reference(x, W_q, W_k, W_v, W_o, 2)[1], atol=1e-05, rtol=0, msg='2 heads of width 6: scale by sqrt(6), the width of a head')

@test_case(points=None, hidden=False)
def test_layer_values_on_the_example(multihead_attention, x, W_q, W_k, W_v, W_o, VARIANT):
    import torch

    def lay(t):
        return t.transpose(0, 1) if VARIANT['task'] == 'seqfirst' else t

    def reference(x, Wq, Wk, Wv, Wo, H):
        x = lay(x)
        B, T, D = x.shape
        inter = VARIANT['task'] == 'interleaved'

        def split(t):
            return t.reshape(B, T, D // H, H).permute(0, 3, 1, 2) if inter else t.reshape(B, T, H, D // H).transpose(1, 2)
        q, k, v = (split(x @ Wq), split(x @ Wk), split(x @ Wv))
        w = torch.softmax(q @ k.transpose(-2, -1) / (D // H) ** 0.5, dim=-1)
        heads = (w @ v).permute(0, 2, 3, 1) if inter else (w @ v).transpose(1, 2)
        return (lay(heads.reshape(B, T, D) @ Wo), w)
    out, w = multihead_attention(x, W_q, W_k, W_v, W_o, 3)
    ref_out, ref_w = reference(x, W_q, W_k, W_v, W_o, 3)
    torch.testing.assert_close(w[0, 1, 2], ref_w[0, 1, 2], atol=0.0001, rtol=0, msg="the weights of head 1, query 2 differ: per head, scores = (x W_q)(x W_k)^T / sqrt(d_k) with d_k = D / H = 4 (not D, and not unscaled), keys from W_k, row vectors (x @ W), and your variant's heads")
    torch.testing.assert_close(lay(out)[1, 3, :4], lay(ref_out)[1, 3, :4], atol=0.0001, rtol=0, msg='the weights agree but the output differs: merge the heads back to (B, T, D) and multiply by W_o (x @ W_o, not W_o @ x)')

@test_case(points=None, hidden=False)
def test_layer_house_rules(multihead_attention, x, W_q, W_k, W_v, W_o, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import torch

    def lay(t):
        return t.transpose(0, 1) if VARIANT['task'] == 'seqfirst' else t

    def reference(x, Wq, Wk, Wv, Wo, H):
        x = lay(x)
        B, T, D = x.shape
        inter = VARIANT['task'] == 'interleaved'

        def split(t):
            return t.reshape(B, T, D // H, H).permute(0, 3, 1, 2) if inter else t.reshape(B, T, H, D // H).transpose(1, 2)
        q, k, v = (split(x @ Wq), split(x @ Wk), split(x @ Wv))
        w = torch.softmax(q @ k.transpose(-2, -1) / (D // H) ** 0.5, dim=-1)
        heads = (w @ v).permute(0, 2, 3, 1) if inter else (w @ v).transpose(1, 2)
        return (lay(heads.reshape(B, T, D) @ Wo), w)
    out, w = guarded(multihead_attention, names=('scaled_dot_product_attention', 'multi_head_attention_forward'))(x, W_q, W_k, W_v, W_o, 4)
    assert tuple(w.shape) == (2, 4, 5, 5), f'4 heads: weights should be (2, 4, 5, 5), got {tuple(w.shape)}'
    torch.testing.assert_close(out, reference(x, W_q, W_k, W_v, W_o, 4)[0], atol=1e-05, rtol=0, msg='the output of the example, 4 heads of width 3')
    x64, W64 = (x.double(), [W.double() for W in (W_q, W_k, W_v, W_o)])
    out, w = multihead_attention(x64, *W64, 3)
    assert out.dtype == torch.float64 and w.dtype == torch.float64, f'float64 in must give float64 out, got {out.dtype} and {w.dtype}: no float32 buffers'
    ref_out, ref_w = reference(x64, W64[0], W64[1], W64[2], W64[3], 3)
    torch.testing.assert_close(w, ref_w, atol=1e-09, rtol=1e-09, msg='the example in float64: weights at 1e-9 (a softmax in float32 is off by about 1e-8)')

