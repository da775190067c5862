#!/usr/bin/env python3
"""Multi-head latent attention against multi-head attention at the same training budget, with
an MHA arm whose rotary width equals MLA's decoupled part (chapter 9).

    python benchmarks/serving_mla.py --steps 800 --seeds 0 --save /tmp/mla_0.json   # one per seed
    python benchmarks/serving_mla.py --merge /tmp/mla_*.json \
        --save src/attnbook/data/benchmark_serving_mla.json        # the record chapter 9 quotes

Every model: 4 layers, 4 heads, width 64 (d_head 16), windows of 64 characters of Tiny
Shakespeare as shipped, batches of 16, chapter 6's schedule, one thread. Three arms per seed:

    MHA        rotary positions on all 16 features of each head (chapter 8's model)
    MHA-rope8  rotary positions on the first 8 features only, the rest unrotated: the width
               of MLA's decoupled part, so MLA vs MHA-rope8 differs in the cache alone
    MLA        a latent of 32 numbers and a decoupled rotary key of 8 per token and layer
               (d_latent = 2 d_head where DeepSeek-V2 takes 4 d_head, d_rope = d_head / 2)

MHA and MHA-rope8 start from the same weights for a seed. Prints validation loss, parameters
and cached numbers per token. Not a test: run it by hand (one process per seed in parallel).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

import torch

from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT, GPTConfig
from attnbook.latent import cache_numbers_per_token
from serving_model import shakespeare_split, train_tiny, validation_loss

SIZE = dict(block_size=64, n_layer=4, n_head=4, n_embd=64)
D_LATENT, D_ROPE = 32, 8
ARMS = ("MHA", "MHA-rope8", "MLA")


def build(arm: str, vocab_size: int) -> tuple[GPT, int]:
    """The model of one arm and the numbers its cache holds per token (all layers)."""
    config = GPTConfig(vocab_size=vocab_size, positions="rope", **SIZE)  # type: ignore[arg-type]
    if arm == "MLA":
        numbers = cache_numbers_per_token(
            "MLA", 4, 4, 16, d_latent=D_LATENT, d_rope=D_ROPE
        )
        mla = replace(config, attention="mla", d_latent=D_LATENT, rope_dims=D_ROPE)
        return GPT(mla), numbers
    model = GPT(config if arm == "MHA" else replace(config, rope_dims=D_ROPE))
    return model, cache_numbers_per_token("MHA", 4, 4, 16)


def merge(paths: list[str]) -> tuple[list[int], dict, int]:
    """Seeds, results {arm: {seed: ...}} and steps of several per-seed records."""
    seeds: list[int] = []
    results: dict = {arm: {} for arm in ARMS}
    steps = set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        seeds += record["seeds"]
        steps.add(record["steps"])
        for arm, per_seed in record["results"].items():
            results[arm].update(per_seed)
    if len(steps) != 1:
        raise SystemExit(f"the records were trained for different steps: {steps}")
    return sorted(seeds), results, steps.pop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--merge", nargs="+", default=None, help="per-seed records")
    parser.add_argument("--save", default=None, help="write the results as a record")
    args = parser.parse_args()
    if args.merge:
        seeds, results, steps = merge(args.merge)
    else:
        seeds, steps = args.seeds, args.steps
        tok, train_data, val_data = shakespeare_split()
        results = {arm: {} for arm in ARMS}
        for seed in seeds:
            for arm in ARMS:
                torch.manual_seed(seed)
                model, numbers = build(arm, tok.vocab_size)
                seconds = train_tiny(model, train_data, steps, seed)
                val = validation_loss(model, val_data)
                results[arm][str(seed)] = {
                    "val_loss": val,
                    "parameters": model.num_parameters(),
                    "cache_numbers_per_token": numbers,
                    "train_seconds": seconds,
                }
                print(
                    f"seed {seed} {arm}: val loss {val:.3f}, {model.num_parameters():,} "
                    f"parameters, {numbers} cached numbers per token, {seconds:.0f} s",
                    flush=True,
                )
                if args.save:  # after every arm: a stopped run keeps what it finished
                    save(args.save, seeds, results, steps)
    if args.save:
        save(args.save, seeds, results, steps)
        print(f"record written to {args.save}")


def save(path: str, seeds: list[int], results: dict, steps: int) -> None:
    """Write the record of the arms trained so far."""
    write_benchmark_record(
        path,
        "python " + " ".join(sys.argv),
        seeds,
        results,
        steps=steps,
        size=SIZE,
        d_latent=D_LATENT,
        d_rope=D_ROPE,
    )


if __name__ == "__main__":
    main()
