#!/usr/bin/env python3
"""Chapter 8's two comparisons at chapter 6's longer budget, with several seeds: 4 / 2 / 1
key/value heads, and five position schemes trained on short windows and read on long ones.

    python benchmarks/gqa_positions.py                     # every model, seeds 0, 1, 2
    python benchmarks/gqa_positions.py --only kv4,rope --seeds 0 --steps 300   # a quick look
    OMP_NUM_THREADS=1 python benchmarks/gqa_positions.py --width 96 --seeds 0,1,2 \\
        --save src/attnbook/data/benchmark_gqa_positions.json   # the record chapter 8 reads

The models are chapter 6's GPT trained with chapter 6's recipe (2 layers, 4 query heads,
windows of 64 characters of Tiny Shakespeare, batches of 12, learning rate 3e-3 -> 3e-4 after
100 warm-up steps) for 3000 steps, the length of chapter 6's long run; --width sets the
model width (chapter 6: 128). The models:

    kv4, kv2, kv1   learned positions with 4, 2 and 1 key/value heads (kv4 is chapter 6's
                    model, and the "learned" entry of the position comparison)
    sinusoidal, rope, alibi, none   4 key/value heads with that position scheme
    sinusoidal-unscaled   sinusoidal positions without the x sqrt(width) on the token
                    embeddings (not in the default set; run it with --only and --add-to)

Each is scored on the *whole* validation text cut into consecutive windows of 64, 128 and
256 characters (1x, 2x, 4x the training window), and, inside the 256-character windows, by
position (means over positions 0-63, 64-127, 128-255 and over blocks of 16 positions), so that
the positions beyond the trained length are reported apart from those within it. Each
grouped-query model then generates 248 characters after an 8-character prompt with one
key/value cache per layer (`attnbook.gqa.decode_with_cache`): the record holds the bytes its
caches hold next to `kv_cache_bytes`, and whether its tokens equal those of the uncached path.

For sinusoidal models the run also records the root mean square of the token vectors the
table is added to (scaled or not, over the validation text) and of the table's rows 0-63,
at initialisation and after training. `--add-to RECORD --key KEY` stores the runs under KEY
of an existing record (with their own command and date) and leaves its other runs as they
are, e.g. the scaling check chapter 8 quotes:

    OMP_NUM_THREADS=1 python benchmarks/gqa_positions.py --width 96 --seeds 0,1,2 \
        --only sinusoidal-unscaled,sinusoidal --rms-only sinusoidal \
        --add-to src/attnbook/data/benchmark_gqa_positions.json --key embedding_scale

(--rms-only: models of which only the initial rms is measured, without training, because
the record already holds their trained runs.)

Runs go seed by seed (every model with seed 0, then seed 1, ...), and the record is rewritten
after every run, so an interrupted benchmark leaves whole seeds behind. One thread per run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT, GPTConfig
from attnbook.gqa import decode_with_cache, kv_cache_bytes
from attnbook.ngram import ngram_losses
from attnbook.text import (
    CORPORA,
    CharTokenizer,
    get_batch,
    load_corpus,
    split_train_val,
)
from attnbook.train import TrainConfig, train_loop

MODELS = {  # name: GPTConfig options
    "kv4": {"n_kv_head": 4},
    "kv2": {"n_kv_head": 2},
    "kv1": {"n_kv_head": 1},
    "sinusoidal": {"positions": "sinusoidal"},  # token embeddings x sqrt(width)
    "sinusoidal-unscaled": {"positions": "sinusoidal", "scale_embeddings": False},
    "rope": {"positions": "rope"},
    "alibi": {"positions": "alibi"},
    "none": {"positions": "none"},
}
TRAIN_LEN = 64
EVAL_LENS = (64, 128, 256)
SPANS = {"0-63": (0, 64), "64-127": (64, 128), "128-255": (128, 256)}
PROMPT, DECODE = 8, 248  # 8 + 248 = 256 tokens: the caches end holding 255 positions


@lru_cache(maxsize=1)
def corpus(name: str) -> tuple[int, Tensor, Tensor]:
    """Vocabulary size, training and validation ids of a corpus (90 / 10 split)."""
    text = load_corpus(name)
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    return tok.vocab_size, train_data, val_data


@torch.no_grad()
def loss_by_position(model: GPT, val: Tensor, length: int) -> Tensor:
    """Cross-entropy (n, length) of every character of `val` in consecutive windows of
    `length` characters, each predicted from its own window only."""
    n = (len(val) - 1) // length
    x = val[: n * length].view(n, length)
    y = val[1 : n * length + 1].view(n, length)
    pieces = []
    for s in range(0, n, 64):
        logits, _ = model(x[s : s + 64])  # (b, length, vocab)
        pieces.append(
            F.cross_entropy(logits.transpose(1, 2), y[s : s + 64], reduction="none")
        )
    return torch.cat(pieces)


@torch.no_grad()
def cache_check(model: GPT, val: Tensor, seed: int) -> dict:
    """Generate DECODE characters with the key/value caches, and without; the caches' bytes
    against `kv_cache_bytes`, and whether the two paths drew the same tokens."""
    cfg = model.config
    prompt = val[:PROMPT][None]  # (1, 8)
    start = time.perf_counter()
    ids, caches = decode_with_cache(
        model, prompt, DECODE, torch.Generator().manual_seed(seed)
    )
    cached_s = time.perf_counter() - start
    start = time.perf_counter()
    plain = model.generate(
        prompt, DECODE, generator=torch.Generator().manual_seed(seed), use_cache=False
    )
    plain_s = time.perf_counter() - start
    fed = PROMPT + DECODE - 1
    assert cfg.n_kv_head is not None
    return {
        "positions_cached": len(caches[0]),
        "cache_shape": list(caches[0].k.shape),  # (B, H_kv, T, d_head)
        "measured_bytes": sum(c.nbytes for c in caches),
        "formula_bytes": kv_cache_bytes(
            fed, cfg.n_layer, cfg.n_kv_head, cfg.n_embd // cfg.n_head, 4
        ),
        "same_tokens_as_uncached": bool(torch.equal(ids, plain)),
        "seconds_cached": cached_s,
        "seconds_uncached": plain_s,
    }


@torch.no_grad()
def embedding_rms(model: GPT, val: Tensor) -> dict[str, float]:
    """Root mean square of the token vectors the sinusoidal table is added to (after the
    x sqrt(width) if the model scales them; over the characters of `val`) and of the table's
    rows for the trained positions 0..TRAIN_LEN-1."""
    scale = model.config.embedding_scale or 1.0
    tokens = model.tok_emb(val) * scale  # (len(val), C)
    assert model.pos_emb is not None
    table = model.pos_emb(torch.zeros(1, TRAIN_LEN, model.config.n_embd))[0]  # (64, C)
    token_rms = tokens.pow(2).mean().sqrt().item()
    table_rms = table.pow(2).mean().sqrt().item()
    return {
        "token": token_rms,
        "table": table_rms,
        "table_over_token": table_rms / token_rms,
    }


def build(name: str, seed: int, args: argparse.Namespace) -> GPT:
    """Model `name` of MODELS at width args.width, initialised with `seed`."""
    vocab = corpus(args.corpus)[0]
    config = GPTConfig(
        vocab_size=vocab,
        block_size=max(EVAL_LENS),
        n_layer=2,
        n_head=4,
        n_embd=args.width,
        **MODELS[name],
    )
    torch.manual_seed(seed)
    return GPT(config)


def run(name: str, seed: int, args: argparse.Namespace) -> dict:
    """Train one model with one seed; its validation losses (and cache check)."""
    _, train_data, val_data = corpus(args.corpus)
    model = build(name, seed, args)
    rms_init = embedding_rms(model, val_data) if name.startswith("sinusoidal") else None
    schedule = TrainConfig(
        max_iters=args.steps,
        batch_size=12,
        learning_rate=3e-3,
        min_lr=3e-4,
        warmup_iters=100,
        eval_interval=10**9,  # no estimates during training: the scores below
        eval_iters=1,
        seed=seed,
    )
    start = time.perf_counter()
    result = train_loop(
        model, lambda g: get_batch(train_data, TRAIN_LEN, 12, g), schedule
    )  # windows of 64 characters, shorter than the block_size of 256
    per_pos = {n: loss_by_position(model, val_data, n) for n in EVAL_LENS}
    long = per_pos[max(EVAL_LENS)].mean(0)  # (256,): mean loss at each position
    record = {
        "model": name,
        "seed": seed,
        "train_seconds": result.train_seconds,
        "val": {str(n): per_pos[n].mean().item() for n in EVAL_LENS},
        "val_17_plus": per_pos[TRAIN_LEN][:, 16:].mean().item(),
        "val_256_by_span": {k: long[a:b].mean().item() for k, (a, b) in SPANS.items()},
        "val_256_by_16": long.view(-1, 16).mean(1).tolist(),
    }
    if rms_init is not None:
        record["rms_init"] = rms_init
        record["rms_trained"] = embedding_rms(model, val_data)
    if name.startswith("kv"):
        record["cache"] = cache_check(model, val_data, seed)
    record["wall_seconds"] = time.perf_counter() - start
    return record


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default=",".join(MODELS), help="comma-separated")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--corpus", default="shakespeare", choices=CORPORA)
    parser.add_argument("--save", default=None, help="write the runs as a JSON record")
    parser.add_argument(
        "--add-to", default=None, help="store the runs under --key of this record"
    )
    parser.add_argument("--key", default="added_runs")
    parser.add_argument(
        "--rms-only", default="", help="comma-separated: initial rms, no training"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = [int(s) for s in args.seeds.split(",")]
    names = args.only.split(",")
    vocab, train_data, val_data = corpus(args.corpus)
    ladder = ngram_losses(train_data, val_data, vocab, max_n=5)
    print(
        f"torch {torch.__version__}, 1 thread; width {args.width}, {args.steps} steps, "
        f"seeds {seeds}, models {names}; n-grams 1-5: "
        + ", ".join(f"{x:.3f}" for x in ladder),
        flush=True,
    )
    results: list[dict] = []
    rms_only = [n for n in args.rms_only.split(",") if n]
    for seed in seeds:
        for name in names:
            if name in rms_only:
                model = build(name, seed, args)
                r = {"model": name, "seed": seed, "trained": False}
                r["rms_init"] = embedding_rms(model, val_data)
                results.append(r)
                print(f"{name:10} seed {seed}: rms at init {r['rms_init']}", flush=True)
                if args.add_to:
                    add_to(args, seeds, results)
                continue
            r = run(name, seed, args)
            results.append(r)
            spans = " ".join(f"{v:.3f}" for v in r["val_256_by_span"].values())
            extra = ""
            if "cache" in r:
                c = r["cache"]
                extra = (
                    f"; cache {c['measured_bytes']:,} B (formula {c['formula_bytes']:,}),"
                    f" same tokens: {c['same_tokens_as_uncached']}"
                )
            print(
                f"{name:10} seed {seed}: {r['train_seconds']:.0f} s; val at 64/128/256 "
                + " ".join(f"{v:.3f}" for v in r["val"].values())
                + f"; 256-windows by span {spans}{extra}",
                flush=True,
            )
            if "rms_trained" in r:
                print(f"  rms init {r['rms_init']}, trained {r['rms_trained']}")
            if args.add_to:
                add_to(args, seeds, results)
            if args.save:
                write_benchmark_record(
                    args.save,
                    "python " + " ".join(sys.argv),
                    seeds,
                    results,
                    corpus=args.corpus,
                    steps=args.steps,
                    width=args.width,
                    train_len=TRAIN_LEN,
                    eval_lens=list(EVAL_LENS),
                    ngram_losses=ladder,
                    complete=len(results) == len(seeds) * len(names),
                )


def add_to(args: argparse.Namespace, seeds: list[int], results: list[dict]) -> None:
    """Store `results` under args.key of the record args.add_to, with this run's command,
    date, budget and torch version; the record's other keys stay as they are."""
    with open(args.add_to, encoding="utf-8") as f:
        record = json.load(f)
    assert record["width"] == args.width and record["steps"] == args.steps
    record[args.key] = {
        "command": "python " + " ".join(sys.argv),
        "date": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "seeds": seeds,
        "results": results,
    }
    with open(args.add_to, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
