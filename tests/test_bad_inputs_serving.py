"""Bad input to chapter 9's serving engine, its decode-step costs and the position mask, in
the format of tests/test_bad_inputs.py: each row an invalid call, the exception and a
pattern of its message."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from attnbook.gpt import GPT, GPTConfig
from attnbook.masks import position_mask
from attnbook.blocks import BlockPool
from attnbook.roofline import decode_step_cost
from attnbook.serving import Engine, Request


def row(call: Callable[[], object], error: type[Exception], match: str, id: str):  # noqa: A002
    return pytest.param(call, error, match, id=id)


# a latent-attention model's config (chapter 9)
LATENT = dict(attention="mla", d_latent=4, rope_dims=2)


def gpt(positions: str = "rope") -> GPT:
    config = GPTConfig(
        vocab_size=5, block_size=8, n_layer=1, n_head=2, n_embd=4, positions=positions
    )
    return GPT(config)


def pool(n_layer: int = 1, blocks: int = 4) -> BlockPool:
    return BlockPool(blocks, 2, 2, 2, n_layer=n_layer)


def engine(**kw: object) -> Engine:
    return Engine(gpt(), pool(), 4, **kw)  # type: ignore[arg-type]


ROWS = [
    row(
        lambda: gpt("learned")(torch.zeros(1, 2).long(), positions=torch.zeros(1, 2)),
        ValueError,
        "positions= needs a model with positions 'rope' or 'none'",
        "positions-learned",
    ),
    row(
        lambda: gpt()(torch.zeros(1, 2).long(), positions=torch.zeros(2, 2).long()),
        ValueError,
        "positions must be a tensor shaped like idx",
        "positions-shape",
    ),
    row(
        lambda: gpt()(torch.zeros(1, 2).long(), positions=torch.tensor([[-1, 0]])),
        ValueError,
        "positions must be >= 0",
        "positions-negative",
    ),
    row(
        lambda: gpt()(torch.zeros(1, 2).long(), positions=torch.tensor([[7, 8]])),
        ValueError,
        "longer than the model's block_size=8",
        "positions-past-context",
    ),
    row(
        lambda: Engine(
            GPT(GPTConfig(5, 8, 1, 2, 4, positions="rope", **LATENT)),
            pool(),
            4,
        ),
        ValueError,
        "latent attention caches latents",
        "engine-mla",
    ),
    row(
        lambda: engine(token_budget=0),
        ValueError,
        "token_budget must be a positive int",
        "budget-0",
    ),
    row(
        lambda: engine(token_budget=3, chunked=False).add(Request([1, 2, 3], 2)),
        ValueError,
        "unchunked, a prompt and the tokens it may have to recompute",
        "unchunked-prompt-past-budget",
    ),
    row(lambda: Request([], 3), ValueError, "prompt must be a non-empty list", "empty"),
    row(
        lambda: Request((1, 2), 3),
        ValueError,
        "prompt must be a non-empty list",
        "tuple",
    ),
    row(
        lambda: Request([1], 0), ValueError, "max_new_tokens must be a positive", "n-0"
    ),
    row(
        lambda: Request([1], 2, n=0),
        ValueError,
        "n must be a positive int",
        "samples-0",
    ),
    row(
        lambda: Engine("gpt", pool(), 4),  # type: ignore[arg-type]
        TypeError,
        "model must be an attnbook GPT",
        "engine-model",
    ),
    row(
        lambda: Engine(gpt("learned"), pool(), 4),
        ValueError,
        "positions 'rope' or 'none', got 'learned'",
        "engine-learned-positions",
    ),
    row(
        lambda: Engine(gpt(), pool(n_layer=2), 4),
        ValueError,
        "the pool holds 2 layers of 2 heads of width 2; the model needs 1, 2 and 2",
        "engine-pool-shape",
    ),
    row(
        lambda: Engine(gpt(), "pool", 4),  # type: ignore[arg-type]
        TypeError,
        "pool must be a BlockPool",
        "engine-pool",
    ),
    row(lambda: Engine(gpt(), pool(), 0), ValueError, "max_batch must be", "batch-0"),
    row(
        lambda: engine(reserve="pow2"),
        ValueError,
        r"reserve must be one of \('none', 'max', 'request'\)",
        "engine-reserve",
    ),
    row(
        lambda: engine().add([1, 2]),  # type: ignore[arg-type]
        TypeError,
        "request must be a Request",
        "add-list",
    ),
    row(
        lambda: engine().add(Request([1] * 5, 5)),
        ValueError,
        r"prompt \(5\) \+ max_new_tokens \(5\) - 1 exceeds the model's context 8",
        "add-too-long",
    ),
    row(
        lambda: Engine(gpt(), pool(blocks=2), 4).add(Request([1] * 4, 3)),
        ValueError,
        "a request of 6 tokens does not fit in the pool",
        "add-past-pool",
    ),
    row(
        lambda: Engine(gpt(), pool(blocks=3), 4, reserve="max").add(Request([1], 2)),
        ValueError,
        "a request of 8 tokens does not fit in the pool",
        "add-reservation-past-pool",
    ),
    row(
        lambda: engine().add(Request([1], 2, n=5)),
        ValueError,
        "n=5 samples cannot run together in batches of 4",
        "add-samples-past-batch",
    ),
    row(
        lambda: engine().add(Request([1, 5], 3)),
        ValueError,
        r"prompt ids must be ints in \[0, 5\)",
        "add-bad-id",
    ),
    row(
        lambda: engine(reserve="max").add(Request([1], 3, n=2)),
        ValueError,
        "parallel samples",
        "add-samples-reserved",
    ),
    row(
        lambda: decode_step_cost("MQB", 1, 1, 1, 1),
        ValueError,
        "kind must be one of",
        "cost-kind",
    ),
    row(
        lambda: decode_step_cost("MLA", 1, 1, 1, 1),
        ValueError,
        "needs d_latent and d_rope",
        "cost-mla-latent",
    ),
    row(
        lambda: decode_step_cost("MHA", 1, 1, 1, 0),
        ValueError,
        "context must be a positive int",
        "cost-context-0",
    ),
    row(
        lambda: decode_step_cost("MHA", 1, 1, 1, 1, n_params=-1),
        ValueError,
        "n_params must be",
        "cost-params",
    ),
    row(
        lambda: position_mask(torch.zeros(3), torch.arange(3)),
        TypeError,
        "pos_q must hold integer positions",
        "mask-float-positions",
    ),
    row(
        lambda: position_mask(torch.zeros(2, 3).long(), torch.zeros(3, 4).long()),
        ValueError,
        "do not broadcast together",
        "mask-batch",
    ),
    row(
        lambda: position_mask(torch.arange(3), torch.arange(3), window=0),
        ValueError,
        "window must be a positive int",
        "mask-window-0",
    ),
]


@pytest.mark.parametrize("call, error, match", ROWS)
def test_bad_input_gets_a_clear_error(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
