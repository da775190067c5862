from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.25, 0.25]

@test_case(points=None, hidden=False)
def test_delta_shape_and_overwrite(delta_update, VARIANT):
    import torch
    papers = VARIANT['task'] == 'decay'
    gated = VARIANT['task'] == 'gate'

    def read(S, k):
        return (S @ k[:, :, None])[..., 0] if papers else (k[:, None, :] @ S)[:, 0]
    g = torch.Generator().manual_seed(3)
    S = torch.randn((2, 3, 4) if papers else (2, 4, 3), generator=g)
    k = torch.nn.functional.normalize(torch.randn(2, 4, generator=g), dim=-1)
    v = torch.randn(2, 3, generator=g)
    gate = (torch.tensor([0.5, 0.8]),) if gated else ()
    before = S.clone()
    shape, how = ('(d_v, d_k) = (3, 4)', '(v - S k)[:, :, None] * k[:, None, :]') if papers else ('(d_k, d_v) = (4, 3)', 'k[:, :, None] * (v - k S)[:, None, :]')
    try:
        new = delta_update(S, k, v, torch.ones(2), *gate)
    except RuntimeError as error:
        raise AssertionError(f"S {tuple(S.shape)}, k (2, 4), v (2, 3), beta (2,) raised RuntimeError: {error}; per sequence, the read is a row of d_v = 3 numbers, the write a {shape} outer product, and beta scales each sequence's: {how} and beta[:, None, None]") from None
    assert torch.equal(S, before), 'delta_update changed S: return a new tensor'
    assert isinstance(new, torch.Tensor) and new.shape == S.shape, f"expected the state's shape {tuple(S.shape)}, got {tuple(getattr(new, 'shape', ()))}: the write is a {shape} outer product"
    torch.testing.assert_close(read(new, k), v, atol=1e-05, rtol=1e-05, msg='with beta = 1 the key must read back exactly the value just written: subtract what k read ' + ('from the decayed state, alpha S, ' if gated else 'before ') + ('(v - S k), and read a state as S k (the matrix times a column)' if papers else '(v - k S), and read a state as k S (a row times the matrix)'))

@test_case(points=None, hidden=False)
def test_delta_half_strength(delta_update, VARIANT):
    import torch
    papers = VARIANT['task'] == 'decay'
    gated = VARIANT['task'] == 'gate'

    def read(S, k):
        return (S @ k[:, :, None])[..., 0] if papers else (k[:, None, :] @ S)[:, 0]
    rows = torch.tensor([[[4.0, 1.0], [0.0, 6.0]]], dtype=torch.float64)
    k = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    v = torch.tensor([[0.0, 2.0]], dtype=torch.float64)
    S = rows.mT if papers else rows
    gate = (torch.tensor([0.5], dtype=torch.float64),) if gated else ()
    new = delta_update(S, k, v, torch.tensor([0.5], dtype=torch.float64), *gate)
    if gated:
        want = torch.tensor([[[1.0, 1.25], [0.0, 3.0]]], dtype=torch.float64)
        rule = "S' = alpha S + beta k^T (v - k alpha S): every row decays, then e0's moves half way to v"
    else:
        want = torch.tensor([[[2.0, 1.5], [0.0, 6.0]]], dtype=torch.float64)
        rule = "a write changes only the key's own direction, S + beta k^T (v - k S)"
    want = want.mT if papers else want
    cause, said = (rule, "e0's row half way to v = (0, 2)")
    if papers:
        rule = "a write changes only the key's own column, S + beta (v - S k) k^T"
        cause, said = (rule, "e0's column half way to v = (0, 2)")
    got = new if isinstance(new, torch.Tensor) and new.shape == want.shape else None
    mine = (got.mT if papers else got) if got is not None else None
    if mine is not None:
        if torch.allclose(mine[0, 0], 0.5 * v[0]):
            cause = f"e0's row is beta v = (0, 1): the old content {('S k' if papers else 'k S')} was removed in full; scale the whole correction by beta"
        elif not gated and torch.allclose(mine[0, 1], 0.5 * rows[0, 1]):
            cause = "e1's row shrank: a mix (1 - beta) S + beta k^T v decays every row; " + rule
        elif gated and torch.allclose(mine[0, 0], torch.tensor([1.0, 0.75], dtype=torch.float64)):
            cause = 'the gate went on after the write: decay the old state first, then write into it'
        elif gated and torch.allclose(mine[0, 0], torch.tensor([0.0, 1.0], dtype=torch.float64)):
            cause = 'the correction read the state before the gate: read k (alpha S), the decayed state'
    torch.testing.assert_close(new, want, msg=f"key e0 held (4, 1) and key e1 (0, 6); beta = 0.5{(', alpha = 0.5' if gated else '')} moves {said}: expected {want[0].tolist()}, got {(new[0].tolist() if isinstance(new, torch.Tensor) else type(new).__name__)}: {cause}")

