#!/usr/bin/env python3
"""GPT-2's block against today's (RMSNorm + SwiGLU), at chapter 6's budget (chapter 8).

    OMP_NUM_THREADS=1 python benchmarks/gpt_blocks.py \
        --save src/attnbook/data/benchmark_gpt_blocks.json    # the record chapter 8 quotes
    python benchmarks/gpt_blocks.py --only gpt2,rmsnorm-swiglu --seeds 0 --steps 200

Every block trains chapter 6's model with chapter 6's recipe, as `gpt_ablations.py` does
(2 layers, 4 heads, width 128, context 64, batches of 12, learning rate 3e-3 -> 3e-4 with
100 warm-up steps, 1000 steps, the same batches for every block with the same seed), and is
scored on the whole validation text. The blocks differ only in their normalisation and
feed-forward layer; none has biases (the package's default):

    gpt2            LayerNorm, GELU MLP of width 4C (chapter 6's model)
    rmsnorm         RMSNorm for every LayerNorm, GELU MLP
    swiglu          LayerNorm, SwiGLU of width round(2/3 * 4C) = 341 (about the MLP's weights)
    rmsnorm-swiglu  both: the block of LLaMA-style models

Time per step is measured twice: the median of each training run's steps (wall time, one
thread), and afterwards the blocks' training steps interleaved, A B C D A B C D ..., in CPU
time of one thread, so that a busy machine slows every block alike. Not a test: the times
depend on the machine and its load; the record names both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT, GPTConfig
from attnbook.ngram import ngram_losses
from attnbook.text import get_batch
from attnbook.train import TrainConfig, train

from gpt_ablations import BLOCK, corpus, full_val_loss

BLOCKS = {  # name: GPTConfig fields
    "gpt2": {},
    "rmsnorm": {"norm": "rmsnorm"},
    "swiglu": {"mlp": "swiglu"},
    "rmsnorm-swiglu": {"norm": "rmsnorm", "mlp": "swiglu"},
}


def config(block: str, vocab: int) -> GPTConfig:
    """Chapter 6's model with the block `block`."""
    return GPTConfig(
        vocab_size=vocab,
        block_size=BLOCK,
        n_layer=2,
        n_head=4,
        n_embd=128,
        **BLOCKS[block],
    )


def schedule(steps: int, seed: int) -> TrainConfig:
    """Chapter 6's recipe for `steps` steps."""
    return TrainConfig(
        max_iters=steps,
        batch_size=12,
        learning_rate=3e-3,
        min_lr=3e-4,
        warmup_iters=min(100, steps // 10),
        eval_interval=10**9,
        eval_iters=1,
        seed=seed,
        step_times=True,
    )


def run(block: str, seed: int, steps: int) -> dict:
    """Train one block with one seed: its losses on the whole validation text and times."""
    vocab, train_data, val_data = corpus("shakespeare")
    torch.manual_seed(seed)
    model = GPT(config(block, vocab))
    result = train(model, train_data, val_data, schedule(steps, seed))
    all_pos, late, spans = full_val_loss(model, val_data)
    return {
        "block": block,
        "seed": seed,
        "steps": steps,
        "parameters": model.num_parameters(),
        "train_seconds": result.train_seconds,
        "median_step_ms": 1000 * statistics.median(result.step_seconds),
        "final_train_loss": result.history[-1]["train_loss"],
        "val": all_pos,
        "val_17_plus": late,
        "val_by_context": dict(zip(["1", "2", "3", "4-16", "17-64"], spans)),
    }


def interleaved_step_times(blocks: list[str], rounds: int) -> dict[str, float]:
    """Median CPU milliseconds of one training step (forward, backward, AdamW) of each
    block, the blocks' steps taken in turn so that the machine's load hits all alike."""
    vocab, train_data, _ = corpus("shakespeare")
    gen = torch.Generator().manual_seed(0)
    models, optims = {}, {}
    for block in blocks:
        torch.manual_seed(0)
        models[block] = GPT(config(block, vocab)).train()
        optims[block] = torch.optim.AdamW(models[block].parameters(), lr=3e-4)
    times: dict[str, list[float]] = {block: [] for block in blocks}
    for i in range(rounds + 5):  # the first 5 rounds warm up
        x, y = get_batch(train_data, BLOCK, 12, gen)
        for block in blocks:
            start = time.process_time()
            _, loss = models[block](x, y)
            optims[block].zero_grad(set_to_none=True)
            loss.backward()
            optims[block].step()
            if i >= 5:
                times[block].append(time.process_time() - start)
    return {block: 1000 * statistics.median(t) for block, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default=",".join(BLOCKS), help="comma-separated")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=200, help="interleaved steps")
    parser.add_argument("--save", default=None, help="write the runs as a JSON record")
    args = parser.parse_args()
    torch.set_num_threads(1)
    blocks = args.only.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"torch {torch.__version__}, 1 thread, blocks {blocks}, seeds {seeds}")
    vocab, train_data, val_data = corpus("shakespeare")
    ladder = ngram_losses(train_data, val_data, vocab, max_n=5)

    results = []
    # seed-major: every block sees the machine in about the same state
    for seed in seeds:
        for block in blocks:
            r = run(block, seed, args.steps)
            results.append(r)
            print(
                f"{block:15s} seed {seed} {r['parameters']:8,} parameters  "
                f"val {r['val']:.4f}  (17+: {r['val_17_plus']:.4f})  "
                f"median step {r['median_step_ms']:.1f} ms, {r['train_seconds']:.0f} s",
                flush=True,
            )
    step_ms = interleaved_step_times(blocks, args.rounds)
    print(
        "interleaved CPU ms per step: "
        + ", ".join(f"{b} {ms:.2f}" for b, ms in step_ms.items())
    )
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            seeds,
            results,
            corpus="shakespeare",
            threads=torch.get_num_threads(),
            blocks={b: BLOCKS[b] for b in blocks},
            steps=args.steps,
            ngram_losses=ladder,
            interleaved_step_ms=step_ms,
            interleaved_rounds=args.rounds,
            note=(
                "one thread, on a 2-core machine shared with other jobs (nice 5): wall "
                "times (train_seconds, median_step_ms) include waiting for the CPU; "
                "interleaved_step_ms is CPU time of steps taken in turn"
            ),
        )
        print(f"record written to {args.save}")


if __name__ == "__main__":
    main()
