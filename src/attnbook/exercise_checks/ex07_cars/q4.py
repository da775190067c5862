from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.1]

@test_case(points=None, hidden=False)
def test_one_letter(why_split_by_pairs):
    answer = why_split_by_pairs()
    assert answer in ('a', 'b', 'c', 'd'), f'return one of "a", "b", "c" or "d" (a lower-case string), got {answer!r}'

