from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q5"
points = [0.1]

@test_case(points=None, hidden=False)
def test_one_letter(what_k_composition_measures):
    answer = what_k_composition_measures()
    assert answer in ('a', 'b', 'c', 'd'), f'got {answer!r}: return one of "a", "b", "c" or "d" (a lower-case string)'

