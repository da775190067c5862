"""The study's RoPE classifier of chapter 7, shipped: trained once, loaded by the chapter.

`study_rope_run(seed)` trains the study's model `attention + RoPE` on the random-pairs split of
`study_sentences(seed)` at the study's tuned recipe (the learning rate and steps of the stored
study, `benchmark_cars_study.json`): about 16 s on one thread, too long to train live beside
the chapter's other runs. `benchmarks/cars_rope_model.py` trains seed 0 and writes its weights
and vocabulary to `attnbook/data/SHIPPED_ROPE`; `load_study_rope()` loads them, refusing
weights made with another recipe. `TUTORIAL_PAIR` is the original tutorial's sentence and its
twin, the sentence whose attention maps the chapter shows.
"""

from __future__ import annotations

import importlib.resources
import io

import torch
from torch import nn

from .design import study_sentences
from .experiment import SeedRun, run_seed
from .models import build_model
from .study import STUDY_MODELS, load_study, study_config
from .vocab import Vocabulary

__all__ = [
    "SHIPPED_ROPE",
    "STUDY_ROPE",
    "TUTORIAL_PAIR",
    "study_rope_recipe",
    "study_rope_run",
    "load_study_rope",
]

#: The weights of `study_rope_run(0)` in `attnbook.data` (float32, about 115 kB), written by
#: `benchmarks/cars_rope_model.py` with its record `benchmark_cars_rope_model.json`.
SHIPPED_ROPE = "ch7_rope_classifier.pt"
#: The study's name of the model.
STUDY_ROPE = "attention + RoPE"
#: The original tutorial's sentence (label 1: white on the left) and its twin (label 0);
#: an `ordinal` sentence in a wording our data lacks ("then black car", not "then a").
TUTORIAL_PAIR = (
    "Listed left to right is a white car then black car",
    "Listed right to left is a white car then black car",
)


def study_rope_recipe(seed: int = 0) -> dict:
    """How `study_rope_run(seed)` trains, as a plain dict: model, split, data seed, and the
    study's tuned learning rate and steps (read from the stored study).

    Chapter 7.
    """
    results = load_study()[0]["results"]
    return {
        "model": STUDY_ROPE,
        "split": "random pairs",
        "seed": seed,
        "learning_rate": results["lr"][STUDY_ROPE],
        "steps": results["steps"],
    }


def study_rope_run(seed: int = 0) -> SeedRun:
    """The study's RoPE classifier on the random pairs of `study_sentences(seed)` (the
    chapter's data set for seed 0), trained at the study's recipe on the CPU.

    Chapter 7.
    """
    recipe = study_rope_recipe(seed)
    kind, kwargs = STUDY_MODELS[STUDY_ROPE]
    config = study_config(recipe["learning_rate"], recipe["steps"])
    return run_seed(
        kind, study_sentences(seed), recipe["split"], seed, config, **kwargs
    )


def load_study_rope() -> tuple[nn.Module, Vocabulary, dict]:
    """(model in eval mode, its vocabulary, the recipe) of the shipped `study_rope_run(0)`.

    Chapter 7.
    """
    raw = importlib.resources.files("attnbook.data").joinpath(SHIPPED_ROPE).read_bytes()
    saved = torch.load(io.BytesIO(raw), weights_only=True)
    if saved["recipe"] != study_rope_recipe(saved["recipe"]["seed"]):
        raise RuntimeError(
            f"{SHIPPED_ROPE} was trained with another recipe than the stored study's: "
            "run benchmarks/cars_rope_model.py again"
        )
    vocab = Vocabulary(list(saved["vocab"]))
    kind, kwargs = STUDY_MODELS[STUDY_ROPE]
    model = build_model(kind, len(vocab), **kwargs)
    model.load_state_dict(saved["state_dict"])
    return model.eval(), vocab, saved["recipe"]
