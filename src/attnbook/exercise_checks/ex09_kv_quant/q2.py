from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.2, 0.2]

@test_case(points=None, hidden=False)
def test_pack_small_example(pack_codes):
    from attnbook.exercise_checks.grading import guarded
    pack_codes = guarded(pack_codes, new_object=False)
    import torch
    packed = pack_codes(torch.tensor([[1, 2, 3, 0, 3, 3, 3, 3]], dtype=torch.uint8), 2)
    assert isinstance(packed, torch.Tensor) and packed.dtype == torch.uint8, f"return a torch.uint8 tensor, got {getattr(packed, 'dtype', type(packed).__name__)}: shifts and ors of uint8 codes stay uint8; convert back if you computed in another dtype"
    assert packed.shape == (1, 2), f'eight 2-bit codes fill 2 bytes: shape (1, 2), got {tuple(packed.shape)}'
    assert packed.tolist() == [[57, 255]], f'the 2-bit codes 1, 2, 3, 0 are the byte 1 | 2 << 2 | 3 << 4 | 0 << 6 = 57 (the first code in the lowest bits, four consecutive codes to a byte) and 3, 3, 3, 3 are 255; got {packed.tolist()}'
    four = pack_codes(torch.tensor([1, 2, 15, 0], dtype=torch.uint8), 4)
    assert four.tolist() == [33, 15], f'the 4-bit codes 1, 2 are the byte 1 | 2 << 4 = 33, and 15, 0 are 15; got {four.tolist()}'
    made = torch.tensor([[[1, 2, 3, 0], [3, 3, 3, 3]], [[0, 0, 0, 0], [1, 1, 1, 1]]], dtype=torch.uint8)
    moved = made.transpose(0, 1)
    try:
        packed = pack_codes(moved, 2)
    except RuntimeError as error:
        raise AssertionError(f'codes whose first two axes were swapped by a transpose (not contiguous in memory) raised RuntimeError: {error}; flatten with .reshape, which works on any layout, not .view') from None
    want = [[[57], [0]], [[255], [85]]]
    assert packed.tolist() == want, f'2-bit codes (2, 2, 4) laid out by a transpose, rows [1, 2, 3, 0], [0, 0, 0, 0], [3, 3, 3, 3], [1, 1, 1, 1]: expected {want}, got {packed.tolist()}'

@test_case(points=None, hidden=False)
def test_unpack_small_example(pack_codes, unpack_codes):
    import torch
    out = unpack_codes(torch.tensor([[57, 255]], dtype=torch.uint8), 2)
    assert out.dtype == torch.uint8 and out.tolist() == [[1, 2, 3, 0, 3, 3, 3, 3]], f'the byte 57 holds the 2-bit codes 1, 2, 3, 0 (lowest bits first): shift it right by 0, 2, 4, 6 and keep the lowest two bits (& 3) each time; got {out.tolist()} ({out.dtype})'
    for bits in (2, 4, 8):
        c = (torch.arange(24) * 7 % 2 ** bits).to(torch.uint8).view(3, 8)
        assert torch.equal(unpack_codes(pack_codes(c, bits), bits), c), f'{bits} bits: unpack_codes(pack_codes(c)) must give c back'

