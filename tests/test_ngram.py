import math
from collections import Counter

import pytest
import torch

from attnbook.ngram import ngram_losses, unigram_loss


def random_ids(n: int, vocab: int, seed: int) -> torch.Tensor:
    # a skewed distribution with some structure: each token often repeats the one 2 back
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (n,), generator=g)
    repeat = torch.rand(n, generator=g) < 0.5
    for i in range(2, n):
        if repeat[i]:
            ids[i] = ids[i - 2]
    return ids


def reference_probability(
    train: list[int], context: list[int], c: int, vocab: int, d: float
) -> float:
    """The smoothing formula written out with dictionaries, one order at a time."""
    counts = Counter(train)
    p = (counts[c] + 1) / (len(train) + vocab)
    for n in range(2, len(context) + 2):
        h = tuple(context[len(context) - n + 1 :])
        grams = Counter(tuple(train[i : i + n]) for i in range(len(train) - n + 1))
        n_h = sum(k for g, k in grams.items() if g[:-1] == h)
        if n_h == 0:
            continue
        u_h = sum(1 for g in grams if g[:-1] == h)
        p = (max(grams[h + (c,)] - d, 0) + d * u_h * p) / n_h
    return p


def test_unigram_rung_is_the_unigram_baseline():
    train, val = random_ids(3000, 7, 0), random_ids(500, 7, 1)
    losses = ngram_losses(train, val, 7, max_n=3)
    assert len(losses) == 3
    assert math.isclose(losses[0], unigram_loss(train, val[2:], 7), rel_tol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_each_order_is_a_distribution_over_the_next_token(n):
    """With a validation text of exactly n tokens only the last is scored, so the loss is
    -log P(c | context): over every c the probabilities sum to 1, also for unseen contexts."""
    vocab = 6
    train = random_ids(400, vocab, 2)
    # seen and (likely) unseen contexts
    for context in ([1, 3, 1], [5, 5, 5], [0, 4, 2]):
        ctx = context[len(context) - n + 1 :] if n > 1 else []
        probs = [
            math.exp(-ngram_losses(train, torch.tensor(ctx + [c]), vocab, max_n=n)[-1])
            for c in range(vocab)
        ]
        assert all(p > 0 for p in probs)
        assert math.isclose(sum(probs), 1.0, rel_tol=1e-9)


def test_matches_the_formula_written_out():
    vocab, d = 5, 0.6
    train = random_ids(300, vocab, 3)
    for context in ([0, 1, 2], [2, 0, 2], [4, 4, 3]):
        for c in range(vocab):
            got = math.exp(
                -ngram_losses(train, torch.tensor(context + [c]), vocab, 4, d)[-1]
            )
            want = reference_probability(train.tolist(), context, c, vocab, d)
            assert math.isclose(got, want, rel_tol=1e-9)


def test_more_context_helps_on_structured_text_and_scores_the_same_positions():
    train, val = random_ids(20_000, 8, 4), random_ids(4000, 8, 5)
    losses = ngram_losses(train, val, 8, max_n=4)
    # the previous token alone tells nothing here
    assert abs(losses[0] - losses[1]) < 0.02
    # 2 back: a trigram
    assert losses[1] > losses[2] + 0.2 and losses[1] > losses[3] + 0.2
    assert losses[0] <= math.log(8) + 0.05
    cycle = torch.arange(4).repeat(500)  # 0 1 2 3 0 1 ...: the bigram knows everything
    assert ngram_losses(cycle, cycle, 4, max_n=2)[1] < 0.01


def test_input_checks():
    ids = torch.zeros(10, dtype=torch.long)
    with pytest.raises(TypeError, match="integer token ids"):
        ngram_losses(ids.float(), ids, 3)
    with pytest.raises(ValueError, match=r"token ids in \[0, 3\)"):
        ngram_losses(ids, ids + 3, 3)
    with pytest.raises(ValueError, match="discount must be in"):
        ngram_losses(ids, ids, 3, discount=1.0)
    with pytest.raises(ValueError, match="too large for vocab_size"):
        ngram_losses(ids, ids, 50_000, max_n=5)
    with pytest.raises(ValueError, match="at least max_n=4 tokens"):
        ngram_losses(ids, ids[:3], 3, max_n=4)
