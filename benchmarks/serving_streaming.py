#!/usr/bin/env python3
"""Attention sinks on chapter 9's two tiny GPTs: the weight on the first token, and what
evicting it costs when reading past the context (chapter 9).

    python benchmarks/serving_streaming.py \
        --save src/attnbook/data/benchmark_serving_streaming.json   # the record chapter 9 quotes

The models (`streaming.load_ch9_model`): "plain", trained on 64-character windows cut anywhere,
"start-token", whose every training window was a start token and 63 characters, and
"start-token-long", the same trained for 4000 steps instead of 1500. For each, on the
validation text:

- `first_token_mass`: the mean attention weight of every layer and head on the first token
  of 32 windows of 64 (the start-token model's open with its start token and 63 characters),
  over the queries at positions 16..63, beside what a head attending uniformly would give;
- `stream_losses` on 8 streams of 640 characters read side by side (the start-token model's
  opened by its start token), cache capacity 64, in every mode: rolling, sinks (1 and 4
  kept), re-encoding the last 64, re-encoding the first token and the last 63. Per mode and
  stream: the mean loss over the first 64 predictions and over the rest.

With --cache-only --streams 64 (the record `benchmark_serving_sinks.json`), only rolling and
sinks, on 64 streams: enough to resolve rolling minus sinks-1, the contrast that isolates the
first token (the re-encoding baselines cost a forward pass of 64 tokens per step).

    python benchmarks/serving_streaming.py --cache-only --streams 64 \
        --save src/attnbook/data/benchmark_serving_sinks.json

One thread. Not a test.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from attnbook.data import write_benchmark_record
from attnbook.streaming import first_token_mass, load_ch9_model, stream_losses
from attnbook.text import get_batch, load_tiny_shakespeare, split_train_val

MODES = [
    ("rolling", 0),
    ("sinks", 1),
    ("sinks", 4),
    ("reencode", 0),
    ("reencode-sinks", 1),
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--kinds", nargs="+", default=["plain", "start-token", "start-token-long"]
    )
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--length", type=int, default=640)
    parser.add_argument(
        "--cache-only",
        action="store_true",
        help="only the cache modes (rolling, sinks): the sink contrast on many streams",
    )
    parser.add_argument("--save", default=None, help="write the results as a record")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = {}
    for kind in args.kinds:
        model, tok = load_ch9_model(kind)
        _, val_data = split_train_val(tok.encode(load_tiny_shakespeare()), 0.1)
        windows, _ = get_batch(val_data, 64, 32, torch.Generator().manual_seed(0))
        g = torch.Generator().manual_seed(1)
        starts = torch.randint(
            len(val_data) - args.length, (args.streams,), generator=g
        )
        streams = torch.stack([val_data[s : s + args.length] for s in starts.tolist()])
        if kind.startswith("start-token"):
            windows = torch.cat(
                [torch.full((32, 1), tok.vocab_size), windows[:, :63]], 1
            )
        else:  # as long as the other model's streams: the start token and 640 characters
            streams = torch.stack(
                [val_data[s : s + args.length + 1] for s in starts.tolist()]
            )
        if kind.startswith("start-token"):
            streams = torch.cat(
                [torch.full((args.streams, 1), tok.vocab_size), streams], 1
            )
        mass, uniform = first_token_mass(model, windows, n_first=1, start=16)
        entry: dict = {
            "first_token_mass": mass.tolist(),
            "uniform": uniform,
            "modes": {},
        }
        for mode, sinks in MODES if not args.cache_only else MODES[:3]:
            start = time.perf_counter()
            losses = stream_losses(model, streams, 64, mode, sinks)  # (streams, N - 1)
            name = (
                mode
                if mode.startswith("reencode") and sinks == 0
                else f"{mode}-{sinks}"
            )
            name = "rolling" if mode == "rolling" else name
            entry["modes"][name] = {
                "first_64": losses[:, :64].mean(1).tolist(),
                "after_64": losses[:, 64:].mean(1).tolist(),
                "seconds": time.perf_counter() - start,
            }
            print(
                f"{kind:>12} {name:>16}: first 64 {losses[:, :64].mean():.4f}, after "
                f"{losses[:, 64:].mean():.4f}  ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
        print(f"{kind}: largest head mass {mass.max():.4f}, uniform {uniform:.4f}")
        results[kind] = entry
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            [0, 1],
            results,
            capacity=64,
            stream_length=args.length,
            streams=args.streams,
        )
        print(f"record written to {args.save}")


if __name__ == "__main__":
    main()
