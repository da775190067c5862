from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.3, 0.1, 0.3]

@test_case(points=None, hidden=False)
def test_no_phrasing_on_both_sides(split_by_phrasing, pair_ids, phrasing_ids):
    train, test = split_by_phrasing(pair_ids, phrasing_ids, 0.4, 0)
    assert sorted(train + test) == list(range(len(pair_ids))), 'every sentence index exactly once'
    both = sorted({phrasing_ids[i] for i in train} & {phrasing_ids[i] for i in test})
    assert not both, f'phrasings {both} appear in train and in test: choose whole phrasings for the test set, then put every sentence of those phrasings there'
    n = len({phrasing_ids[i] for i in test})
    assert n == 2, f'0.4 of 5 phrasings is 2 held-out phrasings, got {n}'

@test_case(points=None, hidden=False)
def test_phrasing_house_rules(split_by_phrasing, pair_ids, phrasing_ids):
    from attnbook.exercise_checks.grading import guarded
    split = guarded(split_by_phrasing, libraries=('sklearn',))
    train, test = split(pair_ids[::-1], phrasing_ids[::-1], 0.4, 3)
    not_int = [i for i in train + test if type(i) is not int]
    assert not not_int, f'sentence indices as Python ints (int(i)), not NumPy integers: got {type(not_int[0]).__name__}'
    assert sorted(train + test) == list(range(len(pair_ids))), f'expected every sentence index exactly once, 0 .. {len(pair_ids) - 1}, got {len(train) + len(test)} indices in train and test together'
    held = {phrasing_ids[::-1][i] for i in test}
    assert len(held) == 2 and (not held & {phrasing_ids[::-1][i] for i in train}), f'0.4 of 5 phrasings: expected 2 whole phrasings in test, none of them in train, got phrasings {sorted(held)} in test'

@test_case(points=None, hidden=False)
def test_a_pair_with_two_phrasings_raises(split_by_phrasing):
    try:
        split_by_phrasing([0, 0, 1, 1, 2, 2], [5, 5, 6, 7, 8, 8], 0.5, 0)
    except ValueError as err:
        assert '1' in str(err), f"name the pair in the ValueError's message (pair 1), got {str(err)!r}"
        return
    raise AssertionError("pair 1 has one sentence in phrasing 6 and one in phrasing 7, so it cannot stay whole on one side: check every pair's phrasings first and raise a ValueError that names the pair")

