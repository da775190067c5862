from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.25, 0.25]

@test_case(points=None, hidden=False)
def test_cut_into_q_k_v_first(fused_qkv_heads):
    import torch
    x = torch.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    eye = torch.eye(4)
    q, k, v = fused_qkv_heads(x, torch.cat([eye, 2 * eye, 3 * eye], dim=1), 2)
    assert q.shape == k.shape == v.shape == (1, 2, 1, 2), f'each of q, k, v is (B, H, T, d_k) = (1, 2, 1, 2), got {tuple(q.shape)}'
    assert k[0, :, 0].tolist() == [[2.0, 4.0], [6.0, 8.0]], f'the keys are columns D..2D-1 of x @ W_qkv, here 2x = [2, 4, 6, 8] in two heads, got {k[0, :, 0].tolist()}: cut the product into queries, keys and values first, then split each into heads'
    assert v[0, 1, 0].tolist() == [9.0, 12.0], f'head 1 of the values is [9, 12], got {v[0, 1, 0].tolist()}'

@test_case(points=None, hidden=False)
def test_fused_house_rules(fused_qkv_heads):
    from attnbook.exercise_checks.grading import guarded
    import torch
    x = torch.arange(8.0).reshape(1, 2, 4)
    q, k, v = guarded(fused_qkv_heads, names=('_in_projection_packed',))(x, torch.eye(4).repeat(1, 3), 2)
    assert tuple(v.shape) == (1, 2, 2, 2), f'expected (1, 2, 2, 2), got {tuple(v.shape)}'
    want = x.reshape(1, 2, 2, 2).transpose(1, 2)
    for name, t in zip('qkv', (q, k, v)):
        assert torch.equal(t, want), f'W_qkv = [I | I | I]: {name} is x split into 2 heads, {want.tolist()}, got {t.tolist()}'

