#!/usr/bin/env python3
"""Chapter 7's third version: tuned models on the harder and cleaner splits.

    python benchmarks/cars_study.py tune --seeds 0,1   # learning rate per model, on validation
    python benchmarks/cars_study.py main --seeds 0-2   # the splits below, with the tuned rates
    (both add to --save, default src/attnbook/data/benchmark_cars_study.json; "main" reads
    the tuned rates from it and can be run again with more seeds)

Every model of `attnbook.cars.study.STUDY_MODELS` (n-grams, position x word, a
bidirectional GRU, attention with learned positions at two initialisations, sinusoidal and
RoPE) is trained for --steps steps with chapter 7's recipe, its peak learning rate chosen from
`LR_GRID` on a validation split carved by pairs from the random-pairs training set (mean
validation accuracy over the tuning seeds). Then, per seed:

- random pairs, with the clean offset test: the test sentences moved right by 4 and 8
  padding tokens (only those that stay within the longest training sentence);
- the length split: train on sentences of at most L tokens, test on the longer ones;
- each of the six families held out in turn (every model; sinusoidal positions and learned
  positions at init 0.02 were added to the record's family hold-out by a second "main" run,
  which runs only what the record lacks).

One process, one thread (a shared 2-core machine): timings are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from attnbook.cars import FAMILIES, generate_pairs, make_split
from attnbook.cars.study import (
    LR_GRID,
    STUDY_MODELS,
    length_split,
    study_config,
    train_and_measure,
    unk_share,
    validation_split,
)
from attnbook.data import write_benchmark_record

SHIFTS = (4, 8)
FAMILY_MODELS = list(STUDY_MODELS)  # every model on the family hold-out too


def seed_list(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def load(path: Path) -> dict:
    return json.loads(path.read_text())["results"] if path.is_file() else {}


def save(path: Path, results: dict, args: argparse.Namespace) -> None:
    seeds = sorted({r["seed"] for r in results.get("runs", [])} | set(args.seeds))
    write_benchmark_record(
        str(path),
        "python benchmarks/cars_study.py tune --seeds 0,1 --steps "
        f"{args.steps}; python benchmarks/cars_study.py main --seeds "
        f"{','.join(map(str, sorted({r['seed'] for r in results.get('runs', [])})))}"
        f" --steps {args.steps}",
        seeds,
        results,
        threads=1,
        pairs=args.pairs,
    )


def tune(args: argparse.Namespace, sentences: list, results: dict) -> None:
    rows = []
    for seed in args.seeds:
        train, _ = make_split("random pairs", sentences, seed)
        fit, val = validation_split(sentences, train, seed)
        for model in STUDY_MODELS:
            for lr in LR_GRID:
                out = train_and_measure(
                    model,
                    sentences,
                    fit,
                    {"val": val},
                    seed,
                    study_config(lr, args.steps),
                )
                rows.append({"model": model, "seed": seed, "lr": lr, **out})
                print(model, seed, lr, out, flush=True)
    chosen = {}
    for model in STUDY_MODELS:
        score = {
            lr: statistics.mean(
                r["val_accuracy"] for r in rows if r["model"] == model and r["lr"] == lr
            )
            for lr in LR_GRID
        }
        chosen[model] = max(LR_GRID, key=lambda lr: score[lr])  # first best on a tie
    results.update(
        steps=args.steps, lr_grid=list(LR_GRID), tuning=rows, lr=chosen, runs=[]
    )
    print("chosen learning rates:", chosen, flush=True)


def main_runs(
    args: argparse.Namespace, sentences: list, results: dict, path: Path
) -> None:
    lr = results["lr"]
    if results["steps"] != args.steps:
        sys.exit(f"the rates were tuned at {results['steps']} steps, not {args.steps}")
    ltrain, ltest, max_len = length_split(sentences)
    results["length_split"] = {
        "max_train_len": max_len,
        "n_train": len(ltrain),
        "n_test": len(ltest),
    }
    done = {(r["model"], r["split"], r["seed"]) for r in results["runs"]}
    for seed in args.seeds:
        rtrain, rtest = make_split("random pairs", sentences, seed)
        units = [("random pairs", rtrain, rtest, SHIFTS, list(STUDY_MODELS))]
        units.append(("longer sentences", ltrain, ltest, (), list(STUDY_MODELS)))
        for family in FAMILIES:
            ftrain, ftest = make_split(
                "held-out phrasings", sentences, seed, held_out=[family]
            )
            units.append((f"family {family}", ftrain, ftest, (), FAMILY_MODELS))
        for split, train, test, shifts, models in units:
            for model in models:
                if (model, split, seed) in done:
                    continue
                out = train_and_measure(
                    model,
                    sentences,
                    train,
                    {"test": test},
                    seed,
                    study_config(lr[model], args.steps),
                    shifts=shifts,
                )
                unk = unk_share(sentences, train, test)[0]
                results["runs"].append(
                    {
                        "model": model,
                        "split": split,
                        "seed": seed,
                        "lr": lr[model],
                        "unk_share": round(unk, 4),
                        **out,
                    }
                )
                print(model, split, seed, out, flush=True)
            save(path, results, args)


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("stage", choices=("tune", "main"))
    parser.add_argument("--seeds", type=seed_list, default=seed_list("0-2"))
    parser.add_argument("--steps", type=int, default=960)
    parser.add_argument("--pairs", type=int, default=264)
    parser.add_argument("--save", default="src/attnbook/data/benchmark_cars_study.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    path = Path(args.save)
    sentences = generate_pairs(args.pairs)
    results = load(path)
    start = time.perf_counter()
    if args.stage == "tune":
        tune(args, sentences, results)
        save(path, results, args)
    else:
        main_runs(args, sentences, results, path)
    print(f"{args.stage}: {time.perf_counter() - start:.0f} s wall", flush=True)


if __name__ == "__main__":
    run()
