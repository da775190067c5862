#!/usr/bin/env python3
"""Train chapter 6's tiny GPT for its full 1,000 steps and ship the weights (chapter 6).

    python benchmarks/tiny_gpt_model.py --save src/attnbook/data/ch6_tiny_gpt.pt

The model and schedule are chapter 6's: 2 layers, 4 heads, width 128, windows of 64
characters of the shipped Tiny Shakespeare (90 / 10 split), batches of 12, 1,000 AdamW steps
at 3e-3 with 100 warm-up steps and a cosine to 3e-4, seed 0, one thread. The chapter trains
only a short run live and loads these weights for everything after training. The weights are
stored in float16 (about 800 KB); `benchmark_tiny_gpt.json` beside them holds the command,
versions, machine, the run's evaluation history and every step's batch loss (the chapter's
loss curve), its time, and the loss of the float16 weights on the whole validation text.

It also runs the chapter's short live recipe (`SHORT`: 150 steps) on seeds 0-4 and records
its loss estimates, the evidence for the margins of the chapter's asserts on the live run.
Not a test: run it by hand, on an otherwise idle machine if the times matter.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT, GPTConfig
from attnbook.ngram import unigram_loss
from attnbook.text import CharTokenizer, load_corpus, split_train_val
from attnbook.train import TrainConfig, train

MODEL = dict(block_size=64, n_layer=2, n_head=4, n_embd=128)
FULL = dict(
    max_iters=1000,
    batch_size=12,
    learning_rate=3e-3,
    min_lr=3e-4,
    warmup_iters=100,
    eval_interval=100,
    eval_iters=20,
)
SHORT = dict(FULL, max_iters=150, warmup_iters=15, eval_interval=50, eval_iters=10)


def whole_text_loss(model: GPT, ids: Tensor, block_size: int = 64) -> float:
    """Mean cross-entropy over the consecutive windows that cover `ids` (chapter 6's
    `loss_by_position`, averaged): every character scored once, from its own window."""
    n = (len(ids) - 1) // block_size
    x = ids[: n * block_size].view(n, block_size)
    y = ids[1 : n * block_size + 1].view(n, block_size)
    total = 0.0
    with torch.no_grad():
        for s in range(0, n, 256):
            logits = model(x[s : s + 256])[0]
            total += float(
                F.cross_entropy(logits.transpose(1, 2), y[s : s + 256], reduction="sum")
            )
    return total / (n * block_size)


def run(seed: int, schedule: dict, train_data: Tensor, val_data: Tensor, V: int):
    """Chapter 6's model from seed `seed`, trained with `schedule` on one thread."""
    torch.manual_seed(seed)
    model = GPT(GPTConfig(vocab_size=V, **MODEL))  # type: ignore[arg-type]
    config = TrainConfig(**schedule, seed=seed, progress=False)  # type: ignore[arg-type]
    wall, cpu = time.perf_counter(), time.process_time()
    result = train(model, train_data, val_data, config)
    return model, result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--save", required=True, help="where to write the weights")
    parser.add_argument("--short-seeds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    text = load_corpus("shakespeare")
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    V = tok.vocab_size
    model, result, wall, cpu = run(0, FULL, train_data, val_data, V)
    full_loss = whole_text_loss(model, val_data)
    model.half().float()  # what the shipped float16 weights compute
    val16 = whole_text_loss(model, val_data)
    print(
        f"1000 steps: {wall:.0f} s, whole validation text {full_loss:.4f} "
        f"(float16 weights {val16:.4f})"
    )
    state = {name: t.half() for name, t in model.state_dict().items()}
    torch.save({"config": MODEL, "state_dict": state}, args.save)
    short = []
    for seed in range(args.short_seeds):
        _, r, s_wall, _ = run(seed, SHORT, train_data, val_data, V)
        short.append({"seed": seed, "history": r.history, "wall_seconds": s_wall})
        first, last = r.history[0], r.history[-1]
        print(
            f"short run, seed {seed}: train {first['train_loss']:.3f} -> "
            f"{last['train_loss']:.3f}, validation {last['val_loss']:.3f}"
        )
    results = {
        "history": result.history,
        "step_losses": result.step_losses,
        "iters": result.iters,
        "train_seconds": result.train_seconds,
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "tokens_per_second": result.tokens_per_second,
        "val_whole_text": full_loss,
        "val_whole_text_float16": val16,
        "unigram": unigram_loss(train_data, val_data, V),
        "short_runs": short,
    }
    record = str(Path(args.save).with_name("benchmark_tiny_gpt.json"))
    write_benchmark_record(
        record,
        "python " + " ".join(sys.argv),
        [0],
        results,
        model=MODEL,
        schedule=FULL,
        short_schedule=SHORT,
        threads=torch.get_num_threads(),
        weights=Path(args.save).name,
    )
    print(f"weights written to {args.save}, record to {record}")


if __name__ == "__main__":
    main()
