#!/usr/bin/env python3
"""Train the tiny RoPE GPT that chapter 9 ships and streams with (chapter 9).

    python benchmarks/serving_model.py --steps 1500 --seed 0 \
        --save src/attnbook/data/ch9_rope_gpt.pt     # the weights the chapter loads

Size: 4 layers, 4 heads, width 64, rotary positions, trained on windows of 64 characters of
Tiny Shakespeare as shipped (90 / 10 split, chapter 6's tokenizer), batches of 16, AdamW with
chapter 6's schedule, one thread. The weights are stored in float16 (about 400 KB) and a JSON
record beside them (`benchmark_serving_model.json`) holds this command, the versions, the
machine and the validation loss of the float16 weights. Not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch import Tensor

from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT, GPTConfig
from attnbook.text import (
    CharTokenizer,
    get_batch,
    load_tiny_shakespeare,
    split_train_val,
)
from attnbook.train import TrainConfig, estimate_loss, train_loop

CONFIG = dict(block_size=64, n_layer=4, n_head=4, n_embd=64, positions="rope")


def shakespeare_split() -> tuple[CharTokenizer, Tensor, Tensor]:
    """The shipped Tiny Shakespeare, chapter 6's tokenizer and its 90 / 10 split (one thread)."""
    torch.set_num_threads(1)
    text = load_tiny_shakespeare()
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    return tok, train_data, val_data


def train_tiny(model: GPT, train_data: Tensor, steps: int, seed: int) -> float:
    """Chapter 6's schedule on windows of 64, batches of 16; returns the seconds it took."""
    start = time.perf_counter()
    schedule = TrainConfig(
        max_iters=steps,
        batch_size=16,
        learning_rate=3e-3,
        min_lr=3e-4,
        warmup_iters=steps // 10,
        eval_interval=steps,
        eval_iters=1,
        seed=seed,
    )
    train_loop(model, lambda g: get_batch(train_data, 64, 16, g), schedule)
    return time.perf_counter() - start


def validation_loss(model: GPT, val_data: Tensor) -> float:
    """Mean loss on 32 batches of 16 validation windows of 64 (a fixed generator)."""
    return estimate_loss(model, val_data, 64, 16, 32, torch.Generator().manual_seed(1))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--save", default=None, help="where to write the float16 weights"
    )
    args = parser.parse_args()
    tok, train_data, val_data = shakespeare_split()
    config = GPTConfig(vocab_size=tok.vocab_size, **CONFIG)  # type: ignore[arg-type]
    torch.manual_seed(args.seed)
    model = GPT(config)
    seconds = train_tiny(model, train_data, args.steps, args.seed)
    model.half().float()  # what the shipped float16 weights compute
    val = validation_loss(model, val_data)
    print(
        f"torch {torch.__version__}: {args.steps} steps in {seconds:.0f} s, val loss {val:.3f} "
        f"({model.num_parameters():,} parameters)"
    )
    if args.save:
        state = {name: t.half() for name, t in model.state_dict().items()}
        torch.save({"config": CONFIG, "state_dict": state}, args.save)
        record = str(Path(args.save).with_name("benchmark_serving_model.json"))
        write_benchmark_record(
            record,
            "python " + " ".join(sys.argv),
            [args.seed],
            {"val_loss": val, "train_seconds": seconds},
            steps=args.steps,
            config=CONFIG,
            weights=Path(args.save).name,
        )
        print(f"weights written to {args.save}, record to {record}")


if __name__ == "__main__":
    main()
