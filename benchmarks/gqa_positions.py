#!/usr/bin/env python3
"""The larger versions of chapter 8's two trainings: key/value heads, and position schemes
beyond the trained length, with several seeds (chapter 8).

    python benchmarks/gqa_positions.py gqa        # 4 / 2 / 1 key/value heads: val loss, cache bytes
    python benchmarks/gqa_positions.py positions  # learned / sinusoidal / rope / alibi at 1x, 2x, 4x
    python benchmarks/gqa_positions.py all        # both (the learned model is the 4-KV-heads one)

Default size: 2 layers, 4 query heads, width 128, trained on windows of 64 characters of the
Python corpus (chapter 6), 800 steps of 16 windows, seeds 0, 1, 2; evaluation on 16 batches of
16 validation windows of 64, 128 and 256 characters. Prints mean and standard deviation over
the seeds. Not a test: run it on an otherwise idle machine and put the tables in the issue note.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from attnbook.gpt import GPT, GPTConfig
from attnbook.gqa import kv_cache_bytes
from attnbook.text import CharTokenizer, get_batch, load_python_corpus, split_train_val
from attnbook.train import TrainConfig, estimate_loss, train_loop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["gqa", "positions", "all"])
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--train-len", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1 is faster for small models)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")]
    text = load_python_corpus()
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    lengths = [args.train_len, 2 * args.train_len, 4 * args.train_len]
    schedule = dict(max_iters=args.steps, batch_size=16, learning_rate=3e-3, min_lr=3e-4,
                    warmup_iters=args.steps // 10, eval_interval=args.steps, eval_iters=1)

    def run(seed: int, **options: object) -> list[float]:
        config = GPTConfig(vocab_size=tok.vocab_size, block_size=lengths[-1], n_layer=args.layers,
                           n_head=4, n_embd=args.width, **options)  # type: ignore[arg-type]
        torch.manual_seed(seed)
        model = GPT(config)
        start = time.perf_counter()
        train_loop(model, lambda g: get_batch(train_data, args.train_len, 16, g),
                   TrainConfig(seed=seed, **schedule))  # type: ignore[arg-type]
        losses = [estimate_loss(model, val_data, n, 16, 16, torch.Generator().manual_seed(n)) for n in lengths]
        print(f"  seed {seed} {options}: {time.perf_counter() - start:.0f} s, "
              + ", ".join(f"{n}: {loss:.3f}" for n, loss in zip(lengths, losses)), flush=True)
        return losses

    def summary(runs: list[list[float]], i: int) -> str:
        values = [r[i] for r in runs]
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):.3f} ± {sd:.3f}"

    print(f"torch {torch.__version__}, {args.threads} thread(s); {args.layers} layers, width "
          f"{args.width}, {args.steps} steps, train window {args.train_len}, seeds {seeds}")
    results: dict[str, list[list[float]]] = {}
    if args.what in ("gqa", "all"):
        for n_kv in (4, 2, 1):
            results[f"kv{n_kv}"] = [run(seed, n_kv_head=n_kv) for seed in seeds]
        d_head = args.width // 4
        print(f"\n| KV heads | val loss ({args.train_len} chars) | cache bytes per token (float32) "
              "| cache at 1k tokens |")
        print("| --- | --- | --- | --- |")
        for n_kv in (4, 2, 1):
            per_token = kv_cache_bytes(1, args.layers, n_kv, d_head, 4)
            print(f"| {n_kv} | {summary(results[f'kv{n_kv}'], 0)} | {per_token:,} | {1024 * per_token:,} |")
    if args.what in ("positions", "all"):
        runs = {"learned": results.get("kv4") or [run(seed) for seed in seeds]}
        for scheme in ("sinusoidal", "rope", "alibi"):
            runs[scheme] = [run(seed, positions=scheme) for seed in seeds]
        print("\n| positions | " + " | ".join(f"{n} chars" for n in lengths) + " |")
        print("| --- |" + " --- |" * len(lengths))
        for scheme, r in runs.items():
            print(f"| {scheme} | " + " | ".join(summary(r, i) for i in range(len(lengths))) + " |")


if __name__ == "__main__":
    main()
