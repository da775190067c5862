#!/usr/bin/env python3
"""Time of naive against fused attention for T = 128 .. 4096 (chapter 2's cost table).

    OMP_NUM_THREADS=1 python benchmarks/attention_cost.py --repeats 21 --clock thread \
        --save src/attnbook/data/benchmark_attention_cost.json   # the record chapter 2 quotes

For each T, one head of width d_k = 64 in float32, shaped (1, 1, T, 64) so that PyTorch's
`scaled_dot_product_attention` reaches its fused CPU kernel: every call's time of
`attnbook.attention.scaled_dot_product_attention` (the naive version, which builds the
(T, T) scores and weights) and of the fused function, after one untimed warm-up call, on
one thread (wall-clock time, or with --clock thread the CPU time of the calling thread, which
on a busy machine leaves out the waits while other jobs had the core). The record keeps every call, the fastest of each, the nanoseconds per score
entry (fastest time / T^2) and the log-log slopes of the fastest times.
Not a test: timings depend on the machine and on whatever else runs there.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
import torch.nn.functional as F

from attnbook.attention import scaled_dot_product_attention
from attnbook.data import write_benchmark_record
from attnbook.timing import call_times, loglog_slope

LENGTHS = [128, 256, 512, 1024, 2048, 4096]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeats", type=int, default=9, help="timed calls per version"
    )
    parser.add_argument("--save", default=None, help="the JSON record")
    parser.add_argument("--note", default="", help="what else the machine was doing")
    parser.add_argument(
        "--clock",
        choices=("wall", "thread"),
        default="wall",
        help="wall-clock time, or the CPU time of the calling thread (time.thread_time), "
        "which leaves out the waits while other jobs had the core",
    )
    args = parser.parse_args()
    torch.set_num_threads(
        1
    )  # all the work in this thread, so its CPU time is the call's
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    print(
        f"torch {torch.__version__}, 1 thread, {args.repeats} calls per version and T"
    )
    print(
        f"{'T':>5} {'naive (ms)':>11} {'fused (ms)':>11} {'naive ns/entry':>15} {'fused ns/entry':>15}"
    )
    rows = []
    with torch.no_grad():
        for T in LENGTHS:
            q, k, v = torch.randn(
                3, 1, 1, T, 64, generator=torch.Generator().manual_seed(T)
            ).unbind(0)  # (B, H, T, d_k) each
            row: dict[str, object] = {"T": T}
            for name, fn in (
                ("naive", lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v)),
                (
                    "fused",
                    lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v),
                ),
            ):
                times = call_times(fn, args.repeats, clock=clock)
                row[f"{name}_s"] = times
                row[f"{name}_min_s"] = min(times)
                row[f"{name}_ns_per_entry"] = 1e9 * min(times) / T**2
            rows.append(row)
            print(
                f"{T:5d} {1e3 * row['naive_min_s']:11.3f} {1e3 * row['fused_min_s']:11.3f}"
                f" {row['naive_ns_per_entry']:15.2f} {row['fused_ns_per_entry']:15.2f}",
                flush=True,
            )
    slopes = {
        name: loglog_slope(LENGTHS, [r[f"{name}_min_s"] for r in rows])  # type: ignore[misc]
        for name in ("naive", "fused")
    }
    print(
        f"log-log slopes of the fastest calls: naive {slopes['naive']:.2f}, fused {slopes['fused']:.2f}"
    )
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            [],  # random inputs seeded by T; no training
            rows,
            threads=1,
            repeats=args.repeats,
            clock=args.clock,
            shape="B = 1, H = 1, d_k = 64, float32",
            slope_naive=slopes["naive"],
            slope_fused=slopes["fused"],
            note=(
                f"fastest of {args.repeats} calls after a warm-up call, one thread, "
                f"{'wall-clock time' if args.clock == 'wall' else 'CPU time of the thread'}. "
                + args.note
            ).strip(),
        )


if __name__ == "__main__":
    main()
