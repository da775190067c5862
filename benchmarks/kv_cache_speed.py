#!/usr/bin/env python3
"""Generation time with and without the key/value cache (chapter 6).

    OMP_NUM_THREADS=1 python benchmarks/kv_cache_speed.py --clock thread \
        --save src/attnbook/data/benchmark_kv_cache.json   # the record chapter 6 quotes

The model of chapter 6's timing cell: an untrained GPT (seed 0) of 2 layers, 4 heads, width
128, a window of 512 tokens and Tiny Shakespeare's 65 characters; from the one-character
prompt "d" it generates 64, 128, 256 and 511 tokens with `GPT.generate`, with and without
the cache (the weights do not matter for the time). Each time is the fastest of --repeats
calls on one thread, after a warm-up call, as wall-clock time or (--clock thread) as the CPU
time of the calling thread, which on a busy machine leaves out the waits for the core. Both
versions must give the same tokens.
Not a test: timings depend on the machine and on whatever else runs there.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT, GPTConfig
from attnbook.text import CharTokenizer, load_tiny_shakespeare
from attnbook.timing import call_times

LENGTHS = [64, 128, 256, 511]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per length")
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall")
    parser.add_argument("--save", default=None, help="the JSON record")
    args = parser.parse_args()
    torch.set_num_threads(
        1
    )  # all the work in this thread, so its CPU time is the call's
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    tokenizer = CharTokenizer.from_text(load_tiny_shakespeare())
    _ = torch.manual_seed(0)
    config = GPTConfig(
        vocab_size=tokenizer.vocab_size, block_size=512, n_layer=2, n_head=4, n_embd=128
    )
    model = GPT(config).eval()
    prompt = tokenizer.encode("d")[None]  # (1, 1)
    rows: list[dict[str, object]] = []
    print(f"{'tokens':>6} {'no cache (s)':>13} {'cache (s)':>10} {'speed-up':>9}")
    for n in LENGTHS:
        outputs: dict[bool, torch.Tensor] = {}
        times: dict[bool, list[float]] = {}
        for cached in (False, True):

            def run(cached: bool = cached, n: int = n, out: dict = outputs) -> None:
                out[cached] = model.generate(
                    prompt,
                    n,
                    generator=torch.Generator().manual_seed(0),
                    use_cache=cached,
                )

            times[cached] = call_times(run, args.repeats, clock=clock)
        if not torch.equal(outputs[True], outputs[False]):
            raise RuntimeError(f"cached and uncached tokens differ at {n} tokens")
        speed_up = min(times[False]) / min(times[True])
        rows.append(
            {
                "tokens": n,
                "no_cache_s": times[False],
                "cache_s": times[True],
                "speed_up": speed_up,
            }
        )
        print(
            f"{n:6d} {min(times[False]):13.3f} {min(times[True]):10.3f} {speed_up:8.1f}x",
            flush=True,
        )
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            [0],
            rows,
            threads=1,
            repeats=args.repeats,
            clock=args.clock,
            model="GPT, 2 layers, 4 heads, width 128, block 512, untrained (seed 0)",
            note=(
                f"fastest of {args.repeats} calls after a warm-up call, one thread, "
                f"{'wall-clock time' if args.clock == 'wall' else 'CPU time of the thread'}"
                "; the same tokens with and without the cache at every length"
            ),
        )


if __name__ == "__main__":
    main()
