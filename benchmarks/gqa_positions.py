#!/usr/bin/env python3
"""The larger versions of chapter 8's two trainings: key/value heads, and position schemes
beyond the trained length, with several seeds (chapter 8).

    python benchmarks/gqa_positions.py gqa        # 4 / 2 / 1 key/value heads: val loss, cache bytes
    python benchmarks/gqa_positions.py positions  # learned / sinusoidal / rope / alibi at 1x, 2x, 4x
    python benchmarks/gqa_positions.py all        # both (the learned model is the 4-KV-heads one)

    python benchmarks/gqa_positions.py all --steps 400 --seeds 0,1,2,3,4 --workers 16 \
        --save src/attnbook/data/benchmark_gqa_positions.json   # the record chapter 8 quotes

Default size: 2 layers, 4 query heads, width 128, trained on windows of 64 characters of
chapter 6's corpus (Tiny Shakespeare as shipped; --corpus python for the standard library), 800 steps of 16 windows, seeds 0, 1, 2; evaluation on 16 batches of
16 validation windows of 64, 128 and 256 characters. Prints mean and standard deviation over
the seeds. Not a test: run it on an otherwise idle machine and put the tables in the issue note.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache

import torch

from attnbook.gpt import GPT, GPTConfig
from attnbook.gqa import kv_cache_bytes
from attnbook.data import write_benchmark_record
from attnbook.text import (
    CORPORA,
    CharTokenizer,
    get_batch,
    load_corpus,
    split_train_val,
)
from attnbook.train import TrainConfig, estimate_loss, train_loop


@lru_cache(maxsize=1)
def corpus(name: str) -> tuple[int, torch.Tensor, torch.Tensor]:
    """Vocabulary size, training and validation ids of a corpus (90 / 10 split)."""
    text = load_corpus(name)
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    return tok.vocab_size, train_data, val_data


def run(args: argparse.Namespace, seed: int, options: dict) -> list[float]:
    """Train one model (GPTConfig `options`) with one seed; validation loss at 1x, 2x, 4x."""
    torch.set_num_threads(args.threads)
    vocab, train_data, val_data = corpus(args.corpus)
    lengths = [args.train_len, 2 * args.train_len, 4 * args.train_len]
    schedule = dict(
        max_iters=args.steps,
        batch_size=16,
        learning_rate=3e-3,
        min_lr=3e-4,
        warmup_iters=args.steps // 10,
        eval_interval=args.steps,
        eval_iters=1,
    )
    config = GPTConfig(
        vocab_size=vocab,
        block_size=lengths[-1],
        n_layer=args.layers,
        n_head=4,
        n_embd=args.width,
        **options,
    )
    torch.manual_seed(seed)
    model = GPT(config)
    start = time.perf_counter()
    train_loop(
        model,
        lambda g: get_batch(train_data, args.train_len, 16, g),
        TrainConfig(seed=seed, **schedule),
    )  # type: ignore[arg-type]
    losses = [
        estimate_loss(model, val_data, n, 16, 16, torch.Generator().manual_seed(n))
        for n in lengths
    ]
    print(
        f"  seed {seed} {options}: {time.perf_counter() - start:.0f} s, "
        + ", ".join(f"{n}: {loss:.3f}" for n, loss in zip(lengths, losses)),
        flush=True,
    )
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("what", choices=["gqa", "positions", "all"])
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--train-len", type=int, default=64)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1 is faster for small models)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="runs in parallel processes"
    )
    parser.add_argument("--corpus", default="shakespeare", choices=CORPORA)
    parser.add_argument("--save", default=None, help="write the runs as a JSON record")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    lengths = [args.train_len, 2 * args.train_len, 4 * args.train_len]
    print(
        f"torch {torch.__version__}, {args.threads} thread(s); {args.layers} layers, width "
        f"{args.width}, {args.steps} steps, train window {args.train_len}, seeds {seeds}, "
        f"corpus {args.corpus}, {args.workers} worker(s)"
    )
    jobs: dict[str, dict] = {}
    if args.what in ("gqa", "all"):
        jobs.update({f"kv{n_kv}": {"n_kv_head": n_kv} for n_kv in (4, 2, 1)})
    if args.what in ("positions", "all"):
        if "kv4" not in jobs:
            jobs["learned"] = {}
        jobs.update(
            {
                scheme: {"positions": scheme}
                for scheme in ("sinusoidal", "rope", "alibi")
            }
        )
    with ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        futures = {
            (name, seed): pool.submit(run, args, seed, options)
            for name, options in jobs.items()
            for seed in seeds
        }
        results = {
            name: [futures[name, seed].result() for seed in seeds] for name in jobs
        }

    def summary(runs: list[list[float]], i: int) -> str:
        values = [r[i] for r in runs]
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):.3f} ± {sd:.3f}"

    if args.what in ("gqa", "all"):
        d_head = args.width // 4
        print(
            f"\n| KV heads | val loss ({args.train_len} chars) | cache bytes per token (float32) "
            "| cache at 1k tokens |"
        )
        print("| --- | --- | --- | --- |")
        for n_kv in (4, 2, 1):
            per_token = kv_cache_bytes(1, args.layers, n_kv, d_head, 4)
            print(
                f"| {n_kv} | {summary(results[f'kv{n_kv}'], 0)} | {per_token:,} | {1024 * per_token:,} |"
            )
    if args.what in ("positions", "all"):
        runs = {"learned": results.get("kv4") or results["learned"]}
        runs.update(
            {scheme: results[scheme] for scheme in ("sinusoidal", "rope", "alibi")}
        )
        print("\n| positions | " + " | ".join(f"{n} chars" for n in lengths) + " |")
        print("| --- |" + " --- |" * len(lengths))
        for scheme, r in runs.items():
            print(
                f"| {scheme} | "
                + " | ".join(summary(r, i) for i in range(len(lengths)))
                + " |"
            )
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            seeds,
            {name: dict(zip(map(str, seeds), r)) for name, r in results.items()},
            corpus=args.corpus,
            eval_lengths=lengths,
            steps=args.steps,
        )
        print(f"record written to {args.save}")


if __name__ == "__main__":
    main()
