"""Bad input to chapter 11's modules (linear_attention, mqar, recall_models), in the format of
tests/test_bad_inputs.py: each row an invalid call, the exception and a pattern of its message."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from attnbook import linear_attention as la
from attnbook.mqar import RecallTask, mqar_batch
from attnbook.recall_models import RecallModel, RecallModelConfig


def row(call: Callable[[], object], error: type[Exception], match: str, id: str):  # noqa: A002
    return pytest.param(call, error, match, id=id)


def t(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.zeros(*shape, dtype=dtype)


def ones(*shape: int) -> torch.Tensor:
    return torch.ones(*shape)


LINEAR = [
    row(
        lambda: la.linear_attention_parallel(t(2, 3, 4), t(2, 3, 4), t(2, 3, 4)),
        ValueError,
        r"q must have shape \(B, H, T, d_k\), got \(2, 3, 4\)",
        "linear-3d",
    ),
    row(
        lambda: la.linear_attention_recurrent([1.0], t(1, 1, 2, 3), t(1, 1, 2, 3)),
        TypeError,
        "q must be a torch.Tensor",
        "linear-list",
    ),
    row(
        lambda: la.linear_attention_parallel(
            t(1, 1, 2, 3, dtype=torch.int64), t(1, 1, 2, 3), t(1, 1, 2, 3)
        ),
        TypeError,
        "q must be a floating-point tensor",
        "linear-int",
    ),
    row(
        lambda: la.linear_attention_parallel(
            t(1, 1, 2, 3, dtype=torch.float64), t(1, 1, 2, 3), t(1, 1, 2, 3)
        ),
        TypeError,
        "q, k and v must have the same dtype",
        "linear-mixed-dtypes",
    ),
    row(
        lambda: la.linear_attention_parallel(
            t(1, 1, 2, 3), t(1, 1, 2, 4), t(1, 1, 2, 3)
        ),
        ValueError,
        "q and k must have the same shape",
        "linear-qk-widths",
    ),
    row(
        lambda: la.linear_attention_parallel(
            t(1, 1, 2, 3), t(1, 1, 2, 3), t(1, 1, 5, 3)
        ),
        ValueError,
        "v must have the batch, heads and tokens of k",
        "linear-v-tokens",
    ),
    row(
        lambda: la.linear_attention_parallel(
            t(1, 1, 2, 0), t(1, 1, 2, 0), t(1, 1, 2, 3)
        ),
        ValueError,
        "need d_k >= 1",
        "linear-empty-features",
    ),
    row(
        lambda: la.linear_attention_recurrent(
            t(1, 1, 2, 3),
            t(1, 1, 2, 3),
            t(1, 1, 2, 3),
            state=(t(1, 1, 3, 4), t(1, 1, 3)),
        ),
        ValueError,
        r"state S must have shape \(1, 1, 3, 3\)",
        "linear-state-shape",
    ),
    row(
        lambda: la.linear_attention_recurrent(
            t(1, 1, 2, 3), t(1, 1, 2, 3), t(1, 1, 2, 3), state=t(1, 1, 3, 3)
        ),
        TypeError,
        r"state must be a tuple \(S, z\)",
        "linear-state-not-tuple",
    ),
]

DELTA = [
    row(
        lambda: la.delta_rule_parallel(
            t(1, 1, 2, 3), t(1, 1, 2, 3), t(1, 1, 2, 3), ones(1, 2)
        ),
        ValueError,
        r"beta must have shape \(B, H, T\)",
        "delta-beta-2d",
    ),
    row(
        lambda: la.delta_rule_parallel(
            t(1, 1, 2, 3), t(1, 1, 2, 3), t(1, 1, 2, 3), ones(1, 1, 3)
        ),
        ValueError,
        r"beta must have shape \(B, H, T\) = \(1, 1, 2\)",
        "delta-beta-tokens",
    ),
    row(
        lambda: la.delta_rule_recurrent(
            t(1, 1, 2, 3), t(1, 1, 2, 3), t(1, 1, 2, 3), ones(1, 1, 2), t(1, 1, 2)
        ),
        ValueError,
        r"alpha \(the decay gate\) must lie in \(0, 1\]",
        "delta-alpha-zero",
    ),
    row(
        lambda: la.delta_rule_parallel(
            t(1, 1, 2, 3),
            t(1, 1, 2, 3),
            t(1, 1, 2, 3),
            ones(1, 1, 2),
            2 * ones(1, 1, 2),
        ),
        ValueError,
        r"alpha \(the decay gate\) must lie in \(0, 1\]",
        "delta-alpha-above-one",
    ),
    row(
        lambda: la.delta_rule_recurrent(
            t(1, 1, 2, 3),
            t(1, 1, 2, 3),
            t(1, 1, 2, 3),
            ones(1, 1, 2),
            state=t(1, 1, 3, 2),
        ),
        ValueError,
        r"state must have shape \(1, 1, 3, 3\)",
        "delta-state-shape",
    ),
    row(
        lambda: la.state_bytes(2, 0, 4, 4, 4),
        ValueError,
        "n_head must be a positive int",
        "state-bytes-no-heads",
    ),
    row(
        lambda: la.state_bytes(2, 2, 4.0, 4, 4),
        TypeError,
        "d_k must be an int",
        "state-bytes-float",
    ),
]

RECALL = [
    row(
        lambda: mqar_batch(2, 0),
        ValueError,
        "n_pairs must be a positive int",
        "pairs-0",
    ),
    row(
        lambda: mqar_batch(2, 64, 128),
        ValueError,
        r"n_pairs=64 needs as many distinct keys, but vocab_size=128 has only 63",
        "pairs-too-many",
    ),
    row(
        lambda: mqar_batch(2, 4, 31),
        ValueError,
        "vocab_size must be an even int",
        "odd-vocab",
    ),
    row(
        lambda: mqar_batch(2, 4, 32, generator=3),
        TypeError,
        "generator must be",
        "gen-int",
    ),
    row(
        lambda: RecallTask(eval_pairs=()),
        ValueError,
        "eval_pairs must name at least one number of pairs",
        "task-no-pairs",
    ),
    row(
        lambda: RecallTask(model=RecallModelConfig(vocab_size=64)),
        ValueError,
        r"the model's vocab_size \(64\) must equal the task's \(128\)",
        "task-vocab-mismatch",
    ),
    row(lambda: RecallModel("mamba"), ValueError, "unknown model kind 'mamba'", "kind"),
    row(
        lambda: RecallModelConfig(d_model=30, n_head=4),
        ValueError,
        "d_model=30 must be divisible by n_head=4",
        "width-heads",
    ),
    row(
        lambda: RecallModel("softmax", RecallModelConfig(vocab_size=8))(
            torch.tensor([[1, 9]])
        ),
        ValueError,
        r"token ids must lie in 0 .. 7, got 1 .. 9",
        "token-out-of-range",
    ),
    row(
        lambda: RecallModel("softmax", RecallModelConfig(vocab_size=8))(t(1, 3)),
        TypeError,
        "tokens must be int64 token ids",
        "token-float",
    ),
]

TABLES = [LINEAR, DELTA, RECALL]


@pytest.mark.parametrize(
    ("call", "error", "match"), [r for table in TABLES for r in table]
)
def test_bad_input_gets_a_clear_error(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
