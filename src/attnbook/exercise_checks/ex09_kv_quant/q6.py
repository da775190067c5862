from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q6"
points = [0.1]

@test_case(points=None, hidden=False)
def test_one_letter(what_paging_saves):
    answer = what_paging_saves()
    assert answer in ('a', 'b', 'c', 'd'), f'return one of "a", "b", "c" or "d" (a lower-case string), got {answer!r}'

