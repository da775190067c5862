from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.1, 0.1, 0.1, 0.1, 0.1]

@test_case(points=None, hidden=False)
def test_first_step_from_the_empty_state(online_softmax_step):
    import numpy as np
    m, l, acc = online_softmax_step((np.full(1, -np.inf), np.zeros(1), np.zeros((1, 2))), np.array([[1.0, 2.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_allclose(m, [2.0], err_msg='m is the largest score seen so far')
    assert np.all(np.isfinite(l)) and np.all(np.isfinite(acc)), 'NaN or inf from the empty state: exp(m_old - m_new) with m_old = -inf is 0, nothing to rescale'
    np.testing.assert_allclose(l, [np.exp(-1.0) + 1.0], atol=1e-12, err_msg='l = sum of exp(s - m)')
    np.testing.assert_allclose(acc, [[np.exp(-1.0), 1.0]], atol=1e-12, err_msg='acc = sum of exp(s - m) v')

@test_case(points=None, hidden=False)
def test_rescales_when_the_max_grows(online_softmax_step):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    state = (np.array([0.0]), np.array([2.0]), np.array([[2.0]]))
    m, l, acc = guarded(online_softmax_step, libraries=('torch', 'scipy'))(state, np.array([[3.0]]), np.array([[5.0]]))
    np.testing.assert_allclose(m, [3.0], err_msg='the running max grows from 0 to 3')
    np.testing.assert_allclose([l[0], acc[0, 0]], [2 * np.exp(-3.0) + 1, 2 * np.exp(-3.0) + 5], atol=1e-12, err_msg='the running max grew from 0 to 3: multiply the old l and acc by exp(0 - 3) before adding the new block')

@test_case(points=None, hidden=False)
def test_average_equals_the_full_softmax(online_softmax_average):
    import numpy as np

    def full(s, v):
        s, v = (np.asarray(s, np.float64), np.asarray(v, np.float64))
        top = s.max(axis=-1, keepdims=True)
        e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
        total = e.sum(axis=-1, keepdims=True)
        return np.where(total > 0, e @ v / np.where(total > 0, total, 1.0), 0.0)
    rng = np.random.default_rng(3)
    s, v = (rng.normal(size=(2, 5)) * 3, rng.normal(size=(5, 3)))
    got = online_softmax_average(s, v, 2)
    assert np.shape(got) == (2, 3), f'expected (T_q, d_v) = (2, 3), got {np.shape(got)}'
    np.testing.assert_allclose(got, full(s, v), atol=1e-12, rtol=1e-12, err_msg='blocks of 2 keys (the last one has 1): must equal softmax(S) V')

@test_case(points=None, hidden=False)
def test_block_size_below_one_is_refused(online_softmax_average):
    from attnbook.exercise_checks.grading import calls_of
    import signal
    import threading
    import numpy as np
    s, v = (np.array([[1.0, 2.0, 0.5]]), np.array([[1.0], [0.0], [2.0]]))
    e = np.exp(s - s.max())
    np.testing.assert_allclose(online_softmax_average(s, v, 2), e / e.sum() @ v, atol=1e-12, err_msg='three keys in blocks of 2: must equal softmax(S) V')
    _, calls = calls_of(online_softmax_average, 'online_softmax_step', s, v, 2)
    fed = [shapes[1][-1] if shapes[1:] and shapes[1] else None for shapes in calls]
    assert fed == [2, 1], f'three keys in blocks of 2: expected online_softmax_step called with blocks of [2, 1] key(s), got {fed}: feed the keys to your step one block at a time (the point of the question)'
    local = hasattr(online_softmax_average, '__code__') and hasattr(signal, 'SIGALRM') and (threading.current_thread() is threading.main_thread())
    quick = getattr(online_softmax_average, 'within', lambda _: online_softmax_average)(5)

    def too_long(*_):
        raise TimeoutError('online_softmax_average(scores, values, 0) ran for 5 s without returning: a loop that moves by block_size never ends when block_size is 0; check block_size < 1 first and raise ValueError')
    for bad in (0, -1):
        previous = signal.signal(signal.SIGALRM, too_long) if local else None
        if local:
            signal.alarm(5)
        try:
            quick(s, v, bad)
        except ValueError:
            continue
        finally:
            if local:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)
        raise AssertionError(f'block_size = {bad} should raise a ValueError (the question asks for it)')

@test_case(points=None, hidden=False)
def test_masked_blocks_and_house_rules(online_softmax_step, online_softmax_average):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    step = guarded(online_softmax_step, libraries=('torch', 'scipy'))
    with np.errstate(all='ignore'):
        m, l, acc = step((np.full(2, -np.inf), np.zeros(2), np.zeros((2, 1))), np.array([[-np.inf, -np.inf], [-np.inf, 1.0]]), np.array([[1.0], [3.0]]))
    assert not (np.isnan(m).any() or np.isnan(l).any() or np.isnan(acc).any()), 'a block of only -inf from the empty state gave NaN: exp(-inf - (-inf)) is NaN, so shift a row that has seen nothing but -inf by 0 instead (its state stays m = -inf, l = 0, acc = 0)'
    assert (m[0], l[0], acc[0, 0]) == (-np.inf, 0.0, 0.0), f'query 0 has seen only masked keys: its state stays (m, l, acc) = (-inf, 0, 0), got ({m[0]}, {l[0]}, {acc[0, 0]})'
    s = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]])
    with np.errstate(all='ignore'):
        got = guarded(online_softmax_average, libraries=('torch', 'scipy'))(s, np.array([[1.0], [5.0], [3.0]]), 2)
    np.testing.assert_allclose(got, [[0.0], [2.0]], atol=1e-12, err_msg='a query whose keys are all masked gets zeros; the other one averages the values of keys 0 and 2')

