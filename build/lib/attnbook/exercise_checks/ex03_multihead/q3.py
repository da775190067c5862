from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [0, 0]

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

