"""Bad input to the interactive attention view (`attnbook.explore`) and to the weights of
chapter 9's view (`streaming.stream_attention`), in the format of tests/test_bad_inputs.py:
each row an invalid call, the exception and a pattern of its message."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

from attnbook import explore, streaming
from attnbook.gpt import GPT, GPTConfig


def row(call: Callable[[], object], error: type[Exception], match: str, id: str):  # noqa: A002
    return pytest.param(call, error, match, id=id)


def uniform(*shape: int) -> torch.Tensor:
    return torch.full(shape, 1.0 / shape[-1])


def gpt(positions: str = "rope") -> GPT:
    config = GPTConfig(
        vocab_size=5, block_size=8, n_layer=1, n_head=2, n_embd=4, positions=positions
    )
    return GPT(config)


AB = ["a", "b"]
EXPLORE = [
    row(
        lambda: explore.explore(AB, [[1.0, 0.0]]),
        TypeError,
        "torch.Tensor or numpy",
        "list",
    ),
    row(
        lambda: explore.explore(AB, torch.ones(2, 2, dtype=torch.long)),
        TypeError,
        "floating-point",
        "int-weights",
    ),
    row(
        lambda: explore.explore(AB, uniform(2)),
        ValueError,
        r"must have shape \(T_q, T_k\)",
        "1-d",
    ),
    row(
        lambda: explore.explore(AB, uniform(1, 1, 1, 2, 2)),
        ValueError,
        r"\(layers, heads, T_q, T_k\), got \(1, 1, 1, 2, 2\)",
        "5-d",
    ),
    row(
        lambda: explore.explore([], torch.ones(0, 0)),
        ValueError,
        "must not be empty",
        "empty",
    ),
    row(
        lambda: explore.explore(AB, torch.tensor([[0.5, float("nan")], [1.0, 0.0]])),
        ValueError,
        "NaN or infinite",
        "nan",
    ),
    row(
        lambda: explore.explore(AB, torch.tensor([[2.0, -1.0], [1.0, 0.0]])),
        ValueError,
        r"must lie in \[0, 1\].*not the scores",
        "scores",
    ),
    row(
        lambda: explore.explore(AB, torch.tensor([[0.9, 0.9], [1.0, 0.0]])),
        ValueError,
        "sum to at most 1, a row sums to 1.8",
        "row-sum",
    ),
    row(
        lambda: explore.explore(["a"] * 201, uniform(1, 1, 201, 201)),
        ValueError,
        "too many for one view",
        "too-large",
    ),
    row(
        lambda: explore.explore(["a"], uniform(2, 2)),
        ValueError,
        "1 tokens for 2 queries",
        "few-tokens",
    ),
    row(
        lambda: explore.explore("ab", uniform(2, 2)),
        TypeError,
        "tokens must be a list of strings",
        "string-tokens",
    ),
    row(
        lambda: explore.explore([1, 2], uniform(2, 2)),
        TypeError,
        "tokens must all be strings",
        "int-tokens",
    ),
    row(
        lambda: explore.explore(AB, uniform(2, 3)),
        ValueError,
        "2 queries and 3 keys: pass key_tokens",
        "cross-without-keys",
    ),
    row(
        lambda: explore.explore(AB, uniform(2, 3), key_tokens=AB),
        ValueError,
        "2 key_tokens for 3 keys",
        "key-tokens-count",
    ),
    row(
        lambda: explore.explore(AB, uniform(3, 2, 2), head_names=["x"]),
        ValueError,
        "1 head_names for 3 heads",
        "head-names",
    ),
    row(
        lambda: explore.explore(AB, uniform(2, 1, 2, 2), layer_names="ab"),
        TypeError,
        "layer_names must be a sequence of strings",
        "layer-names-str",
    ),
    row(
        lambda: explore.explore(AB, uniform(2, 2), query=2),
        ValueError,
        r"query must be in 0..1, got 2",
        "query-range",
    ),
    row(
        lambda: explore.explore(AB, uniform(2, 2), query=True),
        TypeError,
        "query must be an int",
        "query-bool",
    ),
    row(
        lambda: explore.explore(AB, np.full((2, 2), 0.5), title=3),
        TypeError,
        "title must be a string",
        "title",
    ),
]

EXPLORE += [
    row(lambda: explore.explore(AB, uniform(2, 2), layer=1), ValueError,
        r"layer must be in 0..0, got 1", "layer-range"),
    row(lambda: explore.explore(AB, uniform(3, 2, 2), head=1.0), TypeError,
        "head must be an int, got float", "head-float"),
    row(lambda: explore.explore(AB, uniform(2, 2), layer_label=None), TypeError,
        "layer_label must be a string, got NoneType", "layer-label"),
    # one token list per layer (a sequence per state)
    row(lambda: explore.explore([AB, AB], uniform(3, 1, 2, 2)), ValueError,
        "2 token lists for 3 layers", "per-layer-count"),
    row(lambda: explore.explore(["a", AB], uniform(2, 1, 2, 2)), TypeError,
        "all strings or all lists of strings", "per-layer-mixed"),
    row(lambda: explore.explore([AB, ["a"]], uniform(2, 1, 2, 2)), ValueError,
        r"1 tokens\[1\] for 2 queries", "per-layer-length"),
    row(lambda: explore.explore([AB, ["a", 2]], uniform(2, 1, 2, 2)), TypeError,
        r"tokens\[1\] must all be strings", "per-layer-not-str"),
    row(lambda: explore.explore([["a", "\n"], AB], uniform(2, 1, 2, 2)), ValueError,
        "line breaks at the same places", "per-layer-breaks"),
    row(lambda: explore.explore([AB, AB], uniform(2, 1, 2, 3), key_tokens=list("xyz")),
        ValueError, "needs key_tokens=None", "per-layer-cross"),
]  # fmt: skip

STREAM_ATTENTION = [
    row(
        lambda: streaming.stream_attention(gpt(), torch.arange(4)[None], 4),
        ValueError,
        r"ids must have shape \(N,\)",
        "batched-ids",
    ),
    row(
        lambda: streaming.stream_attention(gpt(), torch.arange(4), 9),
        ValueError,
        "capacity=9 exceeds the model's block_size=8",
        "capacity-too-large",
    ),
    row(
        lambda: streaming.stream_attention(gpt(), torch.arange(4), 4, sinks=4),
        ValueError,
        "sinks=4 must be smaller than capacity=4",
        "sinks-fill-cache",
    ),
    row(
        lambda: streaming.stream_attention(gpt("learned"), torch.arange(4), 4),
        ValueError,
        "streaming needs relative positions",
        "learned-positions",
    ),
]


@pytest.mark.parametrize(("call", "error", "match"), EXPLORE + STREAM_ATTENTION)
def test_bad_input_gets_a_clear_error(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
