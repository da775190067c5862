#!/usr/bin/env python3
"""Chapter 7's experiment over many seeds: test accuracy (mean ± std) and training time of
the three car classifiers (bag of words, attention, attention without positions).

    python benchmarks/cars_seeds.py [--seeds 0-9] [--threads 1] [--kinds attention,...]

Same data (`generate_pairs()`, seed 0), same recipe (`TrainConfig()`) as the chapter; seed s
changes the pair-aware split, the initial weights and the batch order. Wall-clock and CPU
time are both reported: on a shared machine the wall clock is inflated by other processes,
the CPU time much less. Not a test: run it and put the numbers in the issue note.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from attnbook.cars import MODEL_KINDS, generate_pairs, run_seed


def seed_range(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=seed_range, default=seed_range("0-4"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--kinds", default=",".join(MODEL_KINDS))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    sentences = generate_pairs()
    print(f"{len(sentences)} sentences, seeds {args.seeds}, {args.threads} thread(s)")
    for kind in args.kinds.split(","):
        accs, walls, cpus = [], [], []
        for seed in args.seeds:
            start = time.perf_counter()
            r = run_seed(kind, sentences, seed).result
            accs.append(r.test_accuracy)
            walls.append(r.seconds)
            cpus.append(r.cpu_seconds)
            print(f"  {kind:24s} seed {seed:2d}: test {r.test_accuracy:.4f}  train {r.train_accuracy:.4f}  "
                  f"wall {r.seconds:5.1f} s  cpu {r.cpu_seconds:5.1f} s  "
                  f"(with data prep {time.perf_counter() - start:5.1f} s)", flush=True)
        std = statistics.stdev(accs) if len(accs) > 1 else 0.0
        print(f"{kind:24s} test accuracy {statistics.mean(accs):.4f} ± {std:.4f} (min {min(accs):.4f}); "
              f"per seed: wall {statistics.mean(walls):.1f} s (max {max(walls):.1f}), "
              f"cpu {statistics.mean(cpus):.1f} s (max {max(cpus):.1f})", flush=True)


if __name__ == "__main__":
    main()
