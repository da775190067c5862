#!/usr/bin/env python3
"""Throughput and quality of the tiny GPT at nanoGPT's CPU "baby GPT" size (chapter 6).

    python benchmarks/gpt_speed.py                      # throughput on Tiny Shakespeare (shipped)
    python benchmarks/gpt_speed.py --quality [--seconds 110]   # val loss within a time budget
    python benchmarks/gpt_speed.py --shakespeare PATH --quality  # a local copy instead (sha256 checked)
    python benchmarks/gpt_speed.py --nanogpt ../nanoGPT [--steps 150 --rounds 2 --threads 1]
                                   # step times of the package and of nanoGPT, side by side

Size: 4 layers, 4 heads, 128-dim embeddings, block 64, batch 12, no dropout. Reference on
this 2-core machine (shared/data/README.md): nanoGPT reaches validation loss 1.886 on Tiny
Shakespeare after 108 s at about 16,000-16,300 training tokens per second.
Not a test: run it on an otherwise idle machine and put the numbers in the issue note.

Side by side (--nanogpt PATH, a checkout of nanoGPT's public repository; its model.py is
imported from there, nothing of it is copied here): the same model size, the same batches
(`text.get_batch` on the same generator seed), each trained --steps steps per round, the two
alternating for --rounds rounds so that a change in the machine's load hits both. The
package runs `train.train_loop` (step_times=True: each step synchronised and timed); nanoGPT
runs the step of its train.py (its `configure_optimizers`: AdamW, not fused on a CPU; the loss
divided by gradient_accumulation_steps = 1; clipping at 1; gradients set to None), timed
the same way. Reported: each one's median wall time per step over all rounds (the first
step of each round left out: it creates the optimiser state), and the process's CPU time per
step in each round (median over the rounds), which a busy machine disturbs less than the
wall time (with one thread, --threads 1). On cores shared with other busy processes,
two OpenMP threads per process slow both 3-4x: --threads 1 (or OMP_NUM_THREADS=1) avoids it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
from pathlib import Path

import torch

from attnbook.gpt import GPT, GPTConfig
from attnbook.text import (
    CharTokenizer,
    get_batch,
    load_tiny_shakespeare,
    split_train_val,
)
from attnbook.train import TrainConfig, lr_at, train, train_loop

SIZE = dict(block_size=64, n_layer=4, n_head=4, n_embd=128)  # nanoGPT's CPU baby GPT
BATCH = 12


def package_round(model: GPT, data: torch.Tensor, steps: int, seed: int) -> list[float]:
    """`steps` steps of the package's own loop; each step's synchronised time (seconds)."""
    cfg = TrainConfig(
        max_iters=steps,
        batch_size=BATCH,
        eval_interval=10**9,
        seed=seed,
        step_times=True,
    )
    batch = lambda g: get_batch(data, SIZE["block_size"], BATCH, g)  # noqa: E731
    return train_loop(model, batch, cfg).step_seconds[1:]


def nanogpt_round(model, data: torch.Tensor, steps: int, seed: int) -> list[float]:  # type: ignore[no-untyped-def]
    """`steps` steps as nanoGPT's train.py takes them; each step's time (seconds)."""
    cfg = TrainConfig(max_iters=steps)  # the same learning-rate schedule
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its parameter groups
        opt = model.configure_optimizers(0.1, cfg.learning_rate, cfg.betas, "cpu")
    gen = torch.Generator().manual_seed(seed)
    x, y = get_batch(data, SIZE["block_size"], BATCH, gen)
    model.train()
    times = []
    for it in range(steps):
        start = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = lr_at(it, cfg)
        _, loss = model(x, y)
        loss = loss / 1  # its gradient_accumulation_steps
        x, y = get_batch(data, SIZE["block_size"], BATCH, gen)  # the next batch
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
    return times[1:]


def side_by_side(
    path: str, data: torch.Tensor, vocab: int, steps: int, rounds: int
) -> None:
    """Both models trained in alternating rounds; their median step times."""
    sys.path.insert(0, str(Path(path).resolve()))
    import model as nanogpt  # nanoGPT's model.py, from the checkout

    torch.manual_seed(0)
    ours = GPT(GPTConfig(vocab_size=vocab, **SIZE))
    with contextlib.redirect_stdout(io.StringIO()):
        theirs = nanogpt.GPT(
            nanogpt.GPTConfig(vocab_size=vocab, dropout=0.0, bias=False, **SIZE)
        )
    times: dict[str, list[float]] = {"package": [], "nanoGPT": []}
    cpu: dict[str, list[float]] = {"package": [], "nanoGPT": []}  # per step, each round
    for r in range(rounds):
        for name in ("package", "nanoGPT") if r % 2 == 0 else ("nanoGPT", "package"):
            start = time.process_time()
            if name == "package":
                times[name] += package_round(ours, data, steps, seed=r)
            else:
                times[name] += nanogpt_round(theirs, data, steps, seed=r)
            cpu[name].append((time.process_time() - start) / steps)
    tokens = BATCH * SIZE["block_size"]
    for name, t in times.items():
        median, (q1, _, q3) = statistics.median(t), statistics.quantiles(t, n=4)
        print(
            f"{name:8s} wall time per step: median {1000 * median:6.2f} ms (quartiles "
            f"{1000 * q1:.2f}-{1000 * q3:.2f}), {tokens / median:,.0f} training tokens/s; "
            f"CPU time per step {1000 * statistics.median(cpu[name]):.2f} ms "
            f"(median of {rounds} rounds of {steps} steps)"
        )
    for what, pair in (("wall", times), ("CPU", cpu)):
        ratio = statistics.median(pair["package"]) / statistics.median(pair["nanoGPT"])
        print(f"package / nanoGPT, {what} time per step: {ratio:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--shakespeare", help="path of a local Tiny Shakespeare copy (sha256 checked)"
    )
    parser.add_argument(
        "--quality", action="store_true", help="the quality run (default: throughput)"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=110.0,
        help="wall-time budget of the quality run",
    )
    parser.add_argument(
        "--iters", type=int, default=300, help="iterations of the throughput run"
    )
    parser.add_argument(
        "--max-iters", type=int, default=2600, help="schedule length of the quality run"
    )
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument(
        "--nanogpt", metavar="PATH", help="a nanoGPT checkout: step times side by side"
    )
    parser.add_argument(
        "--steps", type=int, default=150, help="steps per side-by-side round"
    )
    parser.add_argument("--rounds", type=int, default=2, help="side-by-side rounds")
    parser.add_argument(
        "--threads", type=int, help="torch.set_num_threads (default: torch's)"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")

    # None: the copy shipped in the package
    text = load_tiny_shakespeare(path=args.shakespeare)
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    model = GPT(
        GPTConfig(
            vocab_size=tok.vocab_size, block_size=64, n_layer=4, n_head=4, n_embd=128
        )
    )
    print(f"{model.num_parameters():,} parameters, vocabulary {tok.vocab_size}")
    if args.nanogpt:
        side_by_side(args.nanogpt, train_data, tok.vocab_size, args.steps, args.rounds)
        return

    if not (args.quality or args.shakespeare):
        cfg = TrainConfig(max_iters=args.iters, eval_interval=10**9, progress=False)
        result = train(model, train_data, val_data, cfg)
        print(
            f"throughput: {result.tokens_per_second:,.0f} training tokens/s "
            f"({result.iters} iterations in {result.train_seconds:.1f} s)"
        )
        return

    start = time.perf_counter()
    cfg = TrainConfig(
        max_iters=args.max_iters,
        learning_rate=args.lr,
        min_lr=args.lr / 10,
        eval_interval=250,
        eval_iters=20,
        progress=False,
        max_seconds=args.seconds - 8.0,
    )  # leave room for the evaluations
    result = train(model, train_data, val_data, cfg)
    wall = time.perf_counter() - start
    for row in result.history:
        print(
            f"iter {row['iter']:5d}  train {row['train_loss']:.4f}  val {row['val_loss']:.4f}  "
            f"({row['seconds']:.1f} s of training)"
        )
    print(
        f"final validation loss {result.final_val_loss:.4f} after {result.iters} iterations, "
        f"{wall:.1f} s wall, {result.tokens_per_second:,.0f} training tokens/s"
    )


if __name__ == "__main__":
    main()
