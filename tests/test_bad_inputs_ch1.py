"""Bad input to chapter 1's additions: `attention_from_scores` and `attnbook.cross`. As in
`test_bad_inputs.py`: each row is an invalid call, the exception it must raise and a pattern
its message must match (the argument's name and what was expected)."""

from __future__ import annotations

import pytest
import torch

from attnbook.attention import attention_from_scores
from attnbook.cross import (
    AdditiveScore,
    Reverser,
    reversal_batch,
    reverse_greedy,
    train_reverser,
)


def t(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.zeros(*shape, dtype=dtype)


def ids(*shape: int, top: int = 3) -> torch.Tensor:
    return torch.zeros(*shape, dtype=torch.long) + top


ROWS = [
    # attention_from_scores(scores, v, mask)
    (
        lambda: attention_from_scores([[0.0]], t(1, 2)),
        TypeError,
        "scores must be a torch.Tensor",
    ),
    (
        lambda: attention_from_scores(t(3), t(3, 2)),
        ValueError,
        r"scores must have shape.*\(3,\)",
    ),
    (lambda: attention_from_scores(t(2, 3), t(3)), ValueError, "v must have shape"),
    (
        lambda: attention_from_scores(t(2, 3, dtype=torch.long), t(3, 2)),
        TypeError,
        "scores must be a floating-point tensor",
    ),
    (
        lambda: attention_from_scores(t(2, 3), t(3, 2, dtype=torch.float64)),
        TypeError,
        "same dtype",
    ),
    (lambda: attention_from_scores(t(2, 3), t(4, 2)), ValueError, "one column per key"),
    (lambda: attention_from_scores(t(2, 0), t(0, 2)), ValueError, r"T_k >= 1"),
    (
        lambda: attention_from_scores(t(2, 2, 3), t(3, 3, 2)),
        ValueError,
        "do not broadcast",
    ),
    (
        lambda: attention_from_scores(torch.full((2, 3), float("nan")), t(3, 2)),
        ValueError,
        "NaN or \\+inf",
    ),
    (
        lambda: attention_from_scores(torch.full((2, 3), float("inf")), t(3, 2)),
        ValueError,
        "NaN or \\+inf",
    ),
    (
        lambda: attention_from_scores(t(2, 3), t(3, 2), t(2, 3)),
        TypeError,
        "mask must be boolean",
    ),
    (
        lambda: attention_from_scores(
            t(2, 3), t(3, 2), torch.ones(2, 4, dtype=torch.bool)
        ),
        ValueError,
        "does not broadcast to the attention weights",
    ),
    # AdditiveScore(d_q, d_k, d_a) and its forward
    (lambda: AdditiveScore(0, 4, 4), ValueError, "d_q must be a positive int"),
    (lambda: AdditiveScore(4, 4, 2.0), TypeError, "d_a must be an int"),
    (lambda: AdditiveScore(3, 5, 4)(t(2, 5), t(6, 5)), ValueError, "d_q=3"),
    (lambda: AdditiveScore(3, 5, 4)(t(3), t(6, 5)), ValueError, r"q must have shape"),
    (
        lambda: AdditiveScore(3, 5, 4)(t(2, 3), [[0.0] * 5]),
        TypeError,
        "k must be a torch.Tensor",
    ),
    # reversal_batch(batch_size, length, n_symbols)
    (lambda: reversal_batch(0, 4, 4), ValueError, "batch_size must be a positive int"),
    (lambda: reversal_batch(2, 1, 4), ValueError, "length >= 2"),
    (lambda: reversal_batch(2, 4, 1.5), TypeError, "n_symbols must be an int"),
    # Reverser(n_symbols, length, d_model, score) and its forward
    (lambda: Reverser(10, 8, score="cosine"), ValueError, "score must be one of"),
    (lambda: Reverser(10, 8, d_model=0), ValueError, "d_model must be a positive int"),
    (lambda: Reverser(1, 8), ValueError, "n_symbols >= 2"),
    (
        lambda: Reverser(4, 3)(t(2, 3), ids(2, 3, top=0)),
        ValueError,
        "source must be .* long ids",
    ),
    (lambda: Reverser(4, 3)(ids(2, 5, top=0), ids(2, 3, top=0)), ValueError, "T <= 3"),
    (
        lambda: Reverser(4, 3)(ids(2, 3, top=4), ids(2, 3, top=0)),
        ValueError,
        r"source ids .* 0 \.\. 3",
    ),
    (
        lambda: Reverser(4, 3)(ids(2, 3, top=0), ids(2, 3, top=5)),
        ValueError,
        r"decoder_input ids .* 0 \.\. 4",
    ),
    (
        lambda: Reverser(4, 3)(ids(3, top=0), ids(3, top=0)),
        ValueError,
        r"source must have shape",
    ),
    # train_reverser, reverse_greedy
    (
        lambda: train_reverser(AdditiveScore(2, 2, 2)),
        TypeError,
        "model must be a Reverser",
    ),
    (lambda: train_reverser(Reverser(4, 3), steps=0), ValueError, "steps >= 1"),
    (
        lambda: reverse_greedy(Reverser(4, 3), ids(3, top=0)),
        ValueError,
        "source must have shape",
    ),
]


@pytest.mark.parametrize(
    "call, error, match", [pytest.param(*r, id=f"row{n}") for n, r in enumerate(ROWS)]
)
def test_bad_input_gets_a_clear_error(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
