"""Chapter 7's experiment: one model, one split, one seed, trained with the package's loop.

`run_seed(kind, sentences, split, seed)` splits the sentences (`make_split`), builds the
vocabulary from the training sentences only, seeds and builds the model, trains it with
`attnbook.train.train_loop` on random mini-batches (binary cross-entropy on the logit) and
measures train and test accuracy. `CHAPTER_CONFIG` is the one recipe every model gets.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from ..device import DeviceLike, as_device, evaluating, model_device, to_device
from ..masks import padding_mask
from ..train import TrainConfig, TrainResult, train_loop
from .data import Sentence
from .splits import make_split, overlap_share
from .vocab import Vocabulary, encode_batch
from .models import build_model

__all__ = [
    "CHAPTER_CONFIG",
    "SeedRun",
    "RunSummary",
    "accuracy",
    "train_classifier",
    "run_seed",
    "run_grid",
    "summarise",
    "with_steps",
    "load_chapter_grid",
    "CHAPTER_GRID",
    "LONG_GRID",
]

# The recipe of chapter 7, the same for every model: 240 AdamW steps on batches of 32
# sentences. Small, so that 7 models x 3 splits x 5 seeds run in about a minute on 2 cores;
# benchmarks/cars_seeds.py --iters N trains longer.
CHAPTER_CONFIG = TrainConfig(
    max_iters=240,
    batch_size=32,
    learning_rate=5e-3,
    min_lr=5e-4,
    warmup_iters=24,
    weight_decay=0.01,
    eval_interval=240,
    seed=0,
)


def with_steps(config: TrainConfig, steps: int) -> TrainConfig:
    """The same recipe with `steps` training steps: warm-up over a tenth of them, one
    evaluation at the end (how `benchmarks/cars_seeds.py --iters` scales the recipe).

    Chapter 7.
    """
    return replace(
        config, max_iters=steps, eval_interval=steps, warmup_iters=max(1, steps // 10)
    )


def _trim(ids: Tensor) -> Tensor:
    """Drop the columns after the last real token of any row (trailing padding; padding on
    the left, as in chapter 7's offset test, stays where it is)."""
    real = padding_mask(ids, Vocabulary.pad_id)[:, 0].any(dim=0)  # (T,): any real token
    last = int(real.nonzero().max()) + 1 if bool(real.any()) else 1
    return ids[:, :last]  # (B, T_batch)


@torch.no_grad()
def accuracy(model: nn.Module, ids: Tensor, labels: Tensor) -> float:
    """Share of sentences whose logit has the sign of the label; ids (N, T), labels (N,).

    Chapter 7.
    """
    with evaluating(model):
        logits = model(_trim(ids).to(model_device(model))).cpu()  # (N,)
    return float(((logits > 0).float() == labels.cpu()).float().mean())


def train_classifier(
    model: nn.Module,
    ids: Tensor,
    labels: Tensor,
    config: TrainConfig,
    evaluate_on: dict[str, tuple[Tensor, Tensor]] | None = None,
    device: DeviceLike | None = None,
) -> TrainResult:
    """Train a car classifier with `train_loop`: each step a random batch of `config.
    batch_size` sentences (ids (N, T), labels (N,) float), binary cross-entropy on the logits.
    `evaluate_on` maps a name to (ids, labels) whose accuracy the history records. `device`:
    where to train (default: where the model is); the sentences are copied there once.

    Chapter 7.
    """
    if ids.dim() != 2 or labels.shape != ids.shape[:1]:
        raise ValueError(
            f"ids must be (N, T) and labels (N,); got {tuple(ids.shape)}, {tuple(labels.shape)}"
        )
    dev = model_device(model) if device is None else as_device(device)
    ids, labels = to_device((ids, labels), dev)
    loss_fn = nn.BCEWithLogitsLoss()

    def next_batch(g: torch.Generator) -> tuple[Tensor, Tensor]:
        # (B,)
        rows = torch.randint(len(ids), (config.batch_size,), generator=g).to(dev)
        return _trim(ids[rows]), labels[rows]

    def evaluate(m: nn.Module) -> dict[str, float]:
        return {
            f"{name}_accuracy": accuracy(m, x, y)
            for name, (x, y) in (evaluate_on or {}).items()
        }

    return train_loop(
        model,
        next_batch,
        config,
        loss_fn=lambda m, b: loss_fn(m(b[0]), b[1]),
        evaluate=evaluate,
        device=dev,
    )


@dataclass
class SeedRun:
    """One model trained on one split for one seed by `run_seed` (chapter 7)."""

    kind: str
    split: str
    seed: int
    model: nn.Module
    vocab: Vocabulary
    train_idx: list[int]
    test_idx: list[int]
    result: TrainResult
    overlap: float  # share of test descriptions that also occur in training
    seconds: float  # wall-clock time of the whole run

    @property
    def test_accuracy(self) -> float:
        return self.result.final("test_accuracy")

    @property
    def train_accuracy(self) -> float:
        return self.result.final("train_accuracy")


def run_seed(
    kind: str,
    sentences: Sequence[Sentence],
    split: str = "random pairs",
    seed: int = 0,
    config: TrainConfig | None = None,
    max_len: int = 64,
    held_out: Sequence[str] | None = None,
    device: DeviceLike | None = None,
    **model_kwargs,
) -> SeedRun:
    """Split with `seed` (`held_out`: see `make_split`), build the vocabulary from the
    training sentences, build a `kind` model with weights seeded by `seed` (on the CPU, so
    the same weights on every device), train it on `device` (default: the CPU; batches drawn
    with `seed` too).

    Chapter 7.
    """
    start = time.perf_counter()
    train_idx, test_idx = make_split(split, sentences, seed, held_out=held_out)
    vocab = Vocabulary.build(sentences[i].text for i in train_idx)
    # (N, max_len)
    ids = encode_batch([s.text for s in sentences], vocab, max_len=max_len)
    labels = torch.tensor([float(s.label) for s in sentences])  # (N,)
    config = config or CHAPTER_CONFIG
    config = replace(config, seed=seed)
    torch.manual_seed(seed)
    model = build_model(kind, len(vocab), max_len=max_len, **model_kwargs)
    sides = {
        "train": (ids[train_idx], labels[train_idx]),
        "test": (ids[test_idx], labels[test_idx]),
    }
    result = train_classifier(
        model, *sides["train"], config, evaluate_on=sides, device=device
    )
    return SeedRun(
        kind,
        split,
        seed,
        model,
        vocab,
        train_idx,
        test_idx,
        result,
        overlap_share(sentences, train_idx, test_idx),
        time.perf_counter() - start,
    )


def summarise(values: Iterable[float]) -> tuple[float, float]:
    """(mean, sample standard deviation) of a few numbers (std 0 for one number).

    Chapter 7.
    """
    values = list(values)
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0


@dataclass(frozen=True)
class RunSummary:
    """The numbers of one `run_seed`, without the model (what `run_grid` collects).

    Chapter 7.
    """

    kind: str
    split: str
    seed: int
    train_accuracy: float
    test_accuracy: float
    overlap: float
    n_train: int
    n_test: int
    seconds: float


def _summary_of(args: tuple) -> RunSummary:
    """Worker of `run_grid`: one run on one thread, reduced to its numbers."""
    kind, split, seed, sentences, config, model_kwargs = args
    torch.set_num_threads(1)
    run = run_seed(kind, sentences, split, seed, config, **model_kwargs)
    return RunSummary(
        kind,
        split,
        seed,
        run.train_accuracy,
        run.test_accuracy,
        run.overlap,
        len(run.train_idx),
        len(run.test_idx),
        run.seconds,
    )


def run_grid(
    kinds: Sequence[str],
    splits: Sequence[str],
    seeds: Iterable[int],
    sentences: Sequence[Sentence],
    config: TrainConfig | None = None,
    workers: int = 2,
    **model_kwargs,
) -> list[RunSummary]:
    """`run_seed` for every kind x split x seed, in `workers` processes of one thread each
    (every run seeds itself, so the numbers do not depend on which process ran it).

    Chapter 7.
    """
    jobs = [
        (k, sp, s, list(sentences), config, model_kwargs)
        for sp in splits
        for s in seeds
        for k in kinds
    ]
    if workers <= 1:
        return [_summary_of(job) for job in jobs]
    with ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        return list(pool.map(_summary_of, jobs))


#: The stored grids of chapter 7 (`benchmarks/cars_seeds.py --seeds 0-4 --save ...`), shipped
#: with the package so that the chapter reads them on Colab and Binder too: the chapter's
#: recipe (240 steps) and the same recipe with four times the steps (960).
CHAPTER_GRID = "chapter_grid.json"
LONG_GRID = "chapter_grid_960.json"


def load_chapter_grid(name: str = CHAPTER_GRID) -> tuple[dict, list[RunSummary]]:
    """(the record: command, recipe, versions; its runs as `RunSummary`) of a stored grid.

    Chapter 7.
    """
    import json
    from importlib.resources import files

    grids = (CHAPTER_GRID, LONG_GRID)
    if name not in grids:
        raise ValueError(f"no stored grid {name!r}; the package has {grids}")
    record = json.loads(files("attnbook.cars").joinpath(name).read_text())
    return record, [RunSummary(**run) for run in record["runs"]]
