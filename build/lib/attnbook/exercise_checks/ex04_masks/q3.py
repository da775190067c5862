from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [0, 0]

@test_case(points=None, hidden=False)
def test_masked_attention_shapes(masked_attention, q, k, v):
    import torch
    mask = torch.ones(5, 5, dtype=torch.bool)
    out, w = masked_attention(q, k, v, mask)
    assert w.shape == (2, 5, 5), f'weights should be (B, T_q, T_k) = (2, 5, 5), got {tuple(w.shape)}'
    assert out.shape == (2, 5, 3), f'output should be (B, T_q, d_v) = (2, 5, 3), got {tuple(out.shape)}'

@test_case(points=None, hidden=False)
def test_masked_weights(masked_attention, q, k, v):
    import torch
    mask = torch.tensor([[1, 0, 0, 1, 0], [1, 1, 0, 0, 0], [0, 1, 1, 1, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]], dtype=torch.bool)
    _, w = masked_attention(q, k, v, mask)
    assert (w[:, ~mask] == 0).all(), 'the weights of masked pairs must be exactly 0'
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 5), atol=1e-06, rtol=0, msg='every row of weights must sum to 1')

