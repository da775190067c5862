from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.15, 0.15, 0.15, 0.15, 0.15]

@test_case(points=None, hidden=False)
def test_shapes(attention, Q, K, V):
    import numpy as np

    def reference(q, k, v, mask=None):
        s = q @ k.T / np.sqrt(q.shape[-1])
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        return (w @ v, w)
    out, w = attention(Q, K, V)
    assert np.shape(out) == (4, 8), f'output should be (T_q, d_v) = (4, 8), got {np.shape(out)}'
    assert np.shape(w) == (4, 6), f'weights should be (T_q, T_k) = (4, 6), got {np.shape(w)}'
    ref_out, ref_w = reference(Q, K, V)
    np.testing.assert_allclose(w, ref_w, atol=1e-09, err_msg='the weights of the example Q, K: softmax(Q @ K.T / sqrt(8)) row by row')
    np.testing.assert_allclose(out, ref_out, atol=1e-09, err_msg='the output of the example: weights @ V')

@test_case(points=None, hidden=False)
def test_weights_are_a_distribution(attention, Q, K, V):
    import numpy as np

    def reference(q, k, v, mask=None):
        s = q @ k.T / np.sqrt(q.shape[-1])
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
        return (w @ v, w)
    _, w = attention(Q[:, ::2], K[:, ::2], V)
    assert np.shape(w) == (4, 6), f'weights should be (T_q, T_k) = (4, 6), got {np.shape(w)}'
    assert np.all(w >= 0), f'weights must be non-negative, got a smallest weight of {np.min(w):.3g}'
    np.testing.assert_allclose(w.sum(axis=1), np.ones(4), atol=1e-09, err_msg='each row of weights (one query, all keys) must sum to 1')
    np.testing.assert_allclose(w, reference(Q[:, ::2], K[:, ::2], V)[1], atol=1e-09, err_msg='queries and keys of width d_k = 4 (every other column of Q and K): divide by sqrt(4) = 2, the width of what you are given')

@test_case(points=None, hidden=False)
def test_scores_are_scaled(attention):
    import numpy as np
    Q = np.array([[2.0, 0.0]])
    K = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    V = np.array([[1.0], [0.0], [0.0]])
    out, w = attention(Q, K, V)
    assert np.shape(w) == (1, 3), f'weights should be (T_q, T_k) = (1, 3), got {np.shape(w)}'
    np.testing.assert_allclose(w, [[0.67284, 0.16358, 0.16358]], atol=0.0001, err_msg='did you divide the scores by sqrt(d_k), with d_k the width of the queries and keys, Q.shape[-1] = 2 (not the number of keys, K.shape[0] = 3)?')
    assert out.dtype == np.float64 and w.dtype == np.float64, f"return float64 arrays (NumPy's default), got {out.dtype} and {w.dtype}"

@test_case(points=None, hidden=False)
def test_the_mask_hides_keys(attention, VARIANT):
    import numpy as np

    def as_mask(allowed):
        near = -0.5 * np.abs(np.subtract.outer(*map(np.arange, allowed.shape)))
        bias = np.where(allowed, near if VARIANT['task'] == 'bias' else 0.0, -np.inf)
        return ({'allow': allowed, 'block': ~allowed, 'bias': bias}[VARIANT['task']], bias)
    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    V = np.array([[1.0], [2.0], [3.0]])
    rule = {'allow': 'a boolean mask, True means "may attend"', 'block': 'a boolean mask, True means "must not attend"', 'bias': 'a float mask added to the scaled scores (-inf: must not attend, a finite value: shift the score by it)'}[VARIANT['task']]
    mask = np.array([[True, False, True], [True, True, False]])
    mine, bias = as_mask(mask)
    out, w = attention(Q, K, V, mask=mine)
    s = Q @ K.T / np.sqrt(2) + bias
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    expected = e / e.sum(axis=-1, keepdims=True)
    assert np.shape(w) == (2, 3), f'weights should be (T_q, T_k) = (2, 3), got {np.shape(w)}'
    assert np.all(w[~mask] == 0), f"the hidden keys got weights {w[~mask]}: your variant's mask is {rule}; a key the mask hides gets a score of -inf before the softmax"
    assert w[1, 0] > expected[1, 0] / 2, f"query 1 may attend to key 0, whose score is exactly 0, but it got weight {w[1, 0]}: hide the keys your variant's mask hides ({rule}), not the keys whose score is 0"
    np.testing.assert_allclose(w.sum(axis=1), [1.0, 1.0], atol=1e-09, err_msg='with a mask each row must still sum to 1: mask the scores, not the weights')
    np.testing.assert_allclose(out, w @ V, atol=1e-12, err_msg='the output is weights @ V')
    np.testing.assert_allclose(w, expected, atol=1e-09, err_msg=f"the weights of this example: your variant's mask is {rule}")
    K = np.array([[1.0, 0.0], [0.0, 1.0], [2000.0, 2000.0]])
    with np.errstate(all='ignore'):
        mine, bias = as_mask(np.array([[True, True, False], [True, True, False]]))
        out, w = attention(Q, K, V, mask=mine)
    assert np.all(np.isfinite(w)), f'a masked key with a huge score (about 1400) made the allowed weights {w.tolist()}: the softmax of the unmasked scores gives it all the weight and the others 0 (0 / 0 after renormalising); mask the scores before the softmax, not the weights after it'
    s = np.array([[1.0, 0.0], [0.0, 1.0]]) / np.sqrt(2) + bias[:, :2]
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(w, np.c_[p / p.sum(axis=-1, keepdims=True), [0.0, 0.0]], atol=1e-09, err_msg='with key 2 masked, each query shares its weight between keys 0 and 1 as if key 2 were not there')

@test_case(points=None, hidden=False)
def test_house_rules(attention, Q, K, V, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np

    def as_mask(allowed):
        near = -0.5 * np.abs(np.subtract.outer(*map(np.arange, allowed.shape)))
        bias = np.where(allowed, near if VARIANT['task'] == 'bias' else 0.0, -np.inf)
        return ({'allow': allowed, 'block': ~allowed, 'bias': bias}[VARIANT['task']], bias)
    mask = np.tril(np.ones((4, 6), dtype=bool))
    mine, bias = as_mask(mask)
    out, w = guarded(attention, libraries=('torch', 'scipy'))(Q, K, V, mask=mine)
    assert np.shape(out) == (4, 8), f'output should be (T_q, d_v) = (4, 8), got {np.shape(out)}'
    s = Q @ K.T / np.sqrt(8) + bias
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(w, e / e.sum(axis=-1, keepdims=True), atol=1e-09, err_msg='a causal mask (query i reads keys 0..i): the weights of the example')

