from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.2, 0.2]

@test_case(points=None, hidden=False)
def test_locate_small_example(locate):
    from attnbook.exercise_checks.grading import guarded
    locate = guarded(locate)
    table = [7, 2, 9]
    got = [locate(t, table, 4) for t in (0, 5, 11)]
    pairs = [isinstance(x, tuple) and len(x) == 2 and (type(x[0]) is int) and (type(x[1]) is int) for x in got]
    assert all(pairs), f'return a tuple of two Python ints, (block, slot); got {got!r}'
    assert got == [(7, 0), (2, 1), (9, 3)], f'with the table [7, 2, 9] and blocks of 4 slots, tokens 0, 5, 11 sit at (block 7, slot 0), (2, 1), (9, 3); got {got}: the block is block_table[t // block_size], looked up in the table, and the slot t % block_size'

@test_case(points=None, hidden=False)
def test_gather_small_example(gather_keys):
    from attnbook.exercise_checks.grading import guarded
    gather_keys = guarded(gather_keys)
    import torch
    pool = (100 * torch.arange(4).view(4, 1, 1, 1) + 10 * torch.arange(2).view(1, 2, 1, 1) + torch.arange(2).view(1, 1, 2, 1)).float()
    out = gather_keys(pool, [3, 1], 3)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 3, 1), f"2 heads, 3 tokens, d = 1: expected (2, 3, 1), got {tuple(getattr(out, 'shape', ()))}: keep only the first `length` tokens (the last block's other slots hold nothing of the sequence)"
    assert out[..., 0].tolist() == [[300, 301, 100], [310, 311, 110]], f'the table [3, 1] puts tokens 0, 1 in block 3 (slots 0, 1) and token 2 in block 1 (slot 0); each number reads 100 * block + 10 * head + slot, so head 0 should read [300, 301, 100] and head 1 [310, 311, 110]; got {out[..., 0].tolist()}: index the pool with the table, then put the heads first (transpose) before laying the blocks end to end'
    try:
        empty = gather_keys(pool, [], 0)
    except (RuntimeError, IndexError, ValueError) as error:
        raise AssertionError(f'an empty table and length 0 (a sequence with no tokens yet) raised {error}: torch.cat of no blocks fails; index the pool with the table instead, pool[block_table]') from None
    assert isinstance(empty, torch.Tensor) and tuple(empty.shape) == (2, 0, 1) and (empty.dtype == pool.dtype), f"an empty table and length 0: shape (H, 0, d) = (2, 0, 1) in the pool's dtype, got {tuple(getattr(empty, 'shape', ()))} {getattr(empty, 'dtype', type(empty).__name__)}"

