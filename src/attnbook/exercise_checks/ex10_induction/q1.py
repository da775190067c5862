from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1]

@test_case(points=None, hidden=False)
def test_repeated_shape_and_copies(repeated_batch):
    from attnbook.exercise_checks.grading import guarded
    repeated_batch = guarded(repeated_batch, names=('repeated_tokens',))
    import torch
    x = repeated_batch(3, 4, 20, torch.Generator().manual_seed(0), True)
    msg = f"return a torch.long tensor, got {getattr(x, 'dtype', type(x).__name__)}"
    assert isinstance(x, torch.Tensor) and x.dtype == torch.long, msg
    msg = f'BOS + 4 tokens + the same 4: shape (3, 9), got {tuple(x.shape)}'
    assert x.shape == (3, 9), msg
    msg = 'with bos=True the first column is the start token, 0'
    assert (x[:, 0] == 0).all(), msg
    msg = 'the second copy must repeat the first: draw the n tokens once and use them twice'
    assert torch.equal(x[:, 1:5], x[:, 5:]), msg
    msg = f"vocab_size = 20: expected tokens 1 .. 19 after BOS, got a token {int(x.max())}: torch.randint's high is excluded, so pass vocab_size itself, torch.randint(1, vocab_size, ...), not vocab_size + 1"
    assert (x < 20).all(), msg
    draw = torch.randint(1, 20, (3, 4), generator=torch.Generator().manual_seed(0))
    want = torch.cat([torch.zeros(3, 1, dtype=torch.long), draw, draw], dim=1)
    low = torch.randint(1, 19, (3, 4), generator=torch.Generator().manual_seed(0))
    turned = torch.randint(1, 20, (4, 3), generator=torch.Generator().manual_seed(0)).T
    msg = f'B = 3, n = 4, vocab_size = 20, seed 0: expected the one draw torch.randint(1, 20, (3, 4), generator=generator) placed as [BOS] x x, {want.tolist()}, got {x.tolist()}' + ("; yours are the tokens of torch.randint(1, vocab_size - 1, ...), which never draws vocab_size - 1 = 19: randint's high is already excluded, so pass vocab_size itself" if torch.equal(x, torch.cat([want[:, :1], low, low], dim=1)) else '; yours are the tokens of a draw of shape (n, B) = (4, 3), transposed: the generator fills its draw row by row, so draw the shape (B, n) itself' if torch.equal(x, torch.cat([want[:, :1], turned, turned], dim=1)) else '')
    assert torch.equal(x, want), msg

@test_case(points=None, hidden=False)
def test_repeated_without_bos(repeated_batch):
    import torch
    x = repeated_batch(20, 5, 3, torch.Generator().manual_seed(1), False)
    msg = f'bos=False: no start token, shape (20, 10), got {tuple(x.shape)}'
    assert x.shape == (20, 10), msg
    msg = f'bos=False: return a torch.long tensor here too, got {x.dtype}'
    assert x.dtype == torch.long, msg
    msg = f'bos=False, n = 5: expected positions 5..9 to repeat positions 0..4 (no start token: the first copy starts at position 0), got {x[0].tolist()} in the first row' + ('; yours still puts a start token first' if bool((x[:, 0] == 0).all()) else '; its second half is not its first: draw the n tokens once and concatenate that same tensor twice')
    assert torch.equal(x[:, :5], x[:, 5:]), msg
    msg = 'token 0 is the start token: draw the random tokens from 1 .. vocab_size - 1, torch.randint(1, vocab_size, ...)'
    assert (x > 0).all(), msg
    msg = f"vocab_size = 3: expected tokens 1 and 2 only, got a token {int(x.max())}: torch.randint's high is excluded, so pass vocab_size itself, torch.randint(1, vocab_size, ...), not vocab_size + 1"
    assert (x < 3).all(), msg
    draw = torch.randint(1, 3, (20, 5), generator=torch.Generator().manual_seed(1))
    want = torch.cat([draw, draw], dim=1)
    rows = [r for r in range(20) if not torch.equal(x[r], want[r])]
    msg = '' if not rows else f'B = 20, n = 5, vocab_size = 3, seed 1, bos=False: expected the one draw torch.randint(1, 3, (20, 5), generator=generator) twice; {len(rows)} of the 20 rows differ, the first of them row {rows[0]}: expected {want[rows[0]].tolist()}, got {x[rows[0]].tolist()}' + ("; every token of yours is 1: torch.randint(1, vocab_size - 1, ...) never draws vocab_size - 1 = 2, since randint's high is already excluded: pass vocab_size itself" if bool((x == 1).all()) else '')
    assert not rows, msg

