#!/usr/bin/env python3
"""What depth, warm-up, residuals, LayerNorm and dropout do to chapter 6's tiny GPT.

    python benchmarks/gpt_ablations.py                  # every variant, seeds 0 and 1
    python benchmarks/gpt_ablations.py --only base,4-layers --seeds 0
    python benchmarks/gpt_ablations.py --long 4000      # also the chapter's model for 4000 steps
    python benchmarks/gpt_ablations.py --seeds 0 --steps 3   # every variant runs (quick)
    python benchmarks/gpt_ablations.py --workers 16 --long 3000 \
        --save src/attnbook/data/benchmark_gpt_ablations.json   # the record chapter 6 quotes
    OMP_NUM_THREADS=1 python benchmarks/gpt_ablations.py --threads 1 --seeds 2 \
        --long 3000 --long-seeds 2 \
        --add-to src/attnbook/data/benchmark_gpt_ablations.json   # a seed added to it

Every variant trains on the chapter's corpus (Tiny Shakespeare as shipped; --corpus python
for the standard-library source) with the chapter's settings (2 layers,
4 heads, width 128, context 64, batch 12, learning rate 3e-3 -> 3e-4, 100 warm-up steps,
1000 steps) except for the one thing it changes. Each is scored on the *whole* validation
text, cut into consecutive windows of 64 characters (every character scored once, context
from its window only), next to the n-gram yardsticks of `attnbook.ngram` on the same split.
Training and each CPU's rounding move the numbers by a few hundredths: compare variants
across seeds, not single runs. Not a test: run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache

import torch
from torch import Tensor, nn

from attnbook.gpt import GPT, Block, GPTConfig
from attnbook.multihead import KVCache
from attnbook.ngram import ngram_losses
from attnbook.data import source_commit, write_benchmark_record
from attnbook.text import CORPORA, CharTokenizer, load_corpus, split_train_val
from attnbook.train import TrainConfig, train

BLOCK = 64


class PostLNBlock(Block):
    """The original transformer's order: add, then normalise (no final LayerNorm needed)."""

    def forward(
        self,
        x: Tensor,
        kv_cache: KVCache | None = None,
        key_mask: Tensor | None = None,
        positions: Tensor | None = None,
    ) -> Tensor:
        """x (B, T, C) -> (B, T, C), as `Block.forward` (its attention sub-layer)."""
        a = self.attention(x, kv_cache, key_mask, positions)  # (B, T, C)
        x = self.ln_1(x + self.dropout(a))  # (B, T, C)
        return self.ln_2(x + self.mlp(x))  # (B, T, C)


class NoResidualBlock(Block):
    """Pre-LN block whose two steps replace the stream instead of adding to it."""

    def forward(
        self,
        x: Tensor,
        kv_cache: KVCache | None = None,
        key_mask: Tensor | None = None,
        positions: Tensor | None = None,
    ) -> Tensor:
        """x (B, T, C) -> (B, T, C), as `Block.forward` (its attention sub-layer)."""
        x = self.dropout(self.attention(self.ln_1(x), kv_cache, key_mask, positions))
        return self.mlp(self.ln_2(x))  # (B, T, C)


def build(variant: str, vocab: int) -> GPT:
    """Chapter 6's model with `variant`'s one change (a name of VARIANTS)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    layers = 4 if variant.startswith("4-layers") else 2
    dropout = 0.2 if variant == "dropout-0.2" else 0.0
    model = GPT(
        GPTConfig(
            vocab_size=vocab,
            block_size=BLOCK,
            n_layer=layers,
            n_head=4,
            n_embd=128,
            dropout=dropout,
        )
    )
    # the variant's blocks keep the base model's parameters (the same initialisation for a
    # seed) and take its class, whose forward has Block.forward's signature
    if variant.startswith("post-ln"):
        for block in model.blocks:
            block.__class__ = PostLNBlock
        model.ln_f = nn.Identity()
    elif variant == "no-residuals":
        for block in model.blocks:
            block.__class__ = NoResidualBlock
    elif variant == "no-layernorm":
        for block in model.blocks:
            block.ln_1, block.ln_2 = nn.Identity(), nn.Identity()
        model.ln_f = nn.Identity()
    return model


VARIANTS = {  # name: (what changes, max_iters, warmup_iters)
    "base": ("the chapter's model", 1000, 100),
    "no-warmup": ("no warm-up (full learning rate from step 0)", 1000, 0),
    "4-layers": ("4 layers, same 1000 steps (about twice the compute)", 1000, 100),
    "4-layers-500": ("4 layers, 500 steps (about the same compute)", 500, 50),
    "post-ln": ("post-LayerNorm, as the original transformer", 1000, 100),
    "post-ln-no-warmup": ("post-LayerNorm without warm-up", 1000, 0),
    "no-residuals": ("no residual connections", 1000, 100),
    "no-layernorm": ("no LayerNorm at all", 1000, 100),
    "dropout-0.2": ("dropout 0.2 (nanoGPT's baby GPT)", 1000, 100),
}


@torch.no_grad()
def full_val_loss(model: GPT, val: Tensor) -> tuple[float, float, list[float]]:
    """Mean cross-entropy over every character of `val` in consecutive windows of BLOCK,
    over window positions 16-63 only (at least 17 characters of context), and by span of
    positions (0, 1, 2, 3-15, 16-63: 1, 2, 3, 4-16, 17-64 characters of context)."""
    model.eval()
    n = (len(val) - 1) // BLOCK
    x = val[: n * BLOCK].view(n, BLOCK)  # (n, T)
    y = val[1 : n * BLOCK + 1].view(n, BLOCK)  # (n, T)
    losses = []
    for s in range(0, n, 256):
        logits, _ = model(x[s : s + 256])
        losses.append(
            nn.functional.cross_entropy(
                logits.transpose(1, 2), y[s : s + 256], reduction="none"
            )
        )  # (b, T)
    per_pos = torch.cat(losses)  # (n, T)
    spans = [
        per_pos[:, a:b].mean().item()
        for a, b in ((0, 1), (1, 2), (2, 3), (3, 16), (16, 64))
    ]
    return per_pos.mean().item(), per_pos[:, 16:].mean().item(), spans


@lru_cache(maxsize=1)
def corpus(name: str) -> tuple[int, Tensor, Tensor]:
    """Vocabulary size, training and validation ids of a corpus (90 / 10 split)."""
    text = load_corpus(name)
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    return tok.vocab_size, train_data, val_data


def run(
    variant: str, seed: int, corpus_name: str, threads: int, max_steps: int = 0
) -> dict:
    """Train one variant with one seed (at most `max_steps` steps if given); its losses on
    the whole validation text."""
    if threads:
        torch.set_num_threads(threads)
    vocab, train_data, val_data = corpus(corpus_name)
    if variant.startswith("base-"):
        steps, warmup, name = int(variant.split("-")[1]), 100, "base"
    else:
        _, steps, warmup = VARIANTS[variant]
        name = variant
    if max_steps:
        steps, warmup = min(steps, max_steps), min(warmup, max_steps)
    torch.manual_seed(seed)
    model = build(name, vocab)
    cfg = TrainConfig(
        max_iters=steps,
        batch_size=12,
        learning_rate=3e-3,
        min_lr=3e-4,
        warmup_iters=warmup,
        eval_interval=10**9,
        eval_iters=1,
        seed=seed,
    )
    start = time.perf_counter()
    result = train(model, train_data, val_data, cfg)
    wall = time.perf_counter() - start
    all_pos, late, spans = full_val_loss(model, val_data)
    return {
        "variant": variant,
        "seed": seed,
        "steps": steps,
        "train_seconds": result.train_seconds,
        "wall_seconds": wall,
        "val": all_pos,
        "val_17_plus": late,
        "val_by_context": dict(zip(["1", "2", "3", "4-16", "17-64"], spans)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", default=",".join(VARIANTS), help="comma-separated variants"
    )
    parser.add_argument("--seeds", default="0,1", help="comma-separated seeds")
    parser.add_argument(
        "--long", type=int, default=0, help="also train the base model this long"
    )
    parser.add_argument(
        "--long-first", action="store_true", help="run the long training first"
    )
    parser.add_argument("--long-seeds", default="0", help="seeds of the long training")
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch threads (0: torch's default; 1 with --workers)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="runs in parallel processes"
    )
    parser.add_argument("--corpus", default="shakespeare", choices=CORPORA)
    parser.add_argument(
        "--steps",
        type=int,
        default=0,
        help="train each run at most this many steps (a quick check that every variant runs)",
    )
    parser.add_argument("--save", default=None, help="write the runs as a JSON record")
    parser.add_argument(
        "--add-to",
        default=None,
        help="append the runs to this record (after each run), noting where they ran",
    )
    args = parser.parse_args()
    if args.steps and (args.save or args.add_to):
        parser.error("--steps is a quick check: its runs are not written to a record")
    threads = args.threads or (1 if args.workers > 1 else 0)
    if threads:
        torch.set_num_threads(threads)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads per run, "
        f"{args.workers} worker(s), corpus {args.corpus}"
    )

    vocab, train_data, val_data = corpus(args.corpus)
    ladder = ngram_losses(train_data, val_data, vocab, max_n=5)
    print(
        "n-gram yardsticks (nats/char, whole validation text): "
        + ", ".join(f"{n + 1}-gram {loss:.3f}" for n, loss in enumerate(ladder))
    )

    seeds = [int(s) for s in args.seeds.split(",")]
    runs = [(v, s) for v in args.only.split(",") for s in seeds]
    if args.long:
        long_runs = [(f"base-{args.long}", int(s)) for s in args.long_seeds.split(",")]
        runs = long_runs + runs if args.long_first else runs + long_runs
    print(
        f"{'variant':18s} {'seed':>4} {'steps':>5} {'train s':>8} {'val (all)':>9} "
        f"{'val (16+)':>9} {'ppl':>6}"
    )
    results = []
    with ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        futures = [
            pool.submit(run, v, s, args.corpus, threads, args.steps) for v, s in runs
        ]
        for future in futures:
            r = future.result()
            results.append(r)
            print(
                f"{r['variant']:18s} {r['seed']:4d} {r['steps']:5d} {r['train_seconds']:8.1f} "
                f"{r['val']:9.3f} {r['val_17_plus']:9.3f} {math.exp(r['val']):6.2f}   "
                f"({r['wall_seconds']:.0f} s wall; by context 1/2/3/4-16/17-64: "
                f"{' '.join(f'{x:.3f}' for x in r['val_by_context'].values())})",
                flush=True,
            )
            if args.add_to:
                add_to(args.add_to, results, ladder)
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            seeds,
            results,
            corpus=args.corpus,
            ngram_losses=ladder,
        )
        print(f"record written to {args.save}")


def add_to(path: str, results: list[dict], ladder: list[float]) -> None:
    """Append `results` to the record at `path` (runs of the same variant and seed are
    replaced, and struck from the "added" entry that listed them), add their seeds to its
    "seeds", and list under "added" the command, versions, commit and machine that
    produced them."""
    import json
    import os
    import platform

    import numpy

    with open(path, encoding="utf-8") as f:
        record = json.load(f)
    assert all(abs(a - b) < 1e-9 for a, b in zip(record["ngram_losses"], ladder))
    command = "python " + " ".join(sys.argv)
    added = [a for a in record.get("added", []) if a["command"] != command]
    new = {(r["variant"], r["seed"]) for r in results}
    record["results"] = [
        r for r in record["results"] if (r["variant"], r["seed"]) not in new
    ]
    record["results"] += results
    record["seeds"] = sorted({r["seed"] for r in record["results"]})
    for entry in added:
        kept = [r for r in entry["runs"] if (r["variant"], r["seed"]) not in new]
        if len(kept) < len(entry["runs"]):
            entry["replaced"] = entry.get("replaced", []) + [
                r for r in entry["runs"] if (r["variant"], r["seed"]) in new
            ]
            entry["runs"] = kept
    added.append(
        {
            "command": command,
            "runs": [{"variant": r["variant"], "seed": r["seed"]} for r in results],
            "versions": {
                "python": platform.python_version(),
                "torch": torch.__version__,
                "numpy": numpy.__version__,
            },
            "commit": source_commit(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores",
            "threads": torch.get_num_threads(),
            "date": time.strftime("%Y-%m-%d"),
        }
    )
    record["added"] = added
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
