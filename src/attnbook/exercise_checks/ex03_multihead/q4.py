from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.25, 0.25]

@test_case(points=None, hidden=False)
def test_cut_into_q_k_v_first(fused_qkv_heads, VARIANT):
    import torch
    x = torch.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    eye = torch.eye(4)
    q, k, v = fused_qkv_heads(x, torch.cat([eye, 2 * eye, 3 * eye], dim=1), 2)
    assert q.shape == k.shape == v.shape == (1, 2, 1, 2), f'each of q, k, v is (B, H, T, d_k) = (1, 2, 1, 2), got {tuple(q.shape)}'
    inter = VARIANT['task'] == 'interleaved'
    want_k, want_v = ([[2.0, 6.0], [4.0, 8.0]], [6.0, 12.0]) if inter else ([[2.0, 4.0], [6.0, 8.0]], [9.0, 12.0])
    assert k[0, :, 0].tolist() == want_k, f'the keys are columns D..2D-1 of x @ W_qkv, here 2x = [2, 4, 6, 8] in two heads, {want_k}, got {k[0, :, 0].tolist()}: cut the product into queries, keys and values first, then split each into heads'
    assert v[0, 1, 0].tolist() == want_v, f'head 1 of the values is {want_v}, got {v[0, 1, 0].tolist()}'

@test_case(points=None, hidden=False)
def test_fused_house_rules(fused_qkv_heads, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import torch

    def reference_split(t, n_head):
        if VARIANT['task'] == 'seqfirst':
            t = t.transpose(0, 1)
        if VARIANT['task'] == 'interleaved':
            return t.unflatten(-1, (-1, n_head)).permute(0, 3, 1, 2)
        return t.unflatten(-1, (n_head, -1)).transpose(1, 2)
    x = torch.arange(8.0).reshape(1, 2, 4)
    q, k, v = guarded(fused_qkv_heads, names=('_in_projection_packed',))(x, torch.eye(4).repeat(1, 3), 2)
    want = reference_split(x, 2)
    assert tuple(v.shape) == tuple(want.shape), f'expected {tuple(want.shape)}, got {tuple(v.shape)}'
    for name, t in zip('qkv', (q, k, v)):
        assert torch.equal(t, want), f'W_qkv = [I | I | I]: {name} is x split into 2 heads, {want.tolist()}, got {t.tolist()}'

