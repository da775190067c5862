from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q2"
points = [0.2, 0.2]

@test_case(points=None, hidden=False)
def test_one_row(top_k_filter):
    import torch
    z = torch.tensor([[2.0, -1.0, 0.5, 3.0, 0.0, 1.0]])
    f = top_k_filter(z, 2)
    assert isinstance(f, torch.Tensor) and f.shape == (1, 6), 'return a tensor shaped like the logits'
    inf = float('-inf')
    expected = torch.tensor([[2.0, inf, inf, 3.0, inf, inf]])
    assert torch.equal(f, expected), f'k=2 should keep the two largest logits (3.0 and 2.0), got {f}'

@test_case(points=None, hidden=False)
def test_two_rows_a_zero_logit_and_house_rules(top_k_filter, logits):
    from attnbook.exercise_checks.grading import guarded
    import torch
    f = guarded(top_k_filter, no_views=True)
    inf = float('-inf')
    kept = f(logits, 5)
    expected = torch.tensor([[2.0, inf, 0.5, 3.0, 0.0, 1.0], [inf, 0.2, 0.3, 0.4, 0.5, 0.6]])
    assert isinstance(kept, torch.Tensor) and kept.shape == (2, 6), 'return a (2, 6) tensor for two rows'
    assert torch.equal(kept, expected), f'k = 5 on the two example rows should give {expected.tolist()}, got {kept.tolist()}: each row has its own k-th largest logit (keepdim), and a kept logit of 0.0 stays 0.0 (select, do not multiply)'
    everything = f(logits, 10)
    assert torch.equal(everything, logits), 'k >= V keeps every logit (as a new tensor)'

