from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.3, 0.1, 0.3]

@test_case(points=None, hidden=False)
def test_no_phrasing_on_both_sides(split_by_phrasing, VARIANT):
    task = VARIANT['task']
    unit = {'phrasing': 'phrasing', 'mirror': 'phrasing (with its mirror)', 'family': 'family'}[task]

    def inputs(pairs, phr):
        if task == 'mirror':
            order = {p: r for r, p in enumerate(dict.fromkeys(pairs))}
            twin = [list(pairs[:at]).count(q) for at, q in enumerate(pairs)]
            style = ((0, 0), (0, 1), (1, 1), (1, 0))
            ids = [f'{f}/mirror' if style[order[p] % 4][min(k, 1)] else f'{f}' for p, f, k in zip(pairs, phr, twin)]
            return ((pairs, ids), [f'{f}' for f in phr])
        if task == 'family':
            rank = {f: r for r, f in enumerate(sorted(set(phr)))}
            family_of = {f: f'family-{rank[f] // 2:02d}' for f in phr}
            family_of['unused'] = 'family-00-unused'
            return ((pairs, phr, family_of), [family_of[f] for f in phr])
        return ((pairs, phr), list(phr))
    pairs = [p for p in range(20) for _ in range(2)]
    phr = [p % 5 for p in pairs]
    args, units = inputs(pairs, phr)
    train, test = split_by_phrasing(*args, 0.4, VARIANT['seed'])
    assert sorted(train + test) == list(range(len(pairs))), 'every sentence index exactly once'
    both = sorted({units[i] for i in train} & {units[i] for i in test})
    assert not both, f'{unit} {both} appear in train and in test: choose whole units for the test set, then put every sentence of those units there'
    n, want = (len({units[i] for i in test}), round(0.4 * len(set(units))))
    assert n == want, f'0.4 of {len(set(units))} units ({unit}) is {want} held out, got {n}'

@test_case(points=None, hidden=False)
def test_phrasing_house_rules(split_by_phrasing, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    task = VARIANT['task']
    unit = {'phrasing': 'phrasing', 'mirror': 'phrasing (with its mirror)', 'family': 'family'}[task]

    def inputs(pairs, phr):
        if task == 'mirror':
            order = {p: r for r, p in enumerate(dict.fromkeys(pairs))}
            twin = [list(pairs[:at]).count(q) for at, q in enumerate(pairs)]
            style = ((0, 0), (0, 1), (1, 1), (1, 0))
            ids = [f'{f}/mirror' if style[order[p] % 4][min(k, 1)] else f'{f}' for p, f, k in zip(pairs, phr, twin)]
            return ((pairs, ids), [f'{f}' for f in phr])
        if task == 'family':
            rank = {f: r for r, f in enumerate(sorted(set(phr)))}
            family_of = {f: f'family-{rank[f] // 2:02d}' for f in phr}
            family_of['unused'] = 'family-00-unused'
            return ((pairs, phr, family_of), [family_of[f] for f in phr])
        return ((pairs, phr), list(phr))
    split = guarded(split_by_phrasing, libraries=('sklearn',))
    pairs = [p for p in range(20) for _ in range(2)][::-1]
    phr = [p % 5 for p in pairs]
    args, units = inputs(pairs, phr)
    train, test = split(*args, 0.4, VARIANT['seed'] + 3)
    not_int = [i for i in train + test if type(i) is not int]
    assert not not_int, f'sentence indices as Python ints (int(i)), not NumPy integers: got {type(not_int[0]).__name__}'
    assert sorted(train + test) == list(range(len(pairs))), f'expected every sentence index exactly once, 0 .. {len(pairs) - 1}, got {len(train) + len(test)} indices in train and test together'
    held, want = ({units[i] for i in test}, round(0.4 * len(set(units))))
    assert len(held) == want and (not held & {units[i] for i in train}), f'0.4 of {len(set(units))} units ({unit}): expected {want} whole in test, none of them in train, got {sorted(held)} in test'

@test_case(points=None, hidden=False)
def test_a_pair_with_two_phrasings_raises(split_by_phrasing, VARIANT):
    task = VARIANT['task']
    unit = {'phrasing': 'phrasing', 'mirror': 'phrasing (with its mirror)', 'family': 'family'}[task]

    def inputs(pairs, phr):
        if task == 'mirror':
            order = {p: r for r, p in enumerate(dict.fromkeys(pairs))}
            twin = [list(pairs[:at]).count(q) for at, q in enumerate(pairs)]
            style = ((0, 0), (0, 1), (1, 1), (1, 0))
            ids = [f'{f}/mirror' if style[order[p] % 4][min(k, 1)] else f'{f}' for p, f, k in zip(pairs, phr, twin)]
            return ((pairs, ids), [f'{f}' for f in phr])
        if task == 'family':
            rank = {f: r for r, f in enumerate(sorted(set(phr)))}
            family_of = {f: f'family-{rank[f] // 2:02d}' for f in phr}
            family_of['unused'] = 'family-00-unused'
            return ((pairs, phr, family_of), [family_of[f] for f in phr])
        return ((pairs, phr), list(phr))
    try:
        split_by_phrasing(*inputs([0, 0, 1, 1, 2, 2], [5, 5, 6, 7, 8, 8])[0], 0.5, 0)
    except ValueError as err:
        assert '1' in str(err), f"name the pair in the ValueError's message (pair 1), got {str(err)!r}"
        return
    raise AssertionError(f'pair 1 has one sentence in phrasing 6 and one in phrasing 7, two units ({unit}), so it cannot stay whole on one side: check every pair first and raise a ValueError that names the pair')

