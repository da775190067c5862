from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q4"
points = [0.2, 0.1, 0.2]

@test_case(points=None, hidden=False)
def test_the_token_that_crosses_p_is_kept(top_p_filter):
    import torch
    z = torch.log(torch.tensor([[0.15, 0.5, 0.05, 0.3]]))
    f = top_p_filter(z, 0.7)
    assert isinstance(f, torch.Tensor) and f.shape == z.shape, 'return a tensor shaped like the logits'
    kept = torch.isfinite(f)[0].tolist()
    assert kept == [False, True, False, True], f'p = 0.7: the tokens of probability 0.5 and 0.3 make the nucleus (0.5 alone is less than 0.7, so 0.3 is needed too), got kept = {kept}: keep a token while the tokens ranked above it hold less than p'
    assert torch.equal(f[torch.isfinite(f)], z[torch.isfinite(f)]), 'kept logits stay unchanged'

@test_case(points=None, hidden=False)
def test_nucleus_house_rules(top_p_filter, logits):
    from attnbook.exercise_checks.grading import guarded
    import torch
    f = guarded(top_p_filter, no_views=True)
    assert torch.equal(f(logits, 1.0), logits), 'p = 1 keeps every token (as a new tensor)'
    kept = torch.isfinite(f(logits, 0.5)).tolist()
    assert kept == [[False, False, False, True, False, False], [False, False, False, True, True, True]], f'p = 0.5 on the two example rows: token 3 alone holds 0.61 of the first row; the second row needs its three likeliest tokens (0.21 + 0.19 < 0.5): got kept = {kept}'

@test_case(points=None, hidden=False)
def test_the_boundary_and_p_one(top_p_filter):
    import torch
    z = torch.tensor([[1.0, 0.0, -1.0]], dtype=torch.float64)
    top = float(torch.softmax(z, dim=-1)[0, 0])
    kept = torch.isfinite(top_p_filter(z, top)).tolist()
    assert kept == [[True, False, False]], f'p = {top:.6f}, the probability of token 0: the mass above token 1 is exactly p, which is not less than p, so token 0 alone is the nucleus; got kept = {kept}: keep a token only while the tokens ranked above it hold strictly less than p'
    tiny = torch.tensor([[30.0, 0.0, -20.0]])
    kept = torch.isfinite(top_p_filter(tiny, 1.0)).tolist()
    assert kept == [[True, True, True]], f"p = 1 keeps every token, even one of probability 2e-22, below float64's resolution next to 1 (a running sum already reads 1.0 above it); got kept = {kept}"

