from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.1, 0.1, 0.2, 0.1]

@test_case(points=None, hidden=False)
def test_padding_type_and_shape(padding_mask):
    import torch
    m = padding_mask([3, 1], 4)
    assert isinstance(m, torch.Tensor) and m.dtype == torch.bool, 'return a boolean torch tensor'
    assert m.shape == (2, 1, 4), f'expected (B, 1, T) = (2, 1, 4), got {tuple(m.shape)}'
    m = padding_mask([2, 0], 3)
    want = [[[True, True, False]], [[False, False, False]]]
    assert m.tolist() == want, f'lengths [2, 0], T = 3: expected {want} (True where position t < length), got {m.tolist()}'

@test_case(points=None, hidden=False)
def test_padding_no_padding(padding_mask):
    m = padding_mask([4], 4)
    assert m.tolist() == [[[True] * 4]], f'lengths [4], T = 4: no padding, expected [[[True, True, True, True]]], got {m.tolist()}'
    m = padding_mask([4, 2], 4)
    want = [[[True, True, True, True]], [[True, True, False, False]]]
    assert m.tolist() == want, f'lengths [4, 2], T = 4: only the shorter sequence has padding (keys 2 and 3), expected {want}, got {m.tolist()}'

@test_case(points=None, hidden=False)
def test_padding_marks_the_real_tokens(padding_mask):
    m = padding_mask([3, 1], 4)
    assert m[0, 0].tolist() == [True, True, True, False], f'lengths[0] = 3: keys 0, 1, 2 are real and key 3 is padding, got {m[0, 0].tolist()}; a position t is real when t < length'
    assert m[1, 0].tolist() == [True, False, False, False], f'lengths[1] = 1: got {m[1, 0].tolist()}'

@test_case(points=None, hidden=False)
def test_padding_house_rules(padding_mask):
    from attnbook.exercise_checks.grading import guarded
    import torch
    answers = []
    for _ in range(2):
        try:
            answers.append(guarded(padding_mask)([2], 3))
        except AssertionError:
            raise
        except Exception as error:
            answers.append(f'{type(error).__name__}: {error}')
    hint = 'does padding_mask keep something from one call to the next, such as a default argument (rows=[]) that it appends to? Build a new mask on every call'
    failed = [a for a in answers if not isinstance(a, torch.Tensor)]
    assert not failed, f'padding_mask([2], 3) gave {answers[0]!r} then {answers[1]!r}; if an earlier call worked, {hint}'
    assert tuple(answers[0].shape) == (1, 1, 3), f'expected (1, 1, 3), got {tuple(answers[0].shape)}'
    assert answers[0].tolist() == [[[True, True, False]]], f'lengths [2], T = 3: expected [[[True, True, False]]], got {answers[0].tolist()}'
    assert torch.equal(answers[0], answers[1]), f'two calls with the same lengths gave different masks: {hint}'

