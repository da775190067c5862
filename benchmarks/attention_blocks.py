#!/usr/bin/env python3
"""Blockwise attention in PyTorch against SDPA and the naive version; sliding-window scaling
(chapter 8).

    python benchmarks/attention_blocks.py [--threads 2]
    OMP_NUM_THREADS=1 python benchmarks/attention_blocks.py --threads 1 --clock thread \
        --skip-window --compare-save src/attnbook/data/benchmark_blockwise_sdpa.json
    OMP_NUM_THREADS=1 python benchmarks/attention_blocks.py --threads 1 --window-only \
        --save src/attnbook/data/benchmark_sliding_window.json   # the record chapter 8 quotes

1. At T = 4096 (B = 1, H = 8, d = 64, float32): time of `blockwise_sdpa` (no mask and causal)
   and of `torch.nn.functional.scaled_dot_product_attention` (best of 5), and the peak bytes of
   tensors of blockwise vs naive attention (`attnbook.memory.peak_tensor_bytes`). With
   --compare-save the part writes a JSON record (every call's time) that chapter 8 quotes;
   --clock thread times the CPU time of the calling thread (use it with --threads 1).
   Targets of issue 12: within 2x of SDPA's time, at most 1/8 of the naive peak memory.
2. Sliding window w = 256 (block 256), N = 1024 .. 16384: time and log-log slope
   (target <= 1.2), next to full causal blockwise attention. Each time is the median of
   --repeats calls after one untimed warm-up call; the slopes are fitted to the medians.
   With --save the part writes a JSON record (every call's time, the medians, minima and
   slopes) that chapter 8 quotes; --window-only skips part 1.
Not a test: timings depend on the machine and on whatever else runs there; medians of
several calls on one thread are steadier than single calls, not free of that.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from attnbook.blockwise import blockwise_sdpa
from attnbook.data import write_benchmark_record
from attnbook.memory import peak_tensor_bytes
from attnbook.timing import call_times, loglog_slope


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--block", type=int, default=256, help="key block of the T = 4096 comparison"
    )
    parser.add_argument("--skip-window", action="store_true", help="only part 1")
    parser.add_argument("--window-only", action="store_true", help="only part 2")
    parser.add_argument("--repeats", type=int, default=5, help="part 2's timed calls")
    parser.add_argument("--save", default=None, help="part 2's JSON record")
    parser.add_argument(
        "--compare-save",
        default=None,
        help="part 1's JSON record (chapter 8 quotes it)",
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "thread"),
        default="wall",
        help="part 1: wall-clock time, or the CPU time of the calling thread "
        "(time.thread_time; with --threads 1 it leaves out waits for a busy core)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s)")
    if args.window_only:
        with torch.no_grad():
            window_scaling(args)
        return
    T = 4096
    q, k, v = torch.randn(
        3, 1, 8, T, 64, generator=torch.Generator().manual_seed(0)
    ).unbind(0)
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    compare = []
    with torch.no_grad():
        for label, causal in (("no mask", False), ("causal", True)):
            t_sdpa = call_times(
                lambda c=causal: F.scaled_dot_product_attention(q, k, v, is_causal=c),
                5,
                clock=clock,
            )
            t_block = call_times(
                lambda c=causal: blockwise_sdpa(q, k, v, args.block, is_causal=c),
                5,
                clock=clock,
            )
            t_naive = call_times(lambda c=causal: naive(q, k, v, c), 3, clock=clock)
            compare.append(
                {
                    "mask": label,
                    "sdpa_s": t_sdpa,
                    "blockwise_s": t_block,
                    "naive_s": t_naive,
                    "blockwise_over_sdpa": min(t_block) / min(t_sdpa),
                }
            )
            print(
                f"T={T}, {label}: SDPA {1000 * min(t_sdpa):.0f} ms, blockwise (block "
                f"{args.block}) {1000 * min(t_block):.0f} ms "
                f"({min(t_block) / min(t_sdpa):.2f}x SDPA), naive {1000 * min(t_naive):.0f} ms"
            )
        _, naive_peak = peak_tensor_bytes(lambda: naive(q, k, v, False))
        peaks = {}
        for block in (128, 256, 512):
            _, block_peak = peak_tensor_bytes(
                lambda b=block: blockwise_sdpa(q, k, v, b)
            )
            peaks[str(block)] = block_peak
            print(
                f"peak tensor memory, T={T}: naive {naive_peak / 2**20:.0f} MiB, blockwise "
                f"(block {block}) {block_peak / 2**20:.0f} MiB = 1/{naive_peak / block_peak:.0f}"
            )
        if args.compare_save:
            write_benchmark_record(
                args.compare_save,
                "python " + " ".join(sys.argv),
                [0],  # the random inputs' seed; no training
                compare,
                threads=args.threads,
                clock=args.clock,
                shape=f"B = 1, H = 8, T = {T}, d = 64, float32",
                block=args.block,
                naive_peak_bytes=naive_peak,
                blockwise_peak_bytes=peaks,
                note=(
                    "each time list: calls after a warm-up call (5 for SDPA and blockwise, "
                    "3 for naive); blockwise_over_sdpa compares the fastest calls"
                ),
            )
        if args.skip_window:
            return
        window_scaling(args)


def window_scaling(args: argparse.Namespace) -> None:
    """Part 2: blockwise attention with a window of 256 and with the full causal mask,
    N = 1024 .. 16384 (B = 1, H = 8, d = 64); medians, slopes, and the record (--save)."""
    window = block = 256
    lengths = [1024, 2048, 4096, 8192, 16384]
    print(f"\n| N | window {window}, median (ms) | full causal, median (ms) |")
    print("| --- | --- | --- |")
    rows = []
    for N in lengths:
        x = torch.randn(3, 1, 8, N, 64, generator=torch.Generator().manual_seed(N))
        rows.append(
            {
                "N": N,
                "window_s": call_times(
                    lambda x=x: blockwise_sdpa(
                        *x, block, is_causal=True, window=window
                    ),
                    args.repeats,
                ),
                "full_s": call_times(
                    lambda x=x: blockwise_sdpa(*x, block, is_causal=True), args.repeats
                ),
            }
        )
        for kind in ("window", "full"):
            rows[-1][f"{kind}_median_s"] = statistics.median(rows[-1][f"{kind}_s"])
            rows[-1][f"{kind}_min_s"] = min(rows[-1][f"{kind}_s"])
        print(
            f"| {N} | {1000 * rows[-1]['window_median_s']:.0f} | "
            f"{1000 * rows[-1]['full_median_s']:.0f} |",
            flush=True,
        )
    slopes = {
        kind: loglog_slope(lengths, [r[f"{kind}_median_s"] for r in rows])
        for kind in ("window", "full")
    }
    slopes_min = {
        kind: loglog_slope(lengths, [r[f"{kind}_min_s"] for r in rows])
        for kind in ("window", "full")
    }
    print(
        f"log-log slope of the medians: window {slopes['window']:.2f}, "
        f"full causal {slopes['full']:.2f} (of the minima: {slopes_min['window']:.2f}, "
        f"{slopes_min['full']:.2f})"
    )
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            [],  # random inputs seeded by N; no training
            rows,
            threads=args.threads,
            repeats=args.repeats,
            shape="B = 1, H = 8, d = 64, float32",
            window=window,
            block=block,
            slope_window=slopes["window"],
            slope_full=slopes["full"],
            slope_window_of_minima=slopes_min["window"],
            slope_full_of_minima=slopes_min["full"],
            note=(
                f"medians of {args.repeats} calls after a warm-up call, one thread, on a "
                "shared 2-core machine with other jobs running: single calls varied "
                "(see each row's times); the slopes are fitted to the medians"
            ),
        )


def naive(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool
) -> torch.Tensor:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, T)
    if causal:
        T = q.shape[-2]
        scores = scores.masked_fill(
            ~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf")
        )
    return torch.softmax(scores, dim=-1) @ v


if __name__ == "__main__":
    main()
