from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = [0]

@test_case(points=None, hidden=False)
def test_the_token_that_crosses_p_is_kept(top_p_filter):
    import torch
    z = torch.log(torch.tensor([[0.15, 0.5, 0.05, 0.3]]))
    f = top_p_filter(z, 0.7)
    assert isinstance(f, torch.Tensor) and f.shape == z.shape, 'return a tensor shaped like the logits'
    kept = torch.isfinite(f)[0].tolist()
    assert kept == [False, True, False, True], f'p = 0.7: the tokens of probability 0.5 and 0.3 make the nucleus (0.5 alone is less than 0.7, so 0.3 is needed too), got kept = {kept}: keep a token while the tokens ranked above it hold less than p'
    assert torch.equal(f[torch.isfinite(f)], z[torch.isfinite(f)]), 'kept logits stay unchanged'

