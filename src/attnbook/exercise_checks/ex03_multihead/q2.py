from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_merge_shape(merge_heads, VARIANT):
    import torch

    def reference_merge(t):
        B, H, T, d_k = t.shape
        if VARIANT['task'] == 'interleaved':
            return t.permute(0, 2, 3, 1).reshape(B, T, H * d_k)
        merged = t.transpose(1, 2).reshape(B, T, H * d_k)
        return merged.transpose(0, 1) if VARIANT['task'] == 'seqfirst' else merged
    rule = {'contiguous': "token t of the merged tensor holds head 0's features of token t, then head 1's, ...", 'interleaved': 'token t of the merged tensor holds feature i of head h at position i * H + h', 'seqfirst': "row [t, b] of the merged (T, B, D) tensor holds head 0's features of token t of sequence b, then head 1's, ..."}[VARIANT['task']]
    heads = torch.arange(120.0).reshape(2, 3, 5, 4)
    out, want = (merge_heads(heads), reference_merge(heads))
    axes = '(T, B, H * d_k)' if VARIANT['task'] == 'seqfirst' else '(B, T, H * d_k)'
    assert isinstance(out, torch.Tensor), f'return a torch tensor, got {type(out).__name__}'
    assert out.shape == want.shape, f'expected shape {axes} = {tuple(want.shape)}, got {tuple(out.shape)}'
    assert torch.equal(out, want), rule

@test_case(points=None, hidden=False)
def test_merge_one_head(merge_heads, x, VARIANT):
    import torch
    seq = VARIANT['task'] == 'seqfirst'
    heads = (x.transpose(0, 1) if seq else x)[:, None]
    assert torch.equal(merge_heads(heads), x), 'with one head, merging just drops the head axis' + (' and puts the tokens first' if seq else '')

@test_case(points=None, hidden=False)
def test_merge_puts_heads_side_by_side(merge_heads, VARIANT):
    import torch
    seq, inter = (VARIANT['task'] == 'seqfirst', VARIANT['task'] == 'interleaved')
    heads = torch.arange(12, dtype=torch.float32).reshape(1, 2, 3, 2)
    out = merge_heads(heads)
    axes, shape = ('(T, B, H * d_k)', (3, 1, 4)) if seq else ('(B, T, H * d_k)', (1, 3, 4))
    assert out.shape == shape, f'expected {axes} = {shape}, got {tuple(out.shape)}'
    row = out[2, 0] if seq else out[0, 2]
    want = [4.0, 10.0, 5.0, 11.0] if inter else [4.0, 5.0, 10.0, 11.0]
    how = {'contiguous': "head 0's features of token 2, then head 1's; swap the H and T axes back (transpose) before the reshape", 'interleaved': "the heads' features dealt in turn (feature i of head h at position i * H + h); move the H axis last, (B, T, d_k, H), before the reshape", 'seqfirst': "head 0's features of token 2, then head 1's; move the axes to (T, B, H, d_k) (permute) before the reshape"}[VARIANT['task']]
    assert row.tolist() == want, f'token 2 must hold {want}, got {row.tolist()}: {how}'

@test_case(points=None, hidden=False)
def test_merge_house_rules(merge_heads, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import torch
    seq, inter = (VARIANT['task'] == 'seqfirst', VARIANT['task'] == 'interleaved')
    heads = torch.arange(12.0).reshape(1, 2, 3, 2)
    out = guarded(merge_heads, libraries=('einops',))(heads)
    shape = (3, 1, 4) if seq else (1, 3, 4)
    assert tuple(out.shape) == shape, f'expected {shape}, got {tuple(out.shape)}'
    want = [0.0, 6.0, 1.0, 7.0] if inter else [0.0, 1.0, 6.0, 7.0]
    assert out[0, 0].tolist() == want, f"token 0 holds the heads' features of token 0 as your variant places them, {want}, got {out[0, 0].tolist()}"

