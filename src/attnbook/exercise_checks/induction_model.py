"""What exercise 10's hidden tests read from chapter 10's shipped model, computed once per
process.

Six hidden tests grade on the model `trained_chapter_model(0)` and its evaluation batch: its
attention, its logits and its loss on the repeat, whole and with heads zeroed. The hidden
tests run in the grader's process, which grades one notebook after another, so what only
the model decides is computed the first time a test asks for it and then kept (about 40 of
the model's forward passes per notebook saved). Each call returns fresh copies: the grader
writes back into a test's tensors what a submission did to its inputs, and that must not
reach the next test or notebook.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from torch import Tensor

__all__ = ["batch", "weights", "logits", "repeat_loss"]

Heads = tuple[tuple[int, int], ...]  # (layer, head) pairs, zeroed together


@lru_cache(maxsize=1)
def _batch() -> tuple[Tensor, int]:
    from attnbook.induction_run import InductionTask

    task = InductionTask()
    return task.eval_data()[0], task.eval_n


def batch() -> tuple[Tensor, int]:
    """(the evaluation batch of repeated tokens, (64, 1 + 2n) with BOS; n)."""
    rep, n = _batch()
    return rep.clone(), n


@lru_cache(maxsize=1)
def _weights() -> tuple[Tensor, ...]:
    from attnbook.hooks import attention_weights
    from attnbook.induction_run import trained_chapter_model

    return tuple(attention_weights(trained_chapter_model(0), _batch()[0]))


def weights() -> list[Tensor]:
    """The model's attention on `batch()`, one (64, 2, T, T) tensor per layer."""
    return [w.clone() for w in _weights()]


@lru_cache(maxsize=8)
def _run(heads: Heads) -> tuple[Tensor, float]:
    from attnbook.hooks import ablate_heads
    from attnbook.induction import copy_losses, loss_per_position
    from attnbook.induction_run import trained_chapter_model

    model, (rep, n) = trained_chapter_model(0), _batch()
    with ablate_heads(model, {h: 0.0 for h in heads}), torch.no_grad():
        return model(rep)[0], copy_losses(loss_per_position(model, rep), n)[1]


def logits(heads: Heads = ()) -> Tensor:
    """The model's logits on `batch()`, (64, 1 + 2n, V), with `heads` zeroed."""
    return _run(tuple(sorted(heads)))[0].clone()


def repeat_loss(heads: Heads = ()) -> float:
    """The model's mean loss on x_2 .. x_n of the second copy of `batch()` (the course's
    `copy_losses`), with `heads` zeroed."""
    return _run(tuple(sorted(heads)))[1]
