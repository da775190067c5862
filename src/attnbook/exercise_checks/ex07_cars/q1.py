from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.1, 0.1, 0.6]

@test_case(points=None, hidden=False)
def test_two_sorted_lists_covering_every_sentence(split_pairs, pair_ids):
    train, test = split_pairs(pair_ids, 0.2, 0)
    assert isinstance(train, list) and isinstance(test, list), 'return two lists'
    assert sorted(train + test) == list(range(len(pair_ids))), 'every sentence index exactly once'
    assert train == sorted(train) and test == sorted(test), 'put each list in increasing order'
    assert len(test) == 8, f'4 test pairs of 2 sentences make 8 test sentences, got {len(test)}'

@test_case(points=None, hidden=False)
def test_same_seed_same_split(split_pairs, pair_ids):
    first = split_pairs(pair_ids, 0.2, 7)
    assert isinstance(first, tuple) and len(first) == 2, 'return the pair (train, test)'
    again = split_pairs(pair_ids, 0.2, 7)
    assert first == again, 'the same seed must give the same split'
    n_pairs = len(set(pair_ids))
    held = len({pair_ids[i] for i in first[1]})
    assert held == round(0.2 * n_pairs), f"fraction 0.2 of the example's {n_pairs} pairs: expected round({0.2 * n_pairs:g}) = {round(0.2 * n_pairs)} whole pairs in test, got {held}"

@test_case(points=None, hidden=False)
def test_no_pair_is_split(split_pairs, pair_ids):
    train, test = split_pairs(pair_ids, 0.5, 3)
    both = sorted({pair_ids[i] for i in train} & {pair_ids[i] for i in test})
    assert not both, f'pairs {both} have one twin in train and the other in test: choose whole pairs for the test set (from the distinct values of pair_ids), then put every sentence of those pairs there'
    n_pairs = len(set(pair_ids))
    held = len({pair_ids[i] for i in test})
    assert held == round(0.5 * n_pairs) and sorted(train + test) == list(range(len(pair_ids))), f"fraction 0.5 of the example's {n_pairs} pairs: expected {round(0.5 * n_pairs)} whole pairs in test and every sentence once, got {held} pairs in test and {len(train) + len(test)} sentences in all"

@test_case(points=None, hidden=False)
def test_house_rules_and_a_real_shuffle(split_pairs, pair_ids):
    from attnbook.exercise_checks.grading import guarded
    split = guarded(split_pairs, libraries=('sklearn',))
    train, test = split(pair_ids[::-1], 0.25, 1)
    not_int = [i for i in train + test if type(i) is not int]
    assert not not_int, f'sentence indices as Python ints (int(i)), not NumPy integers: got {type(not_int[0]).__name__}'
    ids = [p for p in range(10) for _ in range(2)]
    drawn = {tuple(split(ids, 0.3, seed)[1]) for seed in range(40)}
    assert len(drawn) >= 20, f'40 seeds gave only {len(drawn)} different test sets of 3 pairs out of 10 (120 are possible): choose the pairs at random with np.random.default_rng(seed) (choice or permutation), not a window or an order that the seed shifts'

@test_case(points=None, hidden=False)
def test_round_and_the_numpy_generator(split_pairs):
    import numpy as np

    def numpy_draws(ids, n, seed):
        ids = sorted(set(ids))
        return [set(np.random.default_rng(seed).choice(ids, size=n, replace=False).tolist()), set(np.random.default_rng(seed).permutation(ids)[:n].tolist())]
    ids = [p for p in range(10) for _ in range(2)]
    for fraction, n in ((0.35, 4), (0.25, 2), (0.46, 5)):
        test = split_pairs(ids, fraction, 0)[1]
        got = len({ids[i] for i in test})
        assert got == n, f"fraction {fraction} of 10 pairs is round({fraction * 10:g}) = {n} test pairs, got {got}: use Python's round (int() cuts 3.5 down to 3, and round(2.5) is 2)"
    for seed in (0, 1, 2):
        held = {ids[i] for i in split_pairs(ids, 0.3, seed)[1]}
        assert held in numpy_draws(ids, 3, seed), f"seed {seed}, 3 of 10 pairs: test pairs {sorted(held)} are not what np.random.default_rng({seed}) draws from the sorted pair ids ({sorted(numpy_draws(ids, 3, seed)[0])} with choice, {sorted(numpy_draws(ids, 3, seed)[1])} with permutation): draw with that generator, not Python's random"

