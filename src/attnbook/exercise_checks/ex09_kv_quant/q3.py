from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = [0]

@test_case(points=None, hidden=False)
def test_one_letter(why_keys_per_channel):
    answer = why_keys_per_channel()
    assert answer in ('a', 'b', 'c', 'd'), f'return one of "a", "b", "c" or "d" (a lower-case string), got {answer!r}'

