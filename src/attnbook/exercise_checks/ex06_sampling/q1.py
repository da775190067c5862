from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q1"
points = [0.1, 0.1, 0.2, 0.1]

@test_case(points=None, hidden=False)
def test_temperature_one_is_the_softmax(temperature_softmax, logits):
    import torch
    p = temperature_softmax(logits, 1.0)
    assert isinstance(p, torch.Tensor), 'return a torch tensor'
    assert p.shape == logits.shape, f'expected shape {tuple(logits.shape)}, got {tuple(p.shape)}'
    torch.testing.assert_close(p, torch.softmax(logits, dim=-1), msg='at temperature 1 this is the softmax')

@test_case(points=None, hidden=False)
def test_rows_are_distributions(temperature_softmax, logits):
    import torch
    for tau in (0.5, 3.0):
        p = temperature_softmax(logits, tau)
        assert (p >= 0).all(), f'temperature {tau}: probabilities must be non-negative'
        torch.testing.assert_close(p.sum(-1), torch.ones(2), msg=f'temperature {tau}: every row must sum to 1')
        want = torch.softmax(logits / tau, dim=-1)
        torch.testing.assert_close(p, want, msg=f"temperature {tau} on the example's logits: expected softmax(logits / {tau}) = {[[round(x, 4) for x in row] for row in want.tolist()]}, got {[[round(x, 4) for x in row] for row in p.tolist()]}")

@test_case(points=None, hidden=False)
def test_temperature_divides_the_logits(temperature_softmax):
    import torch
    p = temperature_softmax(torch.tensor([[0.0, 2.0]]), 2.0)
    torch.testing.assert_close(p, torch.tensor([[0.2689414, 0.7310586]]), atol=1e-06, rtol=0, msg=f'at temperature 2 the logits [0, 2] become [0, 1], so p = [0.2689, 0.7311], got {p.tolist()}: divide the logits by the temperature, before the softmax')
    for tau in (0.5, 0.8, 3.0):
        p = temperature_softmax(torch.tensor([[0.0, 2.0]]), tau)
        want = 1 / (1 + torch.exp(torch.tensor(-2.0 / tau)))
        torch.testing.assert_close(p[0, 1], want, atol=1e-06, rtol=0, msg=f'temperature {tau}, logits [0, 2]: token 1 has probability 1 / (1 + exp(-2 / {tau})) = {float(want):.6f}, got {float(p[0, 1]):.6f}: divide by the temperature you are given, whatever its value')

@test_case(points=None, hidden=False)
def test_extreme_logits_and_house_rules(temperature_softmax):
    from attnbook.exercise_checks.grading import guarded
    import torch
    inf = float('inf')
    z = torch.tensor([[1000.0, 0.0, -1000.0], [-inf, 0.0, 1.0], [2.0, 0.0, -inf]])
    p = guarded(temperature_softmax)(z, 1.0)
    assert torch.isfinite(p).all(), f"logits of +-1000, or -inf (a token top-k removed), gave {p.tolist()}: subtract each row's maximum before the exponential (exp(1000) overflows), or use torch.softmax"
    torch.testing.assert_close(p, torch.softmax(z, dim=-1), msg=f'logits of +-1000 and -inf at temperature 1: expected {torch.softmax(z, dim=-1).tolist()}, got {p.tolist()}')
    half = temperature_softmax(z[1:2].to(torch.bfloat16), 1.0)
    assert half.dtype == torch.bfloat16, f"bfloat16 logits must give bfloat16 probabilities, got {half.dtype}: keep the logits' dtype"

