from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [0, 0, 0, 0]

@test_case(points=None, hidden=False)
def test_layer_shapes(multihead_attention, x, W_q, W_k, W_v, W_o):
    out, w = multihead_attention(x, W_q, W_k, W_v, W_o, 3)
    assert out.shape == (2, 5, 12), f'output should be (B, T, D) = (2, 5, 12), got {tuple(out.shape)}'
    assert w.shape == (2, 3, 5, 5), f'weights should be (B, H, T, T) = (2, 3, 5, 5), got {tuple(w.shape)}'

@test_case(points=None, hidden=False)
def test_layer_weights_are_distributions(multihead_attention, x, W_q, W_k, W_v, W_o):
    import torch
    _, w = multihead_attention(x, W_q, W_k, W_v, W_o, 3)
    assert bool((w >= 0).all()), 'weights must be non-negative'
    torch.testing.assert_close(w.sum(dim=-1), torch.ones(2, 3, 5), atol=1e-05, rtol=0, msg='each row of weights (one query, all keys) must sum to 1')

@test_case(points=None, hidden=False)
def test_layer_values_on_the_example(multihead_attention, x, W_q, W_k, W_v, W_o):
    import torch
    out, w = multihead_attention(x, W_q, W_k, W_v, W_o, 3)
    want_w = torch.tensor([0.2088466, 0.3455275, 0.157989, 0.0667862, 0.2208508])
    torch.testing.assert_close(w[0, 1, 2], want_w, atol=0.0001, rtol=0, msg='the weights of head 1, query 2 differ: per head, scores = (x W_q)(x W_k)^T / sqrt(d_k) with d_k = D / H = 4 (not D, and not unscaled), keys from W_k, row vectors (x @ W)')
    want_out = torch.tensor([-0.047689, 0.8703361, 1.2919313, -0.0941606])
    torch.testing.assert_close(out[1, 3, :4], want_out, atol=0.0001, rtol=0, msg='the weights agree but the output differs: merge the heads back to (B, T, D) and multiply by W_o (x @ W_o, not W_o @ x)')

@test_case(points=None, hidden=False)
def test_layer_house_rules(multihead_attention, x, W_q, W_k, W_v, W_o):
    from attnbook.exercise_checks.grading import guarded
    out, w = guarded(multihead_attention, names=('scaled_dot_product_attention', 'multi_head_attention_forward'))(x, W_q, W_k, W_v, W_o, 3)
    assert tuple(w.shape) == (2, 3, 5, 5), f'weights should be (2, 3, 5, 5), got {tuple(w.shape)}'

