#!/usr/bin/env python3
"""Induction heads over seeds: the phase change, the one-layer control, the initialisation
and the fixed-length trap (chapter 10).

    OMP_NUM_THREADS=1 python benchmarks/induction_phase.py --seeds 0 1 2 \
        --save src/attnbook/data/benchmark_induction_phase.json   # the record chapter 10 quotes
    OMP_NUM_THREADS=1 python benchmarks/induction_phase.py --seeds 0 1 2 3 4 \
        --only gpt2-init-long \
        --save src/attnbook/data/benchmark_induction_long.json   # its second record
    OMP_NUM_THREADS=1 python benchmarks/induction_phase.py --seeds 5 6 7 \
        --only two-layer,smeared,fixed-trap,one-layer \
        --save src/attnbook/data/benchmark_induction_newseeds.json   # fresh seeds: the
        # chapter's margins, checked by tests/test_induction_new_seeds.py
    python benchmarks/induction_phase.py --seeds 0 --only two-layer   # one run, printed

Every run uses the chapter's recipe (`attnbook.induction_run`: the task, a model of 2 heads
per layer and width 32, `chapter_train_config`, 600 steps) and changes one thing:

    two-layer     the chapter's model; then its heads' scores, zero and mean ablation of
                  each head, the induction scores with the strongest previous-token head
                  ablated, that head removed from layer 1's queries, keys or values only
                  (`attnbook.circuits.path_ablation`), the K-composition scores, the
                  token-level K and OV circuits' top-1 accuracy (trained and at
                  initialisation) and the repeat loss over period n and prefix m
    one-layer     the control: one layer
    gpt2-init     two layers with every weight, embeddings included, drawn from N(0, 0.02),
                  on the same 600-step schedule
    gpt2-init-long  the same on a 3000-step schedule (--gpt2-steps): when it forms at all
    fixed-trap    one layer trained on a fixed period of 8: loss on repeats of 8 and 11
    smeared       one layer with Olsson et al.'s smeared keys (`attnbook.attn_only`)

Not a test: the numbers move with the seed and the CPU's rounding; compare across seeds.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time

import torch

from attnbook.circuits import (
    ov_circuit,
    path_ablation,
    repeat_loss_grid,
    token_k_circuit,
    top1_diagonal,
)
from attnbook.data import write_benchmark_record
from attnbook.hooks import ablate_heads, attention_layers, attention_weights
from attnbook.induction import (
    copy_losses,
    induction_score,
    k_composition,
    loss_per_position,
    repeated_tokens,
)
from attnbook.induction_run import (
    InductionTask,
    ablation_effects,
    chapter_model,
    chapter_train_config,
    head_scores,
    train_on_repeats,
)

RUNS = (
    "two-layer",
    "one-layer",
    "gpt2-init",
    "gpt2-init-long",
    "fixed-trap",
    "smeared",
)
PERIODS = list(range(3, 12))  # the sweep of the repeat's period n ...
PREFIXES = [0, 2, 4, 8, 12]  # ... and of the random tokens m before it
TASK = InductionTask()
TRAP = InductionTask(min_period=8, max_period=8, eval_n=8)


def repeat_loss(model: torch.nn.Module, n: int, seed: int = 99) -> float:
    """Loss on the second copy of 64 fresh repeated batches of n tokens."""
    rep = repeated_tokens(64, n, TASK.vocab_size, torch.Generator().manual_seed(seed))
    return copy_losses(loss_per_position(model, rep), n)[1]


def formed_at(history: list[dict]) -> int | None:
    """The first evaluated step whose repeat loss is below half the first-copy loss."""
    return next(
        (h["iter"] for h in history if h["loss_repeat"] < 0.5 * h["loss_first"]), None
    )


def summary(result, steps_kept: int | None = None) -> dict:
    losses = result.step_losses[:steps_kept]
    return {
        "history": [
            {k: (round(v, 4) if isinstance(v, float) else v) for k, v in h.items()}
            for h in result.history
        ],
        "step_losses": [round(v, 4) for v in losses],
        "formed_at": formed_at(result.history),
        "train_seconds": round(result.train_seconds, 2),
        "steps": result.iters,
    }


def circuits(model, H: int) -> dict:
    """Top-1 accuracy of the token-level K circuit (reader x writer) and OV circuits."""
    return {
        "k_circuit_top1": [
            [top1_diagonal(token_k_circuit(model, r, w)) for w in range(H)]
            for r in range(H)
        ],
        "ov_circuit_top1": [
            [top1_diagonal(ov_circuit(model, layer, h).T) for h in range(H)]
            for layer in range(2)
        ],
    }


def analyse(model, untrained, rep: torch.Tensor, n: int) -> dict:
    """The two-layer model's heads: scores, ablations, K-composition, circuits, sweep."""
    scores = head_scores(model, rep, n)
    prev_head = int(scores["previous_token"][0].argmax())
    with ablate_heads(model, {(0, prev_head): 0.0}):
        ablated = induction_score(attention_weights(model, rep)[1], n)
    layers = attention_layers(model)
    paths = {}
    for name in ("", "qkv", "k", "q", "v"):
        logits, weights = path_ablation(model, rep, prev_head, name)
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].transpose(1, 2), rep[:, 1:], reduction="none"
        ).mean(0)
        paths[name or "none"] = {
            "induction": float(induction_score(weights, n).max()),
            "loss_repeat": copy_losses(loss, n)[1],
        }
    H = model.config.n_head
    grid = repeat_loss_grid(
        model, PERIODS, PREFIXES, TASK.vocab_size, 256, torch.Generator().manual_seed(7)
    )
    return {
        **{k: v.tolist() for k, v in scores.items()},
        "zero_ablation": ablation_effects(model, rep, n, "zero").tolist(),
        "mean_ablation": ablation_effects(model, rep, n, "mean").tolist(),
        "previous_token_head": prev_head,
        "induction_after_ablating_it": ablated.tolist(),
        "k_composition": k_composition(layers[1], layers[0]).tolist(),
        "repeat_loss_n": {str(m): repeat_loss(model, m) for m in (5, 8, 11)},
        "path_ablation": paths,
        "trained": circuits(model, H),
        "untrained": circuits(untrained, H),
        "sweep": {
            "periods": PERIODS,
            "prefixes": PREFIXES,
            "loss": [
                [None if v != v else round(v, 4) for v in row] for row in grid.tolist()
            ],
        },
    }


def run(name: str, seed: int, gpt2_steps: int) -> dict:
    start = time.perf_counter()
    if name == "two-layer":
        model = chapter_model(TASK, 2, "default", seed)
        untrained = chapter_model(TASK, 2, "default", seed)
        result = train_on_repeats(model, TASK, chapter_train_config(seed))
        rep = TASK.eval_data()[0]
        analysis = analyse(model, untrained, rep, TASK.eval_n)
        out = {**summary(result), "analysis": analysis}
    elif name == "one-layer":
        model = chapter_model(TASK, 1, "default", seed)
        result = train_on_repeats(model, TASK, chapter_train_config(seed))
        out = {
            **summary(result),
            "repeat_loss_n": {str(m): repeat_loss(model, m) for m in (5, 8, 11)},
        }
    elif name in ("gpt2-init", "gpt2-init-long"):
        model = chapter_model(TASK, 2, "gpt2", seed)
        steps = 600 if name == "gpt2-init" else gpt2_steps
        cfg = chapter_train_config(seed, steps=steps)
        result = train_on_repeats(model, TASK, cfg)
        out = summary(result, steps_kept=0)  # the per-step losses are not plotted
    elif name == "smeared":
        model = chapter_model(TASK, 1, "default", seed, smear_keys=True)
        result = train_on_repeats(model, TASK, chapter_train_config(seed))
        out = {
            **summary(result, steps_kept=0),
            "repeat_loss_n": {str(m): repeat_loss(model, m) for m in (5, 8, 11)},
            "own_key_weight": model.layers[0].smear_weights().tolist(),
        }
    elif name == "fixed-trap":
        model = chapter_model(TRAP, 1, "default", seed)
        result = train_on_repeats(model, TRAP, chapter_train_config(seed))
        out = {
            **summary(result, steps_kept=0),
            "repeat_loss_n": {str(m): repeat_loss(model, m) for m in (5, 8, 11)},
        }
    else:
        raise ValueError(f"unknown run {name!r}; runs: {RUNS}")
    out["wall_seconds"] = round(time.perf_counter() - start, 1)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--only", default=",".join(RUNS))
    parser.add_argument("--gpt2-steps", type=int, default=3000)
    parser.add_argument("--save", help="write the record here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    names = args.only.split(",")
    results: dict = {name: {} for name in names}
    for name in names:
        for seed in args.seeds:
            out = run(name, seed, args.gpt2_steps)
            results[name][str(seed)] = out
            last = out["history"][-1] if out.get("history") else {}
            shown = {
                k: last[k]
                for k in ("loss_first", "loss_repeat", "induction")
                if k in last
            }
            print(
                f"{name} seed {seed}: formed at {out.get('formed_at')}, final "
                f"{ {k: round(v, 3) for k, v in shown.items()} }, "
                f"repeat loss by n {out.get('repeat_loss_n') or out.get('analysis', {}).get('repeat_loss_n')}, "
                f"{out['wall_seconds']} s",
                flush=True,
            )
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(["benchmarks/induction_phase.py", *sys.argv[1:]]),
            args.seeds,
            results,
            threads=torch.get_num_threads(),
            task=dataclasses.asdict(TASK),
            ln_vocab=math.log(TASK.vocab_size - 1),
        )


if __name__ == "__main__":
    main()
