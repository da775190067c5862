from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.2, 0.1, 0.2]

@test_case(points=None, hidden=False)
def test_the_token_that_crosses_p_is_kept(top_p_filter, VARIANT):
    import torch
    task = VARIANT['task']
    z = torch.log(torch.tensor([[0.15, 0.5, 0.05, 0.3]]))
    extra, p, want, why = {'plain': ((), 0.7, [False, True, False, True], 'the tokens of probability 0.5 and 0.3 make the nucleus (0.5 alone is less than 0.7, so 0.3 is needed too)'), 'tempered': ((2.0,), 0.7, [True, True, False, True], 'at temperature 2 the probabilities 0.5, 0.3, 0.15 and 0.05 become about 0.38, 0.29, 0.21 and 0.12 (their square roots, renormalised): 0.38 + 0.29 = 0.67 is less than 0.7, so the third, 0.21, is needed too'), 'cut': ((2,), 0.55, [False, True, False, False], 'the top-2 cut leaves 0.5 and 0.3, renormalised 0.625 and 0.375: 0.625 alone reaches 0.55')}[task]
    f = top_p_filter(z, p, *extra)
    assert isinstance(f, torch.Tensor) and f.shape == z.shape, 'return a tensor shaped like the logits'
    kept = torch.isfinite(f)[0].tolist()
    setting = f'p = {p}' + {'plain': '', 'tempered': ', temperature 2', 'cut': ', k = 2'}[task]
    assert kept == want, f'{setting} on the probabilities [0.15, 0.5, 0.05, 0.3]: {why}; expected kept = {want}, got kept = {kept}: keep a token while the tokens ranked above it hold less than p'
    row = z / 2.0 if task == 'tempered' else z
    assert torch.equal(f[torch.isfinite(f)], row[torch.isfinite(f)]), 'the kept entries are the logits at the temperature, logits / 2' if task == 'tempered' else 'kept logits stay unchanged'

@test_case(points=None, hidden=False)
def test_nucleus_house_rules_and_your_example(top_p_filter, logits, VARIANT):
    from attnbook.exercise_checks.grading import guarded
    import torch
    task = VARIANT['task']

    def prepared(z, *extra):
        if task == 'tempered':
            return z / extra[0]
        if task == 'cut':
            kth = torch.topk(z, min(extra[0], z.shape[-1]), dim=-1).values[..., -1:]
            return z.masked_fill(z < kth, float('-inf'))
        return z

    def said(p, *extra):
        return f'p = {p}' + ''.join((f', {n} {x}' for n, x in zip({'tempered': ['temperature'], 'cut': ['k']}.get(task, []), extra)))
    mine = {'plain': (), 'tempered': (VARIANT.get('tau', 100) / 100,), 'cut': (VARIANT.get('k', 1),)}[task]

    def reference(z, p, *extra):
        r = prepared(z, *extra)
        out = torch.full_like(r, float('-inf'))
        for b in range(r.shape[0]):
            probs = torch.softmax(r[b].double(), dim=-1)
            total = 0.0
            for i in torch.argsort(probs, descending=True).tolist():
                if total >= p:
                    break
                out[b, i] = r[b, i]
                total += float(probs[i])
        return out
    f = guarded(top_p_filter, no_views=True)
    whole = f(logits, 1.0, *mine)
    assert torch.equal(torch.isfinite(whole), torch.isfinite(prepared(logits, *mine))) and torch.allclose(whole, prepared(logits, *mine), rtol=1e-06, atol=0.0), f"{said(1.0, *mine)} on the example's logits: expected {prepared(logits, *mine).tolist()} (as a new tensor), got {whole.tolist()}"
    p = VARIANT['p'] / 100
    rows = torch.randn(3, 10, generator=torch.Generator().manual_seed(VARIANT['seed'])) * 2
    for name, z in [("the example's two rows", logits), (f"torch.randn(3, 10) * 2 drawn with seed {VARIANT['seed']}", rows)]:
        want, kept = (torch.isfinite(reference(z, p, *mine)).tolist(), torch.isfinite(f(z, p, *mine)).tolist())
        assert kept == want, f'{said(p, *mine)} on {name}: expected kept = {want}, got kept = {kept}'

@test_case(points=None, hidden=False)
def test_the_boundary_and_p_one(top_p_filter, VARIANT):
    import torch
    task = VARIANT['task']

    def prepared(z, *extra):
        if task == 'tempered':
            return z / extra[0]
        if task == 'cut':
            kth = torch.topk(z, min(extra[0], z.shape[-1]), dim=-1).values[..., -1:]
            return z.masked_fill(z < kth, float('-inf'))
        return z
    given, extra, how = {'plain': ([1.0, 0.0, -1.0], (), ''), 'tempered': ([0.5, 0.0, -0.5], (0.5,), ', temperature 0.5'), 'cut': ([1.0, 0.0, -1.0, -3.0], (3,), ', k = 3')}[task]
    z = torch.tensor([given], dtype=torch.float64)
    top = float(torch.softmax(prepared(z, *extra), dim=-1)[0, 0])
    kept = torch.isfinite(top_p_filter(z, top, *extra)).tolist()
    want = [[True] + [False] * (z.shape[-1] - 1)]
    assert kept == want, f'logits {z.tolist()}{how}, p = {top:.6f}, the probability of token 0: the mass above token 1 is exactly p, which is not less than p, so token 0 alone is the nucleus, expected kept = {want}; got kept = {kept}: keep a token only while the tokens ranked above it hold strictly less than p'
    tiny, extra, how = {'plain': ([30.0, 0.0, -20.0], (), ''), 'tempered': ([30.0, 0.0, -20.0], (0.5,), ', temperature 0.5'), 'cut': ([30.0, 0.0, -20.0, -25.0], (3,), ', k = 3')}[task]
    kept = torch.isfinite(top_p_filter(torch.tensor([tiny]), 1.0, *extra)).tolist()
    want = [[True, True, True] + [False] * (len(tiny) - 3)]
    assert kept == want, f"p = 1{how} on the logits {tiny} keeps every token{(' of the cut' if task == 'cut' else '')}, even token 2 of probability below 1e-20, below float64's resolution next to 1 (a running sum already reads 1.0 above it): expected kept = {want}, got kept = {kept}"

