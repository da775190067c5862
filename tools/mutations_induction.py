"""The mutations of `tools.mutations` in chapter 10's code: the circuit scores, the run layer
(metrics, ablation, the recipe) and the hooks."""

from __future__ import annotations

from tools.mutation_spec import Mutation

INDUCTION = ("tests/test_induction.py", "tests/test_hooks.py")

MUTATIONS = [
    Mutation(
        "copying-score-embedding-and-unembedding-swapped",
        "induction.py",
        "small = attn.W_v.weight[rows] @ W_E.T @ W_U @ attn.W_o.weight[:, rows]",
        "small = attn.W_v.weight[rows] @ W_U.T @ W_E @ attn.W_o.weight[:, rows]",
        INDUCTION,
    ),
    Mutation(
        "in-context-score-early-mean-over-late",
        "induction.py",
        "return float(losses[-late:].mean() - losses[:early].mean())",
        "return float(losses[-late:].mean() - losses[:late].mean())",
        INDUCTION,
    ),
    Mutation(
        "induction-metric-is-the-mean-head",
        "induction_run.py",
        '"induction": float(scores.max()),',
        '"induction": float(scores.mean()),',
        INDUCTION,
    ),
    Mutation(
        "mean-ablation-by-the-first-sequence",
        "induction_run.py",
        'value = 0.0 if mode == "zero" else z[:, :, head].mean(0)',
        'value = 0.0 if mode == "zero" else z[0, :, head]',
        INDUCTION,
    ),
    Mutation(
        "chapter-recipe-without-decay",
        "induction_run.py",
        "min_lr=1e-3,",
        "min_lr=1e-2,",
        INDUCTION,
    ),
    Mutation(
        "ablation-writes-into-the-layer-s-tensor",
        "hooks.py",
        "z = args[0].clone()  # (B, T, H * d_head)",
        "z = args[0]  # (B, T, H * d_head)",
        INDUCTION,
    ),
    Mutation(
        "transition-window-excludes-its-end",
        "induction_run.py",
        "fastest = max([0.0, *(fall for gap, fall in pairs if gap <= window)])",
        "fastest = max([0.0, *(fall for gap, fall in pairs if gap < window)])",
        INDUCTION,
    ),
]
