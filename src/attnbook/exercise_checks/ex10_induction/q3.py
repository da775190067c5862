from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.2]

@test_case(points=None, hidden=False)
def test_previous_hand_patterns(previous_token_score):
    from attnbook.exercise_checks.grading import guarded
    previous_token_score = guarded(previous_token_score, names=('previous_token_score',))
    import torch

    def close(got, want, **tol):
        return torch.allclose(got.to(want.dtype), want, **tol)

    def pattern(T, key_of):
        w = torch.zeros(1, 1, T, T)
        for i in range(T):
            w[0, 0, i, max(0, min(i, key_of(i)))] = 1.0
        return w
    try:
        got = previous_token_score(pattern(6, lambda i: i - 1))
    except IndexError as error:
        raise AssertionError(f'weights (1, 1, 6, 6), one head: expected one score per head, shape (1,), but your function raised IndexError ({str(error).splitlines()[0]})' + (": the number of heads is weights.shape[1], 1 here, not the chapter's 2" if 'dimension 1' in str(error) else ': read the sizes from weights.shape (B, H, T, T), fix none of them')) from None
    default_dims = isinstance(got, torch.Tensor) and (got.numel() == 0 or 6 in got.shape or bool(torch.isnan(got.double()).any()))
    diagonal_dims = 'torch.diagonal (and .diagonal) read dims 0 and 1, the batch and the heads, unless told otherwise: pass dim1=-2, dim2=-1 (the queries, then the keys)'
    assert isinstance(got, torch.Tensor) and got.shape == (1,), f"weights (1, 1, 6, 6): one score per head: shape (1,), got {getattr(got, 'shape', type(got).__name__)}" + (f'; {diagonal_dims}' if default_dims else '; average over the batch and the queries, and keep the heads axis only' if isinstance(got, torch.Tensor) else '')
    assert close(got, torch.ones(1)), f'a perfect previous-token head scores 1, got {got.tolist()}: ' + (diagonal_dims + ' (the diagonal of dims 0 and 1 is empty here, and its mean NaN)' if default_dims else 'query 0 has no previous token, leave it out of the mean' if close(got, torch.full((1,), 5 / 6)) else 'you read another diagonal: key i - 1 of query i is weights.diagonal(offset=-1, dim1=-2, dim2=-1) (the queries, then the keys); dim1=-1, dim2=-2 reads key i + 1' if close(got, torch.zeros(1)) else 'average the weight of query i on key i - 1 over the queries 1..T-1')
    previous_token_score(0.5 * pattern(6, lambda i: i - 1))
    soft = 0.6 * pattern(6, lambda i: i - 1) + 0.4 * pattern(6, lambda i: 0)
    got = previous_token_score(soft)
    probe = None
    if isinstance(got, torch.Tensor) and got.shape == (1,) and (not close(got, torch.full((1,), 0.68))):
        try:
            probe = previous_token_score(pattern(9, lambda i: i - 1 if i <= 5 else 0))
            probe = float(probe.double()[0]) if isinstance(probe, torch.Tensor) and probe.shape == (1,) else None
        except Exception:
            probe = None
    fixed = [m for m in range(2, 5) if probe is not None and abs(probe - 1) < 1e-06 and close(got, torch.full((1,), (1 + (m - 1) * 0.6) / m))]
    assert close(got, torch.full((1,), 0.68)), f"a head with 0.6 of each query's weight on key i - 1 and 0.4 on key 0 scores (1 + 4 * 0.6) / 5 = 0.68 (query 1's previous token is key 0), got {got.tolist()}" + ('; yours gives 1: you counted the queries whose largest weight is on key i - 1 (argmax); average the weight itself' if close(got, torch.ones(1)) else '; that is (1 + 1 + 4 * 0.6) / 6: you counted query 0 too (its key i - 1 clipped to key 0); it has no previous token, so leave it out: the queries 1..T-1' if close(got, torch.full((1,), 4.4 / 6)) and probe is not None and (abs(probe - 6 / 9) < 1e-06) else f'; yours reads only queries 1..{fixed[0]}, as if T were {fixed[0] + 1}: read T from weights.shape[-1]' if fixed else '')
    late = pattern(9, lambda i: i - 1 if i <= 5 else 0)
    got = previous_token_score(late)
    assert isinstance(got, torch.Tensor) and got.shape == (1,) and close(got, torch.full((1,), 5 / 8)), f'weights (1, 1, 9, 9): queries 1..5 on key i - 1, queries 6..8 on key 0: expected 5 of 8 queries, 0.625, got {(got.tolist() if isinstance(got, torch.Tensor) else got)}' + ('; yours reads only queries 1..5, as if T were 6: read every query 1 .. T - 1, T = weights.shape[-1]' if isinstance(got, torch.Tensor) and got.shape == (1,) and close(got, torch.ones(1)) else '')
    got = previous_token_score(pattern(6, lambda i: 0))
    assert close(got, torch.full((1,), 0.2)), f'a head that always looks at position 0 is on key i - 1 only for query 1, one of the five queries 1..5: 0.2, got {got.tolist()}'
    heads = torch.cat([pattern(6, lambda i: i - 1), pattern(6, lambda i: 0)], dim=1)
    heads = torch.cat([heads, heads, heads.flip(1)])
    want = torch.tensor([2.2 / 3, 1.4 / 3])
    moved = heads.transpose(1, 2).contiguous().transpose(1, 2)
    try:
        got = previous_token_score(moved)
    except RuntimeError as error:
        raise AssertionError(f'3 sequences, 2 heads, the heads axis moved by a transpose (not contiguous in memory): raised RuntimeError: {error}; take the diagonal, or flatten with .reshape, which work on any layout, not .view') from None
    shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
    assert shape == (2,), f'3 sequences and 2 heads: expected one score per head, shape (H,) = (2,), got {shape}' + (": that is one score per sequence, (B,); average over the batch (dim 0) and the queries (the diagonal's last axis), and keep the heads (dim 1)" if shape == (3,) else '')
    assert close(got, want), f'3 different sequences and 2 heads: head 0 is a previous-token head (1.0) in sequences 0 and 1 and always on position 0 (0.2) in sequence 2, head 1 the other way round. Expected the mean over the batch (dim 0) and the queries, [0.733, 0.467]; got {(got.tolist() if isinstance(got, torch.Tensor) else got)}. A score read from the first sequence alone gives [1.0, 0.2]'
    assert got.dtype == torch.float32, f'return float32 scores for float32 weights, got {got.dtype}: the values are right; take the diagonal of the weights themselves, with no .double() or .float() (a float64 input gives float64)'
    got = previous_token_score(heads.double())
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64, f"weights in float64 must give scores in float64, got {getattr(got, 'dtype', type(got).__name__)}: take the diagonal of the weights themselves; a tensor built from Python numbers (torch.tensor([...])) or a .float() is float32"
    assert close(got, want.double()), f'the same 3 sequences and 2 heads in float64: expected [0.733, 0.467], got {got.tolist()}'

