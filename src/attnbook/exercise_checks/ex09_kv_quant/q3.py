from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.2]

@test_case(points=None, hidden=False)
def test_stored_bytes_example(stored_bytes):
    from attnbook.exercise_checks.grading import guarded
    stored_bytes = guarded(stored_bytes, new_object=False)
    import torch
    codes = torch.zeros(1, 2, 8, 8, dtype=torch.uint8)
    keys = torch.zeros(1, 2, 10, 8)
    scale, low, residual = (torch.ones(1, 2, 2, 8), torch.zeros(1, 2, 2, 8), keys[:, :, 8:])
    got = stored_bytes(codes, scale, low, residual, 2)
    assert got == 416, f'expected 416 bytes: 32 for the 128 codes at 2 bits (four to a byte), 128 for the 32 float32 scales, 128 for the 32 float32 minima and 128 for the 32 float32 residual keys; got {got}' + (": count each tensor's own numbers (numel() * element_size()); the residual here is a slice of all the keys and shares their storage, whose bytes are not its own" if got == 928 else '')
    assert isinstance(got, int) and (not isinstance(got, bool)), f'return a Python int, got {type(got).__name__}'

