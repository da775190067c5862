#!/usr/bin/env python3
"""Blockwise attention in PyTorch against SDPA and the naive version; sliding-window scaling
(chapter 8).

    python benchmarks/attention_blocks.py [--threads 2]

1. At T = 4096 (B = 1, H = 8, d = 64, float32): time of `blockwise_sdpa` (no mask and causal)
   and of `torch.nn.functional.scaled_dot_product_attention` (best of 5), and the peak bytes of
   tensors of blockwise vs naive attention (`attnbook.memory.peak_tensor_bytes`).
   Targets of issue 12: within 2x of SDPA's time, at most 1/8 of the naive peak memory.
2. Sliding window w = 256 (block 256), N = 1024 .. 16384: time and log-log slope
   (target <= 1.2), next to full causal blockwise attention.
Not a test: run it on an otherwise idle machine and put the numbers in the issue note.
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn.functional as F

from attnbook.blockwise import blockwise_sdpa
from attnbook.memory import peak_tensor_bytes
from attnbook.timing import best_time, loglog_slope


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--block", type=int, default=256, help="key block of the T = 4096 comparison"
    )
    parser.add_argument("--skip-window", action="store_true", help="only part 1")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s)")
    T = 4096
    q, k, v = torch.randn(
        3, 1, 8, T, 64, generator=torch.Generator().manual_seed(0)
    ).unbind(0)
    with torch.no_grad():
        for label, causal in (("no mask", False), ("causal", True)):
            t_sdpa = best_time(
                lambda c=causal: F.scaled_dot_product_attention(q, k, v, is_causal=c),
                5,
                warmup=False,
            )
            t_block = best_time(
                lambda c=causal: blockwise_sdpa(q, k, v, args.block, is_causal=c),
                5,
                warmup=False,
            )
            t_naive = best_time(lambda c=causal: naive(q, k, v, c), 3, warmup=False)
            print(
                f"T={T}, {label}: SDPA {1000 * t_sdpa:.0f} ms, blockwise (block {args.block}) "
                f"{1000 * t_block:.0f} ms ({t_block / t_sdpa:.2f}x SDPA), naive {1000 * t_naive:.0f} ms"
            )
        _, naive_peak = peak_tensor_bytes(lambda: naive(q, k, v, False))
        for block in (128, 256, 512):
            _, block_peak = peak_tensor_bytes(
                lambda b=block: blockwise_sdpa(q, k, v, b)
            )
            print(
                f"peak tensor memory, T={T}: naive {naive_peak / 2**20:.0f} MiB, blockwise "
                f"(block {block}) {block_peak / 2**20:.0f} MiB = 1/{naive_peak / block_peak:.0f}"
            )
        if args.skip_window:
            return
        print("\n| N | window 256 (ms) | full causal (ms) |\n| --- | --- | --- |")
        lengths = [1024, 2048, 4096, 8192, 16384]
        window_times, full_times = [], []
        for N in lengths:
            # q, k, v
            x = torch.randn(3, 1, 8, N, 64, generator=torch.Generator().manual_seed(N))
            window_times.append(
                best_time(
                    lambda x=x: blockwise_sdpa(*x, 256, is_causal=True, window=256),
                    3,
                    warmup=False,
                )
            )
            full_times.append(
                best_time(
                    lambda x=x: blockwise_sdpa(*x, 256, is_causal=True),
                    1 if N > 4096 else 3,
                    warmup=False,
                )
            )
            print(
                f"| {N} | {1000 * window_times[-1]:.0f} | {1000 * full_times[-1]:.0f} |",
                flush=True,
            )
        print(
            f"log-log slope: window {loglog_slope(lengths, window_times):.2f}, full causal {loglog_slope(lengths, full_times):.2f}"
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
