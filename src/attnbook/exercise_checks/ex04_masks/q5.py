from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q5"
points = [0.1]

@test_case(points=None, hidden=False)
def test_one_letter(why_mask_before_softmax):
    answer = why_mask_before_softmax()
    assert answer in ('a', 'b', 'c', 'd'), f'return one of "a", "b", "c" or "d" (a lower-case string), got {answer!r}'

