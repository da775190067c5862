from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = [0]

@test_case(points=None, hidden=False)
def test_one_row(top_k_filter):
    import torch
    z = torch.tensor([[2.0, -1.0, 0.5, 3.0, 0.0, 1.0]])
    f = top_k_filter(z, 2)
    assert isinstance(f, torch.Tensor) and f.shape == (1, 6), 'return a tensor shaped like the logits'
    inf = float('-inf')
    expected = torch.tensor([[2.0, inf, inf, 3.0, inf, inf]])
    assert torch.equal(f, expected), f'k=2 should keep the two largest logits (3.0 and 2.0), got {f}'

