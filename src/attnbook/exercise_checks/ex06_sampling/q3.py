from attnbook.exercise_checks.case import test_case

OK_FORMAT = False

name = "q3"
points = [0.1, 0.1, 0.2, 0.2, 0.2, 0.1]

@test_case(points=None, hidden=False)
def test_shape_and_type(sample_next, logits, temperature_softmax, top_k_filter):
    import torch
    try:
        z = torch.tensor([[0.0, 2.0, 1.0]])
        earlier_ok = torch.allclose(temperature_softmax(z, 2.0), torch.softmax(z / 2.0, dim=-1), atol=1e-06) and torch.isfinite(top_k_filter(z, 2)).tolist() == [[False, True, True]]
    except Exception:
        earlier_ok = False
    assert earlier_ok, "this check runs your temperature_softmax (question 1) and top_k_filter (question 2), which are not right yet on the logits [[0, 2, 1]] (temperature 2, k = 2): fix them first (grading runs this question with the course's)"
    import torch
    ids = sample_next(logits, generator=torch.Generator().manual_seed(0))
    assert isinstance(ids, torch.Tensor), 'return a torch tensor'
    assert ids.shape == (2, 1), f'expected shape (B, 1) = (2, 1), got {tuple(ids.shape)}'
    assert ids.dtype == torch.long, f'token ids are torch.long, got {ids.dtype}'
    assert ((ids >= 0) & (ids < 6)).all(), 'token ids must lie in [0, V)'
    only = torch.full((3, 6), float('-inf'))
    only[0, 4], only[1, 2], only[2, 5] = (0.0, 0.0, 0.0)
    ids = sample_next(only, generator=torch.Generator().manual_seed(0))
    assert ids.flatten().tolist() == [4, 2, 5], f"three rows whose only possible tokens (the only finite logits) are 4, 2 and 5: expected [[4], [2], [5]], got {ids.tolist()}: draw from each row's own probabilities"

@test_case(points=None, hidden=False)
def test_same_seed_same_tokens(sample_next, temperature_softmax, top_k_filter):
    import torch
    try:
        z = torch.tensor([[0.0, 2.0, 1.0]])
        earlier_ok = torch.allclose(temperature_softmax(z, 2.0), torch.softmax(z / 2.0, dim=-1), atol=1e-06) and torch.isfinite(top_k_filter(z, 2)).tolist() == [[False, True, True]]
    except Exception:
        earlier_ok = False
    assert earlier_ok, "this check runs your temperature_softmax (question 1) and top_k_filter (question 2), which are not right yet on the logits [[0, 2, 1]] (temperature 2, k = 2): fix them first (grading runs this question with the course's)"
    import torch
    z = torch.zeros(50, 10)
    a = sample_next(z, generator=torch.Generator().manual_seed(7))
    b = sample_next(z, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a, b), 'two generators with the same seed must give the same tokens'
    c = sample_next(z, generator=torch.Generator().manual_seed(8))
    assert not torch.equal(a, c), f'generators seeded 7 and 8 gave the same 50 tokens ({a.flatten().tolist()[:10]}, ...), where ten equally likely tokens almost never repeat 50 draws: draw at random, from the generator you are given'

@test_case(points=None, hidden=False)
def test_top_1_is_the_most_likely_token(sample_next, logits, temperature_softmax, top_k_filter):
    import torch
    try:
        z = torch.tensor([[0.0, 2.0, 1.0]])
        earlier_ok = torch.allclose(temperature_softmax(z, 2.0), torch.softmax(z / 2.0, dim=-1), atol=1e-06) and torch.isfinite(top_k_filter(z, 2)).tolist() == [[False, True, True]]
    except Exception:
        earlier_ok = False
    assert earlier_ok, "this check runs your temperature_softmax (question 1) and top_k_filter (question 2), which are not right yet on the logits [[0, 2, 1]] (temperature 2, k = 2): fix them first (grading runs this question with the course's)"
    import torch
    ids = sample_next(logits.repeat(100, 1), top_k=1, generator=torch.Generator().manual_seed(0))
    assert ids.flatten().tolist() == [3, 5] * 100, 'with top_k=1 only the largest logit of a row may be drawn (token 3 in the first row, 5 in the second): do you filter the logits with top_k_filter before the softmax?'

@test_case(points=None, hidden=False)
def test_a_cold_temperature_draws_the_top_token(sample_next, logits, temperature_softmax, top_k_filter):
    import torch
    try:
        z = torch.tensor([[0.0, 2.0, 1.0]])
        earlier_ok = torch.allclose(temperature_softmax(z, 2.0), torch.softmax(z / 2.0, dim=-1), atol=1e-06) and torch.isfinite(top_k_filter(z, 2)).tolist() == [[False, True, True]]
    except Exception:
        earlier_ok = False
    assert earlier_ok, "this check runs your temperature_softmax (question 1) and top_k_filter (question 2), which are not right yet on the logits [[0, 2, 1]] (temperature 2, k = 2): fix them first (grading runs this question with the course's)"
    import torch
    ids = sample_next(logits.repeat(100, 1), temperature=0.01, generator=torch.Generator().manual_seed(3))
    tokens = ids.flatten().tolist()
    assert tokens == [3, 5] * 100, f'at temperature 0.01 the largest logit of each row takes all the probability (token 3 in the first row, 5 in the second), but {len([t for t in tokens if t not in (3, 5)])} of 200 draws were other tokens: pass the temperature on to temperature_softmax'
    ids = sample_next(logits.repeat(500, 1), temperature=4.0, generator=torch.Generator().manual_seed(4))
    rare = ids[0::2].flatten().tolist().count(1)
    assert rare >= 20, f'at temperature 4 token 1 of the first row (logit -1) has probability 0.09, but it came {rare} times in 500 draws: pass the temperature on to temperature_softmax'

@test_case(points=None, hidden=False)
def test_it_draws_rather_than_picks(sample_next, temperature_softmax, top_k_filter):
    import torch
    try:
        z = torch.tensor([[0.0, 2.0, 1.0]])
        earlier_ok = torch.allclose(temperature_softmax(z, 2.0), torch.softmax(z / 2.0, dim=-1), atol=1e-06) and torch.isfinite(top_k_filter(z, 2)).tolist() == [[False, True, True]]
    except Exception:
        earlier_ok = False
    assert earlier_ok, "this check runs your temperature_softmax (question 1) and top_k_filter (question 2), which are not right yet on the logits [[0, 2, 1]] (temperature 2, k = 2): fix them first (grading runs this question with the course's)"
    import torch
    ids = sample_next(torch.zeros(200, 10), generator=torch.Generator().manual_seed(1))
    n = len(set(ids.flatten().tolist()))
    assert n >= 5, f'200 rows with ten equally likely tokens gave only {n} different tokens: draw with torch.multinomial(probs, 1, generator=generator) instead of taking the most likely token'

@test_case(points=None, hidden=False)
def test_sampling_house_rules(sample_next, logits, temperature_softmax, top_k_filter):
    import torch
    try:
        z = torch.tensor([[0.0, 2.0, 1.0]])
        earlier_ok = torch.allclose(temperature_softmax(z, 2.0), torch.softmax(z / 2.0, dim=-1), atol=1e-06) and torch.isfinite(top_k_filter(z, 2)).tolist() == [[False, True, True]]
    except Exception:
        earlier_ok = False
    assert earlier_ok, "this check runs your temperature_softmax (question 1) and top_k_filter (question 2), which are not right yet on the logits [[0, 2, 1]] (temperature 2, k = 2): fix them first (grading runs this question with the course's)"
    from attnbook.exercise_checks.grading import guarded
    import torch
    state = torch.get_rng_state()
    torch.manual_seed(12345)
    try:
        ids = guarded(sample_next)(logits, temperature=0.8, top_k=3, generator=torch.Generator().manual_seed(2))
    finally:
        torch.set_rng_state(state)
    assert ids.shape == (2, 1), f'expected (2, 1) token ids, got {tuple(ids.shape)}'
    top3 = torch.topk(logits, 3, dim=-1).indices.tolist()
    assert all((int(i) in row for i, row in zip(ids.flatten(), top3))), f"top_k = 3 on the example's logits: expected each row's token among its three largest logits, {top3}, got {ids.flatten().tolist()}"

