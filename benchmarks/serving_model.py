#!/usr/bin/env python3
"""Train the tiny RoPE GPT that chapter 9 ships and streams with (chapter 9).

    python benchmarks/serving_model.py --steps 1500 --seed 0 \
        --save src/attnbook/data/ch9_rope_gpt.pt     # the weights the chapter loads

Size: 4 layers, 4 heads, width 64, rotary positions, trained on windows of 64 characters of
Tiny Shakespeare as shipped (90 / 10 split, chapter 6's tokenizer), batches of 16, AdamW with
chapter 6's schedule, one thread. The weights are stored in float16 (about 400 KB) and a JSON
record beside them (`benchmark_serving_model.json`) holds this command, the versions, the
machine and the validation loss of the float16 weights. Not a test: run it by hand.

    python benchmarks/serving_model.py --steps 1500 --seed 0 --start-token \
        --save src/attnbook/data/ch9_sink_gpt.pt     # the second model, where a sink can form

`--start-token` adds one token to the vocabulary (id = the tokenizer's vocab_size) and begins
every training and validation window with it, followed by 63 characters: the first key is
then the same token in every window, the condition under which StreamingLLM saw a sink form.
The record is then `benchmark_serving_sink_model.json`; `--record sink_model_long` names
another (the same model trained for 4000 steps: `ch9_sink_gpt_long.pt`).
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


def start_token_batch(
    data: Tensor, generator: torch.Generator, start_id: int
) -> tuple[Tensor, Tensor]:
    """16 windows (16, 64): the start token, then 63 characters; targets shifted by one."""
    x, y = get_batch(data, 63, 16, generator)  # (16, 63) each
    start = torch.full((16, 1), start_id, dtype=x.dtype)
    return torch.cat([start, x], dim=1), torch.cat([x[:, :1], y], dim=1)


def train_tiny(
    model: GPT,
    train_data: Tensor,
    steps: int,
    seed: int,
    start_id: int | None = None,
) -> float:
    """Chapter 6's schedule on windows of 64, batches of 16 (each opened by `start_id` if
    given); returns the seconds it took."""
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
    if start_id is None:
        train_loop(model, lambda g: get_batch(train_data, 64, 16, g), schedule)
    else:
        train_loop(
            model, lambda g: start_token_batch(train_data, g, start_id), schedule
        )
    return time.perf_counter() - start


def validation_loss(model: GPT, val_data: Tensor, start_id: int | None = None) -> float:
    """Mean loss on 32 batches of 16 validation windows of 64 (a fixed generator), each
    opened by `start_id` if given."""
    generator = torch.Generator().manual_seed(1)
    if start_id is None:
        return estimate_loss(model, val_data, 64, 16, 32, generator)
    with torch.no_grad():
        losses = [
            float(model(*start_token_batch(val_data, generator, start_id))[1])
            for _ in range(32)
        ]
    return sum(losses) / len(losses)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--save", default=None, help="where to write the float16 weights"
    )
    parser.add_argument(
        "--start-token",
        action="store_true",
        help="open every window with a start token",
    )
    args = parser.parse_args()
    tok, train_data, val_data = shakespeare_split()
    start_id = tok.vocab_size if args.start_token else None
    vocab_size = tok.vocab_size + (1 if args.start_token else 0)
    config = GPTConfig(vocab_size=vocab_size, **CONFIG)  # type: ignore[arg-type]
    torch.manual_seed(args.seed)
    model = GPT(config)
    seconds = train_tiny(model, train_data, args.steps, args.seed, start_id)
    model.half().float()  # what the shipped float16 weights compute
    val = validation_loss(model, val_data, start_id)
    print(
        f"torch {torch.__version__}: {args.steps} steps in {seconds:.0f} s, val loss {val:.3f} "
        f"({model.num_parameters():,} parameters)"
    )
    if args.save:
        state = {name: t.half() for name, t in model.state_dict().items()}
        saved = {"config": CONFIG, "state_dict": state, "start_id": start_id}
        torch.save(saved, args.save)
        name = args.record or ("sink_model" if args.start_token else "model")
        record = str(Path(args.save).with_name(f"benchmark_serving_{name}.json"))
        write_benchmark_record(
            record,
            "python " + " ".join(sys.argv),
            [args.seed],
            {"val_loss": val, "train_seconds": seconds},
            steps=args.steps,
            config=CONFIG,
            weights=Path(args.save).name,
            start_id=start_id,
        )
        print(f"weights written to {args.save}, record to {record}")


if __name__ == "__main__":
    main()
