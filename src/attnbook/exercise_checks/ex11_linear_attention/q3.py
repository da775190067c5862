from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.25, 0.25]

@test_case(points=None, hidden=False)
def test_delta_shape_and_overwrite(delta_update):
    import torch
    g = torch.Generator().manual_seed(3)
    S = torch.randn(2, 4, 3, generator=g)
    k = torch.nn.functional.normalize(torch.randn(2, 4, generator=g), dim=-1)
    v = torch.randn(2, 3, generator=g)
    before = S.clone()
    try:
        new = delta_update(S, k, v, torch.ones(2))
    except RuntimeError as error:
        raise AssertionError(f"S (2, 4, 3), k (2, 4), v (2, 3), beta (2,) raised RuntimeError: {error}; per sequence, k S is a row of d_v = 3 numbers, k^T (v - k S) a (d_k, d_v) = (4, 3) outer product, and beta scales each sequence's: k[:, :, None] * (v - k S)[:, None, :] and beta[:, None, None]") from None
    assert torch.equal(S, before), 'delta_update changed S: return a new tensor'
    assert isinstance(new, torch.Tensor) and new.shape == (2, 4, 3), f"expected the state's shape (2, d_k = 4, d_v = 3), got {tuple(getattr(new, 'shape', ()))}: k^T (v - k S) is a column of d_k numbers times a row of d_v"
    read = (k[:, None, :] @ new)[:, 0]
    torch.testing.assert_close(read, v, atol=1e-05, rtol=1e-05, msg='with beta = 1 the key must read back exactly the value just written: subtract what k read before (v - k S), and read a state as k S (a row times the matrix)')

@test_case(points=None, hidden=False)
def test_delta_half_strength(delta_update):
    import torch
    S = torch.zeros(1, 2, 2, dtype=torch.float64)
    S[0, 0] = torch.tensor([4.0, 0.0], dtype=torch.float64)
    S[0, 1] = torch.tensor([0.0, 6.0], dtype=torch.float64)
    k = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    v = torch.tensor([[0.0, 2.0]], dtype=torch.float64)
    new = delta_update(S, k, v, torch.tensor([0.5], dtype=torch.float64))
    want = torch.tensor([[[2.0, 1.0], [0.0, 6.0]]], dtype=torch.float64)
    cause = "a write changes only the key's own direction (S + beta k^T (v - k S))"
    if isinstance(new, torch.Tensor) and new.shape == want.shape:
        if torch.allclose(new[0, 0], 0.5 * v[0]):
            cause = "e0's row is beta v = (0, 1): the old content k S was removed in full; scale the whole correction by beta, S + beta k^T (v - k S)"
        elif torch.allclose(new[0, 1], 0.5 * S[0, 1]):
            cause = "e1's row shrank: a mix (1 - beta) S + beta k^T v decays every row; a write changes only the key's own direction, S + beta k^T (v - k S)"
    torch.testing.assert_close(new, want, msg=f"key e0 held (4, 0) and key e1 (0, 6); beta = 0.5 moves e0's row half way to v = (0, 2): expected {want[0].tolist()} (e1's row unchanged), got {(new[0].tolist() if isinstance(new, torch.Tensor) else type(new).__name__)}: {cause}")

