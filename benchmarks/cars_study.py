#!/usr/bin/env python3
"""Chapter 7's study: tuned models on the harder and cleaner splits.

    python benchmarks/cars_study.py tune --seeds 0,1   # learning rate per model
    python benchmarks/cars_study.py main --seeds 0-4   # the splits below, tuned rates
    python benchmarks/cars_study.py live --seeds 0-4   # the chapter's live run, stored
    (each adds to --save, default src/attnbook/data/benchmark_cars_study.json; "main" reads
    the tuned rates from it, runs only what the record lacks, and can add seeds later)

Every model of `attnbook.cars.study.STUDY_MODELS` is trained for --steps steps with chapter
7's recipe, its peak learning rate chosen from `LR_GRID` on `tuning_sentences()`: pairs drawn
with their own generator seed, less every pair sharing a sentence with any study seed's data
(split by pairs into fit and validation per tuning seed; mean validation accuracy). Then, per
seed s, on data drawn for that seed (`attnbook.cars.design`), so the seeds resample the test
sentences as well as the weights and batches:

- random pairs of `study_sentences(s)`, with two offset tests on its test sentences: moved right
  by 4 and 8 padding tokens (masked), and their descriptions moved by a neutral clause of 4 and
  8 real words (`PREFIXES`);
- the family-balanced length split `balanced_length_split(s)`;
- each of the six families of `study_sentences(s)` held out in turn (every model but learned
  positions started at 0.02, which fits no training set).

"live": the model chapter 7 trains while it runs (attention + RoPE, the chapter's 240-step
recipe, the chapter's data, family `LIVE_FAMILY` held out), stored for five seeds so that the
chapter can check its live run against them.

--workers processes of one thread each (a shared 2-core machine): timings are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import torch

from attnbook.cars import FAMILIES, CHAPTER_CONFIG, generate_pairs, make_split, run_seed
from attnbook.cars.splits import split_pairs
from attnbook.cars.design import (
    balanced_length_split,
    study_sentences,
    tuning_sentences,
)
from attnbook.cars.study import (
    LIVE_FAMILY,
    LR_GRID,
    STUDY_MODELS,
    study_config,
    train_and_measure,
    unk_share,
)
from attnbook.data import write_benchmark_record

SHIFTS = (4, 8)
SMALL_INIT = "attention + learned, init 0.02"
FAMILY_MODELS = [m for m in STUDY_MODELS if m != SMALL_INIT]


def seed_list(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def load(path: Path) -> dict:
    return json.loads(path.read_text())["results"] if path.is_file() else {}


def save(path: Path, results: dict, args: argparse.Namespace) -> None:
    seeds = sorted({r["seed"] for r in results.get("runs", [])})
    tuning = sorted({r["seed"] for r in results.get("tuning", [])})
    write_benchmark_record(
        str(path),
        f"python benchmarks/cars_study.py tune --seeds {','.join(map(str, tuning))} "
        f"--steps {results.get('steps', args.steps)}; python benchmarks/cars_study.py "
        f"main --seeds {','.join(map(str, seeds))}; "
        "python benchmarks/cars_study.py live --seeds 0-4",
        seeds,
        results,
        threads=1,
    )


def split_of(split: str, seed: int) -> tuple[list, list[int], list[int], tuple]:
    """(sentences, train, test, shifts) of one split of the study for one seed."""
    if split == "longer sentences":
        return (*balanced_length_split(seed), ())
    sentences = study_sentences(seed)
    if split == "random pairs":
        return (sentences, *make_split("random pairs", sentences, seed), SHIFTS)
    family = split.removeprefix("family ")
    train, test = make_split("held-out phrasings", sentences, seed, held_out=[family])
    return sentences, train, test, ()


def run_job(job: tuple) -> dict:
    """One (stage, model, split, seed, lr, steps) job, in a worker of one thread."""
    torch.set_num_threads(1)
    stage, model, split, seed, lr, steps = job
    config = study_config(lr, steps)
    if stage == "tune":
        sentences = tuning_sentences()
        fit, val = split_pairs([s.pair for s in sentences], 0.2, seed)
        out = train_and_measure(model, sentences, fit, {"val": val}, seed, config)
        out = {k: v for k, v in out.items() if not k.startswith("val_")} | {
            "val_accuracy": out["val_accuracy"]
        }
        return {"model": model, "seed": seed, "lr": lr, **out}
    sentences, train, test, shifts = split_of(split, seed)
    out = train_and_measure(
        model, sentences, train, {"test": test}, seed, config, shifts=shifts
    )
    unk = unk_share(sentences, train, test)[0]
    return {
        "model": model,
        "split": split,
        "seed": seed,
        "lr": lr,
        "unk_share": round(unk, 4),
        "n_test": len(test),
        **out,
    }


def execute(jobs: list[tuple], workers: int, done) -> None:
    """Run `jobs` in `workers` processes, calling done(row) as each one finishes."""
    if workers <= 1:
        for job in jobs:
            done(run_job(job))
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        for future in as_completed([pool.submit(run_job, job) for job in jobs]):
            done(future.result())


def tune(args: argparse.Namespace, results: dict, path: Path) -> None:
    rows: list[dict] = []
    jobs = [
        ("tune", m, "", seed, lr, args.steps)
        for seed in args.seeds
        for m in STUDY_MODELS
        for lr in LR_GRID
    ]
    execute(jobs, args.workers, lambda row: (rows.append(row), print(row, flush=True)))
    chosen = {}
    for model in STUDY_MODELS:
        score = {
            lr: statistics.mean(
                r["val_accuracy"] for r in rows if r["model"] == model and r["lr"] == lr
            )
            for lr in LR_GRID
        }
        chosen[model] = max(LR_GRID, key=lambda lr: score[lr])  # first best on a tie
    rows.sort(key=lambda r: (r["seed"], list(STUDY_MODELS).index(r["model"]), r["lr"]))
    n = len(tuning_sentences())
    results.clear()
    results.update(
        steps=args.steps,
        lr_grid=list(LR_GRID),
        tuning_sentences=n,
        tuning=rows,
        lr=chosen,
        runs=[],
    )
    save(path, results, args)
    print("chosen learning rates:", chosen, flush=True)


def main_runs(args: argparse.Namespace, results: dict, path: Path) -> None:
    if results.get("steps") != args.steps:
        sys.exit(
            f"the rates were tuned at {results.get('steps')} steps, not {args.steps}"
        )
    lr = results["lr"]
    done = {(r["model"], r["split"], r["seed"]) for r in results["runs"]}
    jobs = []
    for seed in args.seeds:
        units = [("random pairs", list(STUDY_MODELS))]
        units.append(("longer sentences", list(STUDY_MODELS)))
        units += [(f"family {f}", FAMILY_MODELS) for f in FAMILIES]
        jobs += [
            ("main", m, split, seed, lr[m], args.steps)
            for split, models in units
            for m in models
            if (m, split, seed) not in done
        ]
    # random pairs and the length split of every seed before the families, each part seed
    # by seed: a run stopped early leaves whole seeds of each part, the headline splits first
    jobs.sort(key=lambda j: ("family" in j[2], j[3]))

    def store(row: dict) -> None:
        results["runs"].append(row)
        results["runs"].sort(key=lambda r: (r["seed"], r["split"], r["model"]))
        save(path, results, args)
        print(row["model"], row["split"], row["seed"], row["test_accuracy"], flush=True)

    execute(jobs, args.workers, store)


def live(args: argparse.Namespace, results: dict, path: Path) -> None:
    sentences = generate_pairs()  # the chapter's data, seed 0
    rows = []
    for seed in args.seeds:
        run = run_seed(
            "attention + RoPE",
            sentences,
            "held-out phrasings",
            seed,
            CHAPTER_CONFIG,
            held_out=[LIVE_FAMILY],
        )
        rows.append(
            {
                "seed": seed,
                "train_accuracy": round(run.train_accuracy, 4),
                "test_accuracy": round(run.test_accuracy, 4),
                "seconds": round(run.seconds, 2),
            }
        )
        print(rows[-1], flush=True)
    results["live"] = {"model": "attention + RoPE", "family": LIVE_FAMILY, "runs": rows}
    save(path, results, args)


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("stage", choices=("tune", "main", "live"))
    parser.add_argument("--seeds", type=seed_list, default=seed_list("0-4"))
    parser.add_argument("--steps", type=int, default=960)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--save", default="src/attnbook/data/benchmark_cars_study.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    path = Path(args.save)
    results = load(path)
    start = time.perf_counter()
    {"tune": tune, "main": main_runs, "live": live}[args.stage](args, results, path)
    print(f"{args.stage}: {time.perf_counter() - start:.0f} s wall", flush=True)


if __name__ == "__main__":
    run()
