"""Multi-query associative recall (MQAR, Arora et al. 2023, Zoology) and the recall run of
chapter 11.

A sequence holds `n_pairs` key-value pairs, then every key again in another order; at each
repeated key the model must output the value that followed it:

    k1 v1 k2 v2 ... kP vP | k_{s(1)} k_{s(2)} ... k_{s(P)}      (3P tokens)
    targets: -100 (ignored) on the pairs, v_{s(i)} at the i-th query

Keys come from tokens 1 .. vocab_size/2 - 1 (distinct within a sequence), values from
vocab_size/2 .. vocab_size - 1 (drawn with replacement), token 0 is unused. `train_recall`
trains one of `attnbook.recall_models`' models on batches whose number of pairs is drawn from
`RecallTask.train_pairs` each step, with the course's loop (`attnbook.train.train_loop`), and
`recall_accuracy` measures the share of queries answered right at a given number of pairs.
`benchmarks/recall_sweep.py` and the chapter share both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import integer, positive_int
from .recall_models import RecallModel, RecallModelConfig
from .train import TrainConfig, TrainResult, train_loop

__all__ = [
    "FINAL_LOSS_STEPS",
    "mqar_batch",
    "RecallTask",
    "recall_loss",
    "recall_accuracy",
    "train_recall",
]

IGNORE = -100  # targets cross_entropy skips (the key-value pairs)
#: a run's final loss in the recall records: the mean training loss of its last steps
FINAL_LOSS_STEPS = 50


def _check_sizes(batch_size: object, n_pairs: object, vocab_size: object) -> None:
    positive_int("batch_size", batch_size)
    positive_int("n_pairs", n_pairs)
    vocab = positive_int("vocab_size", vocab_size)
    if vocab < 4 or vocab % 2:
        raise ValueError(f"vocab_size must be an even int >= 4, got {vocab}")
    n_keys = vocab // 2 - 1
    if integer("n_pairs", n_pairs) > n_keys:
        raise ValueError(
            f"n_pairs={n_pairs} needs as many distinct keys, but vocab_size={vocab} has "
            f"only {n_keys} (tokens 1 .. {vocab // 2 - 1})"
        )


def mqar_batch(
    batch_size: int,
    n_pairs: int,
    vocab_size: int = 128,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    """Inputs and targets, each (batch_size, 3 n_pairs) int64 (see the module docstring);
    the same generator state gives the same batch.

    Chapter 11.
    """
    _check_sizes(batch_size, n_pairs, vocab_size)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator or None, got {type(generator).__name__}"
        )
    half = vocab_size // 2
    g = generator
    order = torch.rand(batch_size, half - 1, generator=g).argsort(-1)
    keys = order[:, :n_pairs] + 1  # (B, P) distinct per row, in 1 .. half - 1
    values = torch.randint(half, vocab_size, (batch_size, n_pairs), generator=g)
    asked = torch.rand(batch_size, n_pairs, generator=g).argsort(-1)  # (B, P)
    pairs = torch.stack([keys, values], dim=-1).reshape(batch_size, 2 * n_pairs)
    queries = keys.gather(1, asked)
    inputs = torch.cat([pairs, queries], dim=1)  # (B, 3P)
    targets = torch.full_like(inputs, IGNORE)
    targets[:, 2 * n_pairs :] = values.gather(1, asked)
    return inputs, targets


@dataclass(frozen=True)
class RecallTask:
    """The recall run of chapter 11: data, model size and training settings."""

    vocab_size: int = 128
    train_pairs: tuple[int, ...] = (4, 8, 16, 32)  # drawn uniformly, one per step
    eval_pairs: tuple[int, ...] = (4, 8, 16, 24, 32)
    eval_examples: int = 128
    batch_size: int = 32
    steps: int = 600
    learning_rate: float = 1e-2
    model: RecallModelConfig = field(default_factory=RecallModelConfig)

    def __post_init__(self) -> None:
        for name in ("train_pairs", "eval_pairs"):
            pairs = getattr(self, name)
            if not pairs:
                raise ValueError(f"{name} must name at least one number of pairs")
            for p in pairs:
                _check_sizes(1, p, self.vocab_size)
        positive_int("eval_examples", self.eval_examples)
        positive_int("batch_size", self.batch_size)
        positive_int("steps", self.steps)
        if self.model.vocab_size != self.vocab_size:
            raise ValueError(
                f"the model's vocab_size ({self.model.vocab_size}) must equal the task's "
                f"({self.vocab_size})"
            )

    def batch(self, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """One training batch: a number of pairs from train_pairs, then `mqar_batch`."""
        i = int(torch.randint(len(self.train_pairs), (1,), generator=generator))
        return mqar_batch(
            self.batch_size, self.train_pairs[i], self.vocab_size, generator
        )

    def train_config(self, seed: int) -> TrainConfig:
        return TrainConfig(
            max_iters=self.steps,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            min_lr=self.learning_rate / 10,
            warmup_iters=min(100, self.steps // 10),
            weight_decay=0.1,
            eval_interval=self.steps,
            seed=seed,
        )


def recall_loss(model: nn.Module, batch: tuple[Tensor, ...]) -> Tensor:
    """Mean cross-entropy over the queries of a batch (the pairs are not scored).

    Chapter 11.
    """
    inputs, targets = batch
    logits = model(inputs)  # (B, T, vocab)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def recall_accuracy(
    model: nn.Module,
    n_pairs: int,
    vocab_size: int = 128,
    n_examples: int = 128,
    seed: int = 1234,
    batch_size: int = 64,
) -> float:
    """Share of the queries of `n_examples` fresh sequences (their own seed) whose most
    likely next token is the right value.

    Chapter 11.
    """
    positive_int("n_examples", n_examples)
    g = torch.Generator().manual_seed(seed)
    right = total = 0
    was_training = model.training
    model.eval()
    for start in range(0, n_examples, batch_size):
        size = min(batch_size, n_examples - start)
        inputs, targets = mqar_batch(size, n_pairs, vocab_size, g)
        guess = model(inputs).argmax(-1)
        scored = targets != IGNORE
        right += int((guess[scored] == targets[scored]).sum())
        total += int(scored.sum())
    model.train(was_training)
    return right / total


def train_recall(
    kind: str, seed: int, task: RecallTask | None = None
) -> tuple[RecallModel, TrainResult, dict[int, float]]:
    """Train a model of this kind (`recall_models.MODEL_KINDS` or `CONTROL_KINDS`) from seed
    `seed` on the task; return it, the training record and its accuracy at each of
    task.eval_pairs.

    Chapter 11.
    """
    task = RecallTask() if task is None else task
    integer("seed", seed)
    torch.manual_seed(seed)
    model = RecallModel(kind, task.model)
    result = train_loop(model, task.batch, task.train_config(seed), recall_loss)
    accuracy = {
        p: recall_accuracy(model, p, task.vocab_size, task.eval_examples)
        for p in task.eval_pairs
    }
    return model, result, accuracy
