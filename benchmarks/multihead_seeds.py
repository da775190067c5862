#!/usr/bin/env python3
"""Chapter 3's seed sweep of the two-marked-letters task: one and two heads, ten seeds each.

    python benchmarks/multihead_seeds.py      # writes src/attnbook/data/benchmark_multihead_seeds.json

For seeds 0-9 and 1 and 2 heads: `TwoQuestionLayer(6, d_model=16, n_head=heads)` initialised
with `torch.manual_seed(seed)`, trained by `train_two_questions(steps=400, seed=seed + 1)` on one
thread, exactly the runs chapter 3 trained live before it trained only seeds 0-2. Each run's
record: the worse question's accuracy on the chapter's test set, each head's preference
(weight on the first mark minus weight on the second), the steps until the mean loss of ten
steps falls below 0.05, the mean per-query gap between the weights on the two marks, the
accuracy of the weaker question on 8 to 128 letters, and for one head the split by the first
mark's letter and where its weight sits (for runs that stall). Not a test: run it by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from attnbook.data import write_benchmark_record
from attnbook.marked_pairs import (
    TwoQuestionLayer,
    marked_pair_batch,
    train_two_questions,
    weight_on_marks,
)

N_LETTERS, LENGTH, D_MODEL = 6, 8, 16
LENGTHS = [8, 16, 32, 64, 128]
OUT = Path(__file__).resolve().parents[1] / "src/attnbook/data"


def steps_to_learn(losses: list[float], below: float = 0.05, window: int = 10) -> int:
    """First step at which the mean loss of the last `window` steps is below `below`."""
    means = torch.tensor(losses).unfold(0, window, 1).mean(-1)
    hits = (means < below).nonzero()
    return int(hits[0]) + window if len(hits) else len(losses)


def measure(model: TwoQuestionLayer, losses: list[float], test) -> dict:
    """Everything chapter 3 reads off one trained layer (`test`: its test set)."""
    tokens, marked, answers = test
    on_marks, acc = weight_on_marks(model, *test)
    with torch.no_grad():
        _, w = model(tokens)  # (B, H, T, T)
    rows = torch.arange(len(tokens))[:, None]
    on_both = w.permute(0, 3, 1, 2)[rows, marked]  # (B, 2 marks, H, T)
    sweep = []
    for n in LENGTHS:
        gen = torch.Generator().manual_seed(101)
        batch = marked_pair_batch(1000 if n <= 64 else 250, n, N_LETTERS, gen)
        sweep.append(weight_on_marks(model, *batch)[1].min().item())
    run = {
        "acc": acc.tolist(),
        "on_marks": on_marks.tolist(),
        "preferences": (on_marks[:, 0] - on_marks[:, 1]).tolist(),
        "steps": steps_to_learn(losses),
        "gap": (on_both[:, 0] - on_both[:, 1]).abs().mean().item(),
        "sweep": sweep,
    }
    if model.attn.n_head == 1:
        first_minus_second = (on_both[:, 0, 0] - on_both[:, 1, 0]).mean(-1)  # (B,)
        run["by_first_letter"] = [
            first_minus_second[answers[:, 0] == c].mean().item()
            for c in range(N_LETTERS)
        ]
        a_first = on_both[:, 0, 0]  # (B, T): each query's weight on the first mark
        run["slope"] = (a_first * (1 - a_first)).mean().item()
    return run


def main() -> None:
    seeds = list(range(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
    torch.set_num_threads(1)
    test = marked_pair_batch(
        1000, LENGTH, N_LETTERS, torch.Generator().manual_seed(100)
    )
    results = []
    for seed in seeds:
        for heads in (1, 2):
            _ = torch.manual_seed(seed)
            model = TwoQuestionLayer(N_LETTERS, d_model=D_MODEL, n_head=heads)
            losses = train_two_questions(model, steps=400, seed=seed + 1)
            run = {"seed": seed, "heads": heads, **measure(model, losses, test)}
            results.append(run)
            print(
                seed,
                heads,
                round(min(run["acc"]), 3),
                run["steps"],
                [round(a, 3) for a in run["sweep"]],
            )
    write_benchmark_record(
        str(OUT / "benchmark_multihead_seeds.json"),
        "python " + " ".join(sys.argv),
        seeds,
        results,
        lengths=LENGTHS,
        threads=torch.get_num_threads(),
    )


if __name__ == "__main__":
    main()
