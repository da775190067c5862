#!/usr/bin/env python3
"""The tiny GPT with multi-head latent attention against multi-head attention at the same
training budget (chapter 9).

    python benchmarks/serving_mla.py --steps 1500 --seed 0 \
        --save src/attnbook/data/benchmark_serving_mla.json   # the record chapter 9 quotes

Both models: 4 layers, 4 heads, width 64, windows of 64 characters of Tiny Shakespeare as
shipped, batches of 16, chapter 6's schedule, one thread; the same seed. MHA uses rotary
positions on all 16 features of each head; MLA caches a latent of 32 numbers and a decoupled
rotary key of 8 per token and layer (d_latent = 2 d_head where DeepSeek-V2 takes 4 d_head,
d_rope = d_head / 2 as there): 40 numbers against MHA's 128. Prints validation loss, parameters and cache numbers per token. Not a test.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT, GPTConfig
from attnbook.latent import cache_numbers_per_token, mla_gpt
from serving_model import shakespeare_split, train_tiny, validation_loss

SIZE = dict(block_size=64, n_layer=4, n_head=4, n_embd=64)
D_LATENT, D_ROPE = 32, 8


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--save", default=None, help="write the results as a JSON record"
    )
    args = parser.parse_args()
    tok, train_data, val_data = shakespeare_split()
    vocab_size = tok.vocab_size
    results = {}
    for kind in ("MHA", "MLA"):
        torch.manual_seed(args.seed)
        if kind == "MHA":
            model = GPT(GPTConfig(vocab_size=vocab_size, positions="rope", **SIZE))  # type: ignore[arg-type]
            numbers = cache_numbers_per_token("MHA", 4, 4, 16)
        else:
            model = mla_gpt(
                GPTConfig(vocab_size=vocab_size, positions="none", **SIZE),  # type: ignore[arg-type]
                D_LATENT,
                D_ROPE,
            )
            numbers = cache_numbers_per_token(
                "MLA", 4, 4, 16, d_latent=D_LATENT, d_rope=D_ROPE
            )
        start = time.perf_counter()
        train_tiny(model, train_data, args.steps, args.seed)
        val = validation_loss(model, val_data)
        results[kind] = {
            "val_loss": val,
            "parameters": model.num_parameters(),
            "cache_numbers_per_token": numbers,
            "train_seconds": time.perf_counter() - start,
        }
        print(
            f"{kind}: val loss {val:.3f}, {model.num_parameters():,} parameters, "
            f"{numbers} cached numbers per token, {results[kind]['train_seconds']:.0f} s",
            flush=True,
        )
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            [args.seed],
            results,
            steps=args.steps,
            size=SIZE,
            d_latent=D_LATENT,
            d_rope=D_ROPE,
        )
        print(f"record written to {args.save}")


if __name__ == "__main__":
    main()
