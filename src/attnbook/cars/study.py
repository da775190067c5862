"""Chapter 7's study: the harder and cleaner tests, run by `benchmarks/cars_study.py`.

- the data of each seed, the family-balanced length split and the tuning data live in
  `attnbook.cars.design`;
- `shift_right`: the same sentences moved right by `k` padding tokens (masked everywhere),
  a translation and nothing else (a test the GRU, the n-grams and RoPE pass by
  construction; `train_and_measure` also moves them by real words, which any model can fail);
- `validation_split`: a pair-level split of sentences, to tune on;
- `unk_share`: how many test tokens the training vocabulary does not know;
- `STUDY_MODELS`: the models of the study, an order-aware GRU and learned positions with
  two initialisations among them; `train_and_measure`: one run, every accuracy it needs.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from ..device import evaluating, model_device
from ..train import TrainConfig
from .data import Sentence
from .splits import split_pairs
from .design import prefixed_descriptions
from .experiment import CHAPTER_CONFIG, _trim, accuracy, train_classifier, with_steps
from .models import build_model
from .vocab import Vocabulary, encode_batch, tokenize

__all__ = [
    "STUDY_MODELS",
    "STUDY_RECORD",
    "LIVE_FAMILY",
    "LR_GRID",
    "study_config",
    "shift_right",
    "validation_split",
    "unk_share",
    "train_and_measure",
    "Paired",
    "paired_differences",
    "load_study",
]

#: model name -> (`build_model` kind, keyword arguments). "learned" positions start as
#: `nn.Embedding` starts them, N(0, 1), as large as the word vectors; "init 0.02" starts
#: them as GPT-2 (and chapter 6) does.
STUDY_MODELS: dict[str, tuple[str, dict]] = {
    "n-grams": ("n-grams", {}),
    "position x word": ("position x word", {}),
    "GRU": ("GRU", {}),
    "attention + learned positions": ("attention + learned positions", {}),
    "attention + learned, init 0.02": (
        "attention + learned positions",
        {"position_std": 0.02},
    ),
    "attention + sinusoidal": ("attention + sinusoidal", {}),
    "attention + RoPE": ("attention + RoPE", {}),
}
#: The learning rates each model is tried with on the validation split (peak of the
#: warm-up + cosine schedule; the floor is a tenth of it).
LR_GRID = (2e-3, 5e-3, 1.5e-2)
#: The family held out by the RoPE classifier chapter 7 trains live (stored by the study's
#: "live" stage, five seeds, so that the chapter can check its run against them).
LIVE_FAMILY = "attribute"
#: `attnbook.data.benchmark_record` name of the stored study.
STUDY_RECORD = "cars_study"


def study_config(learning_rate: float, steps: int) -> TrainConfig:
    """Chapter 7's recipe (`CHAPTER_CONFIG`) with `steps` steps and peak rate `learning_rate`."""
    if learning_rate <= 0 or steps <= 0:
        raise ValueError(
            f"learning_rate and steps must be positive, got {learning_rate}, {steps}"
        )
    config = replace(
        CHAPTER_CONFIG, learning_rate=learning_rate, min_lr=learning_rate / 10
    )
    return with_steps(config, steps)


def shift_right(ids: Tensor, k: int, max_len: int | None = None) -> Tensor:
    """ids (B, T), right-padded -> (B, T + k) with k padding tokens (id 0) in front of every
    sentence: each word moves k positions right, nothing else changes (padding is masked).
    `max_len`: drop trailing columns beyond it (an error if a real token would be cut).

    Chapter 7.
    """
    if ids.dim() != 2 or k < 0:
        raise ValueError(f"ids must be (B, T) and k >= 0, got {tuple(ids.shape)}, {k}")
    shifted = torch.cat([ids.new_zeros(ids.shape[0], k), ids], dim=1)  # (B, T + k)
    if max_len is not None and shifted.shape[1] > max_len:
        if bool((shifted[:, max_len:] != 0).any()):
            raise ValueError(f"a sentence shifted by {k} is longer than {max_len}")
        shifted = shifted[:, :max_len]
    return shifted


def validation_split(
    sentences: Sequence[Sentence],
    train_idx: Sequence[int],
    seed: int = 0,
    fraction: float = 0.2,
) -> tuple[list[int], list[int]]:
    """Split the training sentences `train_idx` by pairs into (fit, validation) indices of
    `sentences`; the test sentences are never touched.

    Chapter 7.
    """
    fit, val = split_pairs([sentences[i].pair for i in train_idx], fraction, seed)
    return [train_idx[j] for j in fit], [train_idx[j] for j in val]


def unk_share(
    sentences: Sequence[Sentence], train_idx: Sequence[int], test_idx: Sequence[int]
) -> tuple[float, Counter]:
    """(share of test tokens that are `<unk>` for a vocabulary built on the training
    sentences, Counter of those unknown words).

    Chapter 7.
    """
    known = {t for i in train_idx for t in tokenize(sentences[i].text)}
    tokens = [t for i in test_idx for t in tokenize(sentences[i].text)]
    unknown = Counter(t for t in tokens if t not in known)
    return sum(unknown.values()) / len(tokens), unknown


def _predictions(model: torch.nn.Module, ids: Tensor) -> Tensor:
    """(N,) bool: the predicted label (white car on the left) of every row of ids (N, T)."""
    with torch.no_grad(), evaluating(model):
        return (model(_trim(ids).to(model_device(model))) > 0).cpu()


def train_and_measure(
    model_name: str,
    sentences: Sequence[Sentence],
    train_idx: Sequence[int],
    test_sets: Mapping[str, Sequence[int]],
    seed: int,
    config: TrainConfig,
    shifts: Sequence[int] = (),
    max_len: int = 64,
) -> dict:
    """Train `STUDY_MODELS[model_name]` (weights and batches seeded by `seed`) on
    `train_idx` and measure it: {"train_accuracy", "<name>_accuracy" for every test set,
    "<name>_correct" (one "1"/"0" per test sentence, in order: twins are neighbours),
    "<name>_by_family" (accuracy per family), "seconds"}. For every k in `shifts`, on the
    test sentences that stay within the longest training sentence once k tokens longer:
    "<name>_inrange<k>_accuracy" (those sentences) and "<name>_shift<k>_accuracy" (moved
    right by k padding tokens, masked), and "<name>_bare<k>_accuracy" (their descriptions
    alone) and "<name>_prefix<k>_accuracy" (behind `PREFIXES[k]`), with the share of
    answers each move changes ("<name>_shift<k>_changed", "<name>_prefix<k>_changed").

    Chapter 7.
    """
    if model_name not in STUDY_MODELS:
        raise ValueError(
            f"unknown model {model_name!r}; choose one of {list(STUDY_MODELS)}"
        )
    start = time.perf_counter()
    kind, kwargs = STUDY_MODELS[model_name]
    vocab = Vocabulary.build(sentences[i].text for i in train_idx)
    ids = encode_batch(
        [s.text for s in sentences], vocab, max_len=max_len
    )  # (N, max_len)
    labels = torch.tensor([float(s.label) for s in sentences])  # (N,)
    lengths = (ids != vocab.pad_id).sum(dim=1)  # (N,)
    torch.manual_seed(seed)
    model = build_model(kind, len(vocab), max_len=max_len, **kwargs)
    train_idx = list(train_idx)
    train_classifier(
        model, ids[train_idx], labels[train_idx], replace(config, seed=seed)
    )
    out: dict = {"train_accuracy": accuracy(model, ids[train_idx], labels[train_idx])}
    longest = int(lengths[train_idx].max())
    for name, idx in test_sets.items():
        idx = list(idx)
        right = _predictions(model, ids[idx]) == labels[idx].bool()  # (n,)
        out[f"{name}_accuracy"] = float(right.float().mean())
        out[f"{name}_correct"] = "".join("1" if r else "0" for r in right.tolist())
        fam = [sentences[i] for i in idx]
        families = sorted({s.family for s in fam})
        out[f"{name}_by_family"] = {
            f: round(float(right[[s.family == f for s in fam]].float().mean()), 4)
            for f in families
        }
        for k in shifts:
            inside = [i for i in idx if int(lengths[i]) + k <= longest]
            before = _predictions(model, ids[inside])
            moved = _predictions(model, shift_right(ids[inside], k, max_len))
            truth = labels[inside].bool()
            bare_text, prefixed_text = prefixed_descriptions(sentences, inside, k)
            bare = _predictions(model, encode_batch(bare_text, vocab, max_len=max_len))
            prefixed = _predictions(
                model, encode_batch(prefixed_text, vocab, max_len=max_len)
            )
            out[f"{name}_inrange{k}_n"] = len(inside)
            for key, pred in (
                ("inrange", before),
                ("shift", moved),
                ("bare", bare),
                ("prefix", prefixed),
            ):
                out[f"{name}_{key}{k}_accuracy"] = float((pred == truth).float().mean())
            out[f"{name}_shift{k}_changed"] = float((moved != before).float().mean())
            out[f"{name}_prefix{k}_changed"] = float((prefixed != bare).float().mean())
    out["seconds"] = time.perf_counter() - start
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


@dataclass(frozen=True)
class Paired:
    """Paired differences model - baseline over matched runs (same split, same seed).

    Chapter 7.
    """

    mean: float  # mean difference
    std: float  # sample standard deviation of the differences (0 for one)
    wins: int  # runs where the model is ahead
    losses: int  # runs where the baseline is ahead
    n: int  # number of matched runs

    def signs(self) -> str:
        """The sign count, e.g. "4 of 5 ahead, 1 behind" (ties are neither)."""
        return f"{self.wins} of {self.n} ahead, {self.losses} behind"


def paired_differences(
    model: Mapping[tuple, float], baseline: Mapping[tuple, float]
) -> Paired:
    """`Paired` statistics of model[key] - baseline[key] over the keys both have (a key is a
    (split, seed) or any other matching of runs); chapter 7's summary of seeds."""
    keys = sorted(set(model) & set(baseline))
    if not keys:
        raise ValueError("no matched runs: model and baseline share no key")
    diffs = [model[k] - baseline[k] for k in keys]
    std = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
    wins = sum(d > 1e-9 for d in diffs)
    losses = sum(d < -1e-9 for d in diffs)
    return Paired(statistics.mean(diffs), std, wins, losses, len(diffs))


def load_study() -> tuple[dict, dict[tuple[str, str, int], dict]]:
    """(the stored record of `benchmarks/cars_study.py`, its runs by (model, split, seed)).

    Chapter 7.
    """
    from ..data import benchmark_record

    record = benchmark_record(STUDY_RECORD)
    runs = {(r["model"], r["split"], r["seed"]): r for r in record["results"]["runs"]}
    return record, runs
