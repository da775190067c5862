#!/usr/bin/env python3
"""Chapter 7's experiment, larger: more seeds, every family held out in turn, longer training.

    python benchmarks/cars_seeds.py [--seeds 0-9] [--workers 2] [--iters 400] [--families | --families-only]
                                    [--kinds "bag of words;attention + RoPE"] [--pairs 264]
                                    [--save src/attnbook/cars/chapter_grid.json]

Prints test accuracy (mean ± std over the seeds) for every model x split, the share of test
descriptions also seen in training, and wall time. `--families` adds one "held-out family"
split per phrasing family (all its phrasings and mirrors only in the test set).
Same data generator and recipe as the chapter (`CHAPTER_CONFIG`), except `--iters` and
`--pairs`. Not a test: run it and put the table in the issue note. Timings on a shared
machine are upper bounds.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import torch

from attnbook.cars import (
    CHAPTER_CONFIG,
    FAMILIES,
    MODEL_KINDS,
    SPLITS,
    generate_pairs,
    make_split,
    overlap_share,
    run_grid,
    run_seed,
    summarise,
    with_steps,
)
from attnbook.train import TrainConfig


def seed_range(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def family_run(args: tuple) -> tuple[str, str, int, float, float]:
    """Hold out one family: (kind, family, seed, test accuracy, overlap)."""
    kind, family, seed, sentences, config = args
    torch.set_num_threads(1)
    run = run_seed(
        kind, sentences, "held-out phrasings", seed, config, held_out=[family]
    )
    return kind, family, seed, run.test_accuracy, run.overlap


def save_grid(
    path: str, grid: list, config: TrainConfig, args: argparse.Namespace
) -> None:
    """The grid's numbers with what produced them (command, recipe, versions), as JSON."""
    import json
    import platform
    from dataclasses import asdict
    from pathlib import Path

    record = {
        "command": "python benchmarks/cars_seeds.py "
        + " ".join(
            f"--{k} {v}"
            for k, v in (
                ("seeds", f"{min(args.seeds)}-{max(args.seeds)}"),
                ("iters", args.iters),
                ("pairs", args.pairs),
                ("workers", args.workers),
                ("save", path),
            )
        ),
        "config": {k: v for k, v in asdict(config).items() if not callable(v)},
        "torch": torch.__version__,
        "python": platform.python_version(),
        "runs": [
            {
                k: (round(v, 4) if isinstance(v, float) else v)
                for k, v in asdict(r).items()
            }
            for r in grid
        ],
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {path} ({len(grid)} runs)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=seed_range, default=seed_range("0-9"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--iters", type=int, default=CHAPTER_CONFIG.max_iters)
    parser.add_argument("--pairs", type=int, default=264)
    parser.add_argument("--kinds", default=";".join(MODEL_KINDS))
    parser.add_argument("--families", action="store_true")
    parser.add_argument(
        "--families-only",
        action="store_true",
        help="only the held-out-family runs (skip the grid of the three splits)",
    )
    parser.add_argument(
        "--save",
        default=None,
        help="write every run's numbers as JSON (chapter 7 loads src/attnbook/cars/chapter_grid.json)",
    )
    args = parser.parse_args()
    kinds = args.kinds.split(";")
    config = with_steps(CHAPTER_CONFIG, args.iters)
    sentences = generate_pairs(args.pairs)
    print(
        f"{len(sentences)} sentences, seeds {args.seeds}, {args.iters} steps, {args.workers} workers",
        flush=True,
    )
    start = time.perf_counter()
    if not args.families_only:
        report_grid(kinds, sentences, config, args)
    if args.families or args.families_only:
        report_families(kinds, sentences, config, args)
    print(f"total: {time.perf_counter() - start:.0f} s wall", flush=True)


def report_grid(
    kinds: list[str], sentences: list, config: TrainConfig, args: argparse.Namespace
) -> None:
    """Every kind x split x seed: the table of test accuracy and the overlap shares."""
    start = time.perf_counter()
    grid = run_grid(kinds, SPLITS, args.seeds, sentences, config, workers=args.workers)
    runs = {(r.kind, r.split, r.seed): r for r in grid}
    if args.save:
        save_grid(args.save, grid, config, args)
    print("\n| model | " + " | ".join(SPLITS) + " |")
    print("|---|" + "---|" * len(SPLITS))
    for kind in kinds:
        cells = []
        for split in SPLITS:
            mean, std = summarise(
                runs[kind, split, s].test_accuracy for s in args.seeds
            )
            cells.append(f"{mean:.3f} ± {std:.3f}")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    for split in SPLITS:
        shares = [make_split(split, sentences, s) for s in args.seeds]
        mean, std = summarise(overlap_share(sentences, tr, te) for tr, te in shares)
        print(
            f"overlap of test descriptions with training, {split}: {mean:.1%} ± {std:.1%}"
        )
    print(f"grid: {time.perf_counter() - start:.0f} s wall", flush=True)


def report_families(
    kinds: list[str], sentences: list, config: TrainConfig, args: argparse.Namespace
) -> None:
    """Every family held out in turn (all its phrasings and mirrors only in the test set)."""
    jobs = [
        (k, f, s, sentences, config)
        for f in FAMILIES
        for s in args.seeds
        for k in kinds
    ]
    with ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        results = list(pool.map(family_run, jobs))
    print("\nheld-out family (test = every phrasing of the family):")
    print("| model | " + " | ".join(FAMILIES) + " |")
    print("|---|" + "---|" * len(FAMILIES))
    for kind in kinds:
        cells = []
        for family in FAMILIES:
            accs = [acc for k, f, _, acc, _ in results if k == kind and f == family]
            mean, std = summarise(accs)
            cells.append(f"{mean:.2f} ± {std:.2f}")
        print(f"| {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
