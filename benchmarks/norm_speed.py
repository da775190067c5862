#!/usr/bin/env python3
"""Why RMSNorm slowed chapter 6's model down (chapter 8): the package's RMSNorm, written as
several tensor operations, against PyTorch's `torch.nn.RMSNorm` and `nn.LayerNorm`.

    OMP_NUM_THREADS=1 python benchmarks/norm_speed.py \
        --save src/attnbook/data/benchmark_norm_speed.json    # the record chapter 8 quotes
    python benchmarks/norm_speed.py --rounds 50                # a quick look

Two measurements, both in CPU time of one thread, with the candidates taken in turn,
A B C A B C ..., so that a busy machine slows every candidate alike; each is the median of
`--rounds` rounds after 5 rounds of warm-up:

- the normalisation alone, forward and backward, on activations of the shape chapter 6's
  model normalises, (12, 64, 128);
- a whole training step (forward, backward, AdamW) of chapter 6's model with GPT-2's block
  ("gpt2"), with the package's RMSNorm for every LayerNorm ("rmsnorm"), and with
  `torch.nn.RMSNorm` put in place of the package's ("rmsnorm-torch"), the same weights.

Not a test: the times depend on the machine and its load; the record names both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import torch
from torch import nn

from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT
from attnbook.layers import RMSNorm
from attnbook.text import get_batch

from gpt_ablations import BLOCK, corpus
from gpt_blocks import config

SHAPE = (12, BLOCK, 128)  # (batch, context, width) of chapter 6's model


def with_torch_rmsnorm(model: nn.Module) -> nn.Module:
    """`model` with every `attnbook.layers.RMSNorm` replaced by a `torch.nn.RMSNorm` of
    the same width, eps and gain."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, RMSNorm):
                swap = nn.RMSNorm(child.n_embd, eps=child.eps)
                with torch.no_grad():
                    swap.weight.copy_(child.weight)
                setattr(parent, name, swap)
    return model


def interleaved(steps: dict[str, Callable[[], None]], rounds: int) -> dict[str, float]:
    """Median CPU microseconds of each step function, the functions run in turn."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for i in range(rounds + 5):  # the first 5 rounds warm up
        for name, step in steps.items():
            start = time.process_time()
            step()
            if i >= 5:
                times[name].append(time.process_time() - start)
    return {name: 1e6 * statistics.median(t) for name, t in times.items()}


def norm_alone(rounds: int) -> dict[str, float]:
    """Forward and backward of each normalisation on (12, 64, 128) activations."""
    torch.manual_seed(0)
    x = torch.randn(*SHAPE, requires_grad=True)
    grad = torch.randn(*SHAPE)
    norms = {
        "layernorm (nn.LayerNorm)": nn.LayerNorm(SHAPE[-1], bias=False),
        "rmsnorm (attnbook)": RMSNorm(SHAPE[-1]),
        "rmsnorm (torch.nn.RMSNorm)": nn.RMSNorm(SHAPE[-1], eps=1e-5),
    }

    def step_of(norm: nn.Module) -> Callable[[], None]:
        def step() -> None:
            x.grad = None
            norm.zero_grad(set_to_none=True)
            norm(x).backward(grad)

        return step

    return interleaved({name: step_of(n) for name, n in norms.items()}, rounds)


def training_steps(rounds: int) -> dict[str, float]:
    """One training step of chapter 6's model with each normalisation."""
    vocab, train_data, _ = corpus("shakespeare")
    gen = torch.Generator().manual_seed(0)
    models: dict[str, nn.Module] = {}
    for name, block in (
        ("gpt2", "gpt2"),
        ("rmsnorm", "rmsnorm"),
        ("rmsnorm-torch", "rmsnorm"),
    ):
        torch.manual_seed(0)
        models[name] = GPT(config(block, vocab)).train()
    with_torch_rmsnorm(models["rmsnorm-torch"])
    assert not any(isinstance(m, RMSNorm) for m in models["rmsnorm-torch"].modules())
    optims = {n: torch.optim.AdamW(m.parameters(), lr=3e-4) for n, m in models.items()}
    batch: list[tuple[torch.Tensor, torch.Tensor]] = []

    def step_of(name: str) -> Callable[[], None]:
        def step() -> None:
            if name == "gpt2":  # a fresh batch once per round, shared by the three
                batch[:] = [get_batch(train_data, BLOCK, SHAPE[0], gen)]
            x, y = batch[0]
            _, loss = models[name](x, y)
            optims[name].zero_grad(set_to_none=True)
            loss.backward()
            optims[name].step()

        return step

    return interleaved({name: step_of(name) for name in models}, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=200, help="interleaved rounds")
    parser.add_argument("--save", default=None, help="write the times as a JSON record")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, {args.rounds} rounds")
    alone = norm_alone(args.rounds)
    for name, us in alone.items():
        print(f"{name:>28}: {us:8.1f} us forward + backward on {SHAPE}")
    steps = training_steps(args.rounds)
    for name, us in steps.items():
        ratio = us / steps["gpt2"]
        print(f"{name:>28}: {us / 1000:8.2f} ms per training step = {ratio:.3f} x gpt2")
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            [0],
            {"norm_alone_us": alone, "training_step_us": steps},
            corpus="shakespeare",
            threads=torch.get_num_threads(),
            rounds=args.rounds,
            shape=list(SHAPE),
            note=(
                "one thread, on a 2-core machine shared with other jobs (nice 5): CPU "
                "time of steps taken in turn, the median of the rounds"
            ),
        )
        print(f"record written to {args.save}")


if __name__ == "__main__":
    main()
