#!/usr/bin/env python3
"""The recall gap: MQAR accuracy against the number of key-value pairs, for models of equal
width whose layers keep every token (softmax) or a state of fixed size (chapter 11).

    python benchmarks/recall_sweep.py --seeds 3 --kinds softmax,delta   # printed, not saved
    python benchmarks/recall_sweep.py --seeds SEED --kinds KIND --save FILE   # one run
    python benchmarks/recall_sweep.py --merge FILE ... --save all.json   # runs made apart

The record chapter 11 quotes, src/attnbook/data/benchmark_recall_sweep.json, was made the
second way, one process for each seed 0 .. 4 and kind of MODEL_KINDS, then merged with the
third (its "command" field says so). Its controls, which the chapter quotes too:

    python benchmarks/recall_sweep.py --seeds 5 \
        --save src/attnbook/data/benchmark_recall_seed5.json   # a sixth seed, every kind
    python benchmarks/recall_sweep.py --seeds 0 1 2 3 4 --kinds additive \
        --save src/attnbook/data/benchmark_recall_additive.json   # delta, no correction
    python benchmarks/recall_sweep.py --seeds 0 1 2 --kinds linear --d-model 64 \
        --save src/attnbook/data/benchmark_recall_wide.json   # heads of width 16: 3.8x state
    python benchmarks/recall_sweep.py --seeds 0 1 --kinds delta,additive --steps 1200 \
        --save src/attnbook/data/benchmark_recall_long.json   # both, twice as long

Every run trains one `attnbook.recall_models.RecallModel` with `attnbook.mqar.train_recall`
(the chapter's `RecallTask`: each step draws its number of pairs from task.train_pairs) and
measures the share of queries answered right at each of task.eval_pairs on fresh sequences.
One thread; the CPU seconds of each run (its own thread's time, what the machine's other
jobs do not inflate) and its wall-clock seconds are recorded with it.

Not a test: the accuracies move with the seed and the CPU's rounding; compare across seeds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import torch

from attnbook.data import write_benchmark_record
from attnbook.mqar import FINAL_LOSS_STEPS, RecallTask, train_recall
from attnbook.recall_models import CONTROL_KINDS, MODEL_KINDS


def run(kind: str, seed: int, task: RecallTask) -> dict:
    wall, cpu = time.perf_counter(), time.thread_time()
    model, result, accuracy = train_recall(kind, seed, task)
    losses = result.step_losses
    tail = losses[-FINAL_LOSS_STEPS:]
    return {
        "accuracy": {str(p): round(a, 4) for p, a in accuracy.items()},
        "final_loss": round(sum(tail) / len(tail), 4),
        "loss_every_50": [round(v, 3) for v in losses[::50]],
        "parameters": sum(p.numel() for p in model.parameters()),
        "state_numbers": model.state_numbers(),
        "cpu_seconds": round(time.thread_time() - cpu, 1),
        "wall_seconds": round(time.perf_counter() - wall, 1),
    }


def merge(paths: list[str], save: str | None) -> None:
    """Join records of other seeds (run as separate processes) into one."""
    records = [json.loads(Path(p).read_text()) for p in paths]
    first = records[0]
    if any(r["task"] != first["task"] for r in records):
        raise SystemExit("the records were made with different tasks")
    seeds = sorted({s for r in records for s in r["seeds"]})
    results: dict = {}
    for r in records:
        for kind, runs in r["results"].items():
            results.setdefault(kind, {}).update(runs)
    kinds = list(results)
    commands = (
        "python benchmarks/recall_sweep.py --seeds SEED --kinds KIND --save FILE, one "
        f"process for each seed in {seeds} and kind in {kinds}; then --merge FILE ... --save"
    )
    total = round(sum(r["cpu_seconds"] for r in records), 1)
    print(f"{len(seeds)} seeds, {total} s of CPU time in all")
    if save:
        write_benchmark_record(
            save,
            commands,
            seeds,
            results,
            threads=first["threads"],
            cpu_seconds=total,
            task=first["task"],
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--kinds", default=",".join(MODEL_KINDS))
    parser.add_argument("--steps", type=int, default=RecallTask().steps)
    parser.add_argument(
        "--d-model",
        type=int,
        default=RecallTask().model.d_model,
        help="model width (the heads stay as many, so each is wider and its state larger)",
    )
    parser.add_argument("--save", help="write the record here")
    parser.add_argument("--merge", nargs="+", help="records of the same task to join")
    args = parser.parse_args(argv)
    if args.merge:
        merge(args.merge, args.save)
        return
    torch.set_num_threads(1)
    base = RecallTask()
    model = dataclasses.replace(base.model, d_model=args.d_model)
    task = dataclasses.replace(base, steps=args.steps, model=model)
    kinds = args.kinds.split(",")
    unknown = set(kinds) - set(MODEL_KINDS + CONTROL_KINDS)
    if unknown:
        parser.error(
            f"unknown kinds {sorted(unknown)}; kinds: {MODEL_KINDS + CONTROL_KINDS}"
        )
    results: dict = {kind: {} for kind in kinds}
    start = time.thread_time()
    for seed in args.seeds:  # seeds outermost: an interrupted sweep has every kind
        for kind in kinds:
            out = run(kind, seed, task)
            results[kind][str(seed)] = out
            shown = " ".join(f"{p}:{a:.2f}" for p, a in out["accuracy"].items())
            print(
                f"{kind:12} seed {seed}: accuracy by pairs {shown}; final loss "
                f"{out['final_loss']:.3f}; {out['cpu_seconds']} s CPU, "
                f"{out['wall_seconds']} s wall",
                flush=True,
            )
    total = round(time.thread_time() - start, 1)
    print(f"the sweep: {total} s of one core's CPU time")
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(["benchmarks/recall_sweep.py", *sys.argv[1:]]),
            args.seeds,
            results,
            threads=torch.get_num_threads(),
            cpu_seconds=total,
            task=dataclasses.asdict(task),
        )


if __name__ == "__main__":
    main()
