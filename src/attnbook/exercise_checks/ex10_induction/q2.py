from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.2, 0.2]

@test_case(points=None, hidden=False)
def test_induction_hand_patterns(induction_score):
    from attnbook.exercise_checks.grading import guarded
    induction_score = guarded(induction_score, names=('induction_score',), allow_attnbook=False)
    import torch

    def close(got, want, **tol):
        return torch.allclose(got.to(want.dtype), want, **tol)

    def pattern(T, key_of):
        w = torch.zeros(1, 1, T, T)
        for i in range(T):
            w[0, 0, i, max(0, min(i, key_of(i)))] = 1.0
        return w
    n = 4
    right = pattern(1 + 2 * n, lambda i: i - n + 1)
    try:
        got = induction_score(right, n, True)
    except IndexError as error:
        raise AssertionError(f'weights (1, 1, {1 + 2 * n}, {1 + 2 * n}), one head, n = {n}: expected one score per head, shape (1,), but your function raised IndexError ({str(error).splitlines()[0]})' + (": the number of heads is weights.shape[1], 1 here, not the chapter's 2" if 'dimension 1' in str(error) else ': read the sizes from weights.shape (B, H, T, T) and n, fix none of them')) from None
    msg = f"one score per head: shape (H,) = (1,), got {getattr(got, 'shape', type(got).__name__)}"
    assert isinstance(got, torch.Tensor) and got.shape == (1,), msg
    if not close(got, torch.ones(1)):
        try:
            itself = induction_score(pattern(1 + 2 * n, lambda i: i - n), n, True)
            itself = isinstance(itself, torch.Tensor) and itself.shape == (1,) and close(itself, torch.ones(1))
        except Exception:
            itself = False
        msg = f'a head that attends from each token of the repeat to the token after its earlier occurrence (one key to the right of that occurrence) must score 1, got {got.tolist()}' + ('; yours gives 1 to a head on the earlier occurrence itself (key i - n): read key i - n + 1, the token after it, which is what an induction head copies' if itself else f'; that is n / T = {n} / {1 + 2 * n}: divide by the n queries you read, not by T (take their mean)' if close(got, torch.full((1,), n / (1 + 2 * n))) else f'; that is n = {n}: a sum over the n queries, not their mean' if close(got, torch.full((1,), float(n))) else '')
        raise AssertionError(msg)
    induction_score(0.5 * right, n, True)
    soft = 0.6 * right + 0.4 * pattern(1 + 2 * n, lambda i: 0)
    got = induction_score(soft, n, True)
    msg = f"a head with 0.6 of each query's weight on key i - n + 1 and 0.4 on BOS scores 0.6, got {(got.tolist() if isinstance(got, torch.Tensor) else got)}" + ('; yours gives 1: you counted the queries whose largest weight is on that key (argmax); average the weight itself' if isinstance(got, torch.Tensor) and got.shape == (1,) and close(got, torch.ones(1)) else '')
    assert isinstance(got, torch.Tensor) and got.shape == (1,) and close(got, torch.full((1,), 0.6)), msg
    on_bos = induction_score(pattern(1 + 2 * n, lambda i: 0), n, True)
    msg = f'a head whose every query looks at BOS (key 0) must score 0, got {(on_bos.tolist() if isinstance(on_bos, torch.Tensor) else on_bos)}: yours gives 1 to any head that puts all its weight on one key; read the weight on key i - n + 1, the token after the earlier occurrence, for each query i of the second copy (not the largest weight of each row)'
    assert not (isinstance(on_bos, torch.Tensor) and on_bos.shape == (1,) and close(on_bos, torch.ones(1))), msg
    same = induction_score(pattern(1 + 2 * n, lambda i: i - n), n, True)
    whole = isinstance(same, torch.Tensor) and same.shape == (1,) and close(same, torch.full((1,), 1 / (n + 2)))
    msg = f'a head that attends to the earlier occurrence itself (key i - n) must score 0, got {same.tolist()}: ' + (f'yours matches the whole diagonal at offset 1 - n, from query n - 1 = {n - 1} of the first copy on (whose key 0 it does read); only the n queries of the second copy count, positions bos + n .. bos + 2n - 1' if whole else 'the induction head looks at the token AFTER the earlier occurrence, not at the occurrence itself')
    assert close(same, torch.zeros(1)), msg
    try:
        nobos = induction_score(pattern(2 * n, lambda i: i - n + 1), n, False)
    except IndexError as error:
        msg = f'bos=False, n = {n}, weights (1, 1, {2 * n}, {2 * n}): expected a score of 1 for the right head, but your function raised IndexError ({str(error).splitlines()[0]}): without a start token the second copy starts at position n, not 1 + n; place it at bos + n'
        raise AssertionError(msg) from None
    if not close(nobos, torch.ones(1)):
        try:
            late = induction_score(pattern(2 * n, lambda i: i - n + 2), n, False)
            late = isinstance(late, torch.Tensor) and late.shape == (1,) and close(late, torch.ones(1))
        except Exception:
            late = False
        msg = f'with bos=False there is no start token: the second copy starts at position n (in general bos + n), and the right head still scores 1, got {nobos.tolist()}' + ("; yours gives 1 to a head on key i - n + 2 without BOS: the key is i - n + 1 whatever bos says (if you slice the second copy's rows and take a diagonal, its offset depends on bos)" if late else '; exactly 0: if your function catches an error and returns zeros, let the error show, it names the cause' if isinstance(nobos, torch.Tensor) and bool((nobos == 0).all()) else '')
        raise AssertionError(msg)

@test_case(points=None, hidden=False)
def test_induction_second_copy_only(induction_score):
    import torch

    def close(got, want, **tol):
        return torch.allclose(got.to(want.dtype), want, **tol)

    def pattern(T, key_of):
        w = torch.zeros(1, 1, T, T)
        for i in range(T):
            w[0, 0, i, max(0, min(i, key_of(i)))] = 1.0
        return w
    n, T = (3, 7)
    w = pattern(T, lambda i: i - n + 1)
    w[0, 0, 4:] = 0.0
    w[0, 0, 4:, 0] = 1.0
    try:
        got = induction_score(w, n, True)
    except IndexError as error:
        msg = f'n = {n} with BOS, weights (1, 1, {T}, {T}): expected a score of 0, but your function raised IndexError ({str(error).splitlines()[0]}): ' + ("the number of heads is weights.shape[1], 1 here, not the chapter's 2" if 'dimension 1' in str(error) else f"the queries bos + n .. bos + 2n - 1 and their keys i - n + 1 come from the n passed in; positions fixed at the first check's n = 4 run past T = {T} here")
        raise AssertionError(msg) from None
    msg = f'only the n queries of the second copy count (positions bos + n .. bos + 2n - 1); here they all look at BOS, so the score is 0, got {got.tolist()}'
    if isinstance(got, torch.Tensor) and got.shape == (1,) and close(got, torch.full((1,), 1 / 3)):
        last = pattern(T, lambda i: 0)
        last[0, 0, 6] = 0.0
        last[0, 0, 6, 4] = 1.0
        try:
            early = induction_score(last, n, True)
            early = isinstance(early, torch.Tensor) and early.shape == (1,) and close(early, torch.zeros(1))
        except Exception:
            early = False
        if early:
            msg += ": yours matches the window one query early (queries n .. 2n - 1, the first copy's last query among them): with BOS the second copy starts at bos + n"
    assert close(got, torch.zeros(1)), msg
    most = pattern(9, lambda i: i - 4 + 1)
    most[0, 0, 8] = 0.0
    most[0, 0, 8, 0] = 1.0
    got = induction_score(most, 4, True)
    try:
        whole = induction_score(pattern(9, lambda i: i - 4 + 1), 4, True)
        key_right = isinstance(whole, torch.Tensor) and whole.shape == (1,) and close(whole, torch.ones(1))
    except Exception:
        key_right = False
    msg = f'n = 4 with BOS: queries 5, 6 and 7 of the second copy on the right key, its last query 8 on BOS: expected 3 of 4, 0.75, got {got.tolist()}: ' + ("average the weights of all n queries of the second copy, positions bos + n .. bos + 2n - 1, not some of them (its first query alone gives 1.0, its last 0.0, its last two 0.5: if you slice a diagonal, count which of its entries are the second copy's queries)" if key_right else 'a head on key i - n + 1 from every query of the second copy must score 1 first, and yours does not (test_induction_hand_patterns says more: the key read, or the mean over the n queries)')
    assert close(got, torch.full((1,), 0.75)), msg
    heads = torch.cat([pattern(T, lambda i: i - n + 1), pattern(T, lambda i: i - n)], dim=1)
    batch = torch.cat([heads, heads, heads.flip(1)])
    want = torch.tensor([2 / 3, 1 / 3])
    got = induction_score(batch, n, True)
    shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
    msg = f'3 sequences and 2 heads: expected one score per head, shape (H,) = (2,), got {shape}' + (': that is one score per sequence, (B,); average over the batch (dim 0) and the queries, and keep the heads (dim 1)' if shape == (3,) else '')
    assert shape == (2,), msg
    msg = f'3 different sequences and 2 heads: head 0 is an induction head in sequences 0 and 1 and looks at the earlier occurrence in sequence 2, head 1 the other way round. Expected one score per head, averaged over the batch (dim 0) and the queries, [0.667, 0.333]; got {got.tolist()}. A score read from the first sequence alone gives [1.0, 0.0], the largest over the batch [1.0, 1.0]'
    assert close(got, want), msg
    msg = f'return float32 scores for float32 weights, got {got.dtype}: the values are right; index and average the weights themselves, with no .double() or .float() (a float64 input gives float64)'
    assert got.dtype == torch.float32, msg
    got = induction_score(batch.double(), n, True)
    msg = f"weights in float64 must give scores in float64, got {getattr(got, 'dtype', type(got).__name__)}: index and average the weights themselves; a tensor built from Python numbers (torch.tensor([...])) or a .float() is float32"
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64, msg
    msg = f'the same 3 sequences and 2 heads in float64: expected [0.667, 0.333], got {got.tolist()}'
    assert close(got, want.double()), msg
    moved = batch.transpose(1, 2).contiguous().transpose(1, 2)
    try:
        got = induction_score(moved, n, True)
    except RuntimeError as error:
        msg = f'the same weights with the heads axis moved by a transpose (not contiguous in memory) raised RuntimeError: {error}; index the weights, or flatten with .reshape, which work on any layout, not .view'
        raise AssertionError(msg) from None
    msg = f'the same weights with the heads axis moved by a transpose: expected [0.667, 0.333], got {got.tolist()}'
    assert close(got, want), msg

