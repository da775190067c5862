#!/usr/bin/env python3
"""Throughput and quality of the tiny GPT at nanoGPT's CPU "baby GPT" size (chapter 6).

    python benchmarks/gpt_speed.py                      # throughput on Tiny Shakespeare (shipped)
    python benchmarks/gpt_speed.py --quality [--seconds 110]   # val loss within a time budget
    python benchmarks/gpt_speed.py --shakespeare PATH --quality  # a local copy instead (sha256 checked)

Size: 4 layers, 4 heads, 128-dim embeddings, block 64, batch 12, no dropout. Reference on
this 2-core machine (shared/data/README.md): nanoGPT reaches validation loss 1.886 on Tiny
Shakespeare after 108 s at about 16,000-16,300 training tokens per second.
Not a test: run it on an otherwise idle machine and put the numbers in the issue note.
"""

from __future__ import annotations

import argparse
import time

import torch

from attnbook.gpt import GPT, GPTConfig
from attnbook.text import CharTokenizer, load_tiny_shakespeare, split_train_val
from attnbook.train import TrainConfig, train


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--shakespeare", help="path of a local Tiny Shakespeare copy (sha256 checked)"
    )
    parser.add_argument(
        "--quality", action="store_true", help="the quality run (default: throughput)"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=110.0,
        help="wall-time budget of the quality run",
    )
    parser.add_argument(
        "--iters", type=int, default=300, help="iterations of the throughput run"
    )
    parser.add_argument(
        "--max-iters", type=int, default=2600, help="schedule length of the quality run"
    )
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")

    # None: the copy shipped in the package
    text = load_tiny_shakespeare(path=args.shakespeare)
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    model = GPT(
        GPTConfig(
            vocab_size=tok.vocab_size, block_size=64, n_layer=4, n_head=4, n_embd=128
        )
    )
    print(f"{model.num_parameters():,} parameters, vocabulary {tok.vocab_size}")

    if not (args.quality or args.shakespeare):
        cfg = TrainConfig(max_iters=args.iters, eval_interval=10**9, progress=False)
        result = train(model, train_data, val_data, cfg)
        print(
            f"throughput: {result.tokens_per_second:,.0f} training tokens/s "
            f"({result.iters} iterations in {result.train_seconds:.1f} s)"
        )
        return

    start = time.perf_counter()
    cfg = TrainConfig(
        max_iters=args.max_iters,
        learning_rate=args.lr,
        min_lr=args.lr / 10,
        eval_interval=250,
        eval_iters=20,
        progress=False,
        max_seconds=args.seconds - 8.0,
    )  # leave room for the evaluations
    result = train(model, train_data, val_data, cfg)
    wall = time.perf_counter() - start
    for row in result.history:
        print(
            f"iter {row['iter']:5d}  train {row['train_loss']:.4f}  val {row['val_loss']:.4f}  "
            f"({row['seconds']:.1f} s of training)"
        )
    print(
        f"final validation loss {result.final_val_loss:.4f} after {result.iters} iterations, "
        f"{wall:.1f} s wall, {result.tokens_per_second:,.0f} training tokens/s"
    )


if __name__ == "__main__":
    main()
