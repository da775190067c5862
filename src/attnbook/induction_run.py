"""Training an attention-only model on repeats, and watching its heads form (chapter 10).

`InductionTask` fixes the data: sequences of `seq_len` random tokens from a vocabulary of
`vocab_size` (token 0 = BOS) in which a segment of length min_period..max_period repeats from
a random start (`induction.repeating_batch`), and the evaluation batch
`induction.repeated_tokens` of `eval_n` tokens twice. `train_on_repeats` trains a model with
the course's loop (`attnbook.train.train_loop`) and records, at every evaluation, the losses on
the first and the repeated copy, the induction scores of the last layer's heads, the
previous-token scores of layer 0's heads and the in-context score; the benchmark `benchmarks/induction_phase.py` and the chapter share it.
"""

from __future__ import annotations

import importlib.resources
import io
from dataclasses import asdict, dataclass
from functools import lru_cache

import torch
from torch import Tensor, nn

from ._checks import positive_float, positive_int
from .attn_only import AttnOnlyConfig, AttnOnlyTransformer
from .hooks import ablate_heads, attention_layers, attention_weights, head_outputs
from .induction import (
    copy_losses,
    copying_score,
    in_context_score,
    induction_score,
    loss_per_position,
    previous_token_score,
    repeated_tokens,
    repeating_batch,
)
from .masks import causal_mask
from .multihead import split_heads
from .train import TrainConfig, TrainResult, train_loop

__all__ = [
    "InductionTask",
    "chapter_model",
    "chapter_train_config",
    "trained_chapter_model",
    "SHIPPED_MODEL",
    "shipped_recipe",
    "induction_metrics",
    "train_on_repeats",
    "head_scores",
    "ablation_effects",
    "repeat_loss_falls",
    "initial_scales",
]


@dataclass(frozen=True)
class InductionTask:
    """The data of chapter 10 (see the module docstring)."""

    vocab_size: int = 64
    seq_len: int = 24
    min_period: int = 3
    max_period: int = 11
    eval_n: int = 11  # the evaluation batch: BOS + eval_n tokens + the same again
    eval_batch: int = 64

    def __post_init__(self) -> None:
        positive_int("eval_batch", self.eval_batch)
        if 1 + 2 * positive_int("eval_n", self.eval_n) > self.seq_len:
            raise ValueError(
                f"1 + 2 * eval_n = {1 + 2 * self.eval_n} must fit in seq_len={self.seq_len}"
            )
        repeating_batch(  # checks the other fields
            1, self.seq_len, self.vocab_size, self.min_period, self.max_period
        )

    def batch(
        self, batch_size: int, generator: torch.Generator
    ) -> tuple[Tensor, Tensor]:
        """Inputs and targets (B, seq_len - 1) each, cut from one `repeating_batch`."""
        x = repeating_batch(
            batch_size,
            self.seq_len,
            self.vocab_size,
            self.min_period,
            self.max_period,
            generator,
        )
        return x[:, :-1], x[:, 1:]

    def eval_data(self, seed: int = 1234) -> tuple[Tensor, Tensor]:
        """The fixed evaluation batches: `repeated_tokens` (eval_batch, 1 + 2 eval_n) and a
        `repeating_batch` (eval_batch, seq_len), drawn from their own seed."""
        g = torch.Generator().manual_seed(seed)
        rep = repeated_tokens(self.eval_batch, self.eval_n, self.vocab_size, g)
        train_like = repeating_batch(
            self.eval_batch,
            self.seq_len,
            self.vocab_size,
            self.min_period,
            self.max_period,
            g,
        )
        return rep, train_like


@torch.no_grad()
def induction_metrics(
    model: nn.Module, task: InductionTask, data: tuple[Tensor, Tensor]
) -> dict[str, float]:
    """On `task.eval_data()`: loss_first and loss_repeat (nats, `copy_losses`), induction
    (the largest induction score among the last layer's heads), induction_sum (their sum),
    previous_token (the largest previous-token score among layer 0's heads) and in_context
    (`in_context_score` on the training-like batch).

    Chapter 10.
    """
    rep, train_like = data
    first, repeat = copy_losses(loss_per_position(model, rep), task.eval_n)
    weights = attention_weights(model, rep)  # n_layer x (B, H, T, T)
    scores = induction_score(weights[-1], task.eval_n)  # (H,)
    return {
        "loss_first": first,
        "loss_repeat": repeat,
        "induction": float(scores.max()),
        "induction_sum": float(scores.sum()),
        "previous_token": float(previous_token_score(weights[0]).max()),
        "in_context": in_context_score(loss_per_position(model, train_like)),
    }


def train_on_repeats(
    model: nn.Module,
    task: InductionTask,
    cfg: TrainConfig,
    eval_seed: int = 1234,
) -> TrainResult:
    """Train `model` on `task.batch(cfg.batch_size, ...)` with `train_loop`; its history
    holds `induction_metrics` every cfg.eval_interval steps, step_losses each step's loss.

    Chapter 10.
    """
    data = task.eval_data(eval_seed)
    return train_loop(
        model,
        lambda g: task.batch(cfg.batch_size, g),
        cfg,
        evaluate=lambda m: induction_metrics(m, task, data),
    )


def chapter_model(
    task: InductionTask,
    n_layer: int = 2,
    init: str = "default",
    seed: int = 0,
    smear_keys: bool = False,
) -> AttnOnlyTransformer:
    """The chapter's model: `n_layer` layers of 2 heads, width 32, initialised from `seed`
    (`smear_keys`: Olsson et al.'s smeared keys in every layer, `attn_only`). The caller's
    random state is left as it was.

    Chapter 10.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return AttnOnlyTransformer(
            AttnOnlyConfig(
                task.vocab_size, task.seq_len, n_layer, 2, 32, init, smear_keys
            )
        )


def chapter_train_config(seed: int = 0, steps: int = 600) -> TrainConfig:
    """The chapter's recipe: batch 32, AdamW at 1e-2 (20 warm-up steps, cosine to 1e-3),
    no weight decay, no clipping, an evaluation every 25 steps.

    Chapter 10.
    """
    return TrainConfig(
        max_iters=steps,
        batch_size=32,
        learning_rate=1e-2,
        min_lr=1e-3,
        warmup_iters=20,
        weight_decay=0.0,
        grad_clip=0.0,
        eval_interval=25,
        seed=seed,
    )


#: The weights of `trained_chapter_model(0)`, shipped in `attnbook.data`
#: (`benchmarks/induction_model.py` trains and writes them; float32, 52 kB).
SHIPPED_MODEL = "ch10_induction_model.pt"


def shipped_recipe(seed: int = 0) -> dict:
    """What the shipped weights were trained with: the task and the training configuration,
    as plain dicts; loading refuses weights whose recipe is not the current one.

    Chapter 10.
    """
    return {
        "task": asdict(InductionTask()),
        "train": asdict(chapter_train_config(seed)),
    }


@lru_cache(maxsize=2)
def trained_chapter_model(seed: int = 0, shipped: bool = True) -> AttnOnlyTransformer:
    """Chapter 10's two-layer model trained with `chapter_train_config(seed)` on
    `InductionTask()`, once per process and then shared (exercise 10's checks read it):
    callers must not train it further or leave hooks on it.

    Seed 0 (with `shipped`) loads the shipped weights: one run of this recipe, so that every
    machine that grades exercise 10 grades on the same model, without 600 steps of training
    (8 s on one thread) in each grading process. Other seeds, or shipped=False, train."""
    task = InductionTask()
    model = chapter_model(task, n_layer=2, seed=seed)
    if seed == 0 and shipped:
        raw = (
            importlib.resources.files("attnbook.data")
            .joinpath(SHIPPED_MODEL)
            .read_bytes()
        )
        saved = torch.load(io.BytesIO(raw), weights_only=True)
        if saved.get("recipe") != shipped_recipe(seed):
            raise RuntimeError(
                f"{SHIPPED_MODEL} was trained with another recipe than "
                "chapter_train_config(0) on InductionTask(): run "
                "benchmarks/induction_model.py to train it again"
            )
        model.load_state_dict(saved["state_dict"])
        return model.eval()
    # On one thread: a model this small gains nothing from a second one, and beside other
    # work (a grader's other lanes) two threads spinning on two busy cores made the same
    # 600 steps 15x slower (8 s on one thread vs 128 s on two at load 5, measured).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train_on_repeats(model, task, chapter_train_config(seed))
    finally:
        torch.set_num_threads(threads)
    return model.eval()


@torch.no_grad()
def head_scores(model: nn.Module, rep: Tensor, n: int) -> dict[str, Tensor]:
    """Per head, on `repeated_tokens` `rep` (B, 1 + 2n): "previous_token", "induction" and
    "copying" (`copying_score` with the model's W_E and W_U), each (n_layer, n_head), of an
    `AttnOnlyTransformer` or of chapter 6's `GPT` (its tied head is W_U) (chapter 10)."""
    weights = attention_weights(model, rep)  # n_layer x (B, H, T, T)
    embed = getattr(model, "tok_emb", None)
    unembed = getattr(model, "unembed", None) or getattr(model, "head", None)
    if not (isinstance(embed, nn.Embedding) and isinstance(unembed, nn.Linear)):
        raise TypeError(
            "head_scores needs a model with an embedding tok_emb and an unembedding "
            f"(unembed or head), got {type(model).__name__}"
        )
    W_E, W_U = embed.weight, unembed.weight
    return {
        "previous_token": torch.stack([previous_token_score(w) for w in weights]),
        "induction": torch.stack([induction_score(w, n) for w in weights]),
        "copying": torch.tensor(
            [
                [copying_score(attn, h, W_E, W_U) for h in range(attn.n_head)]
                for attn in attention_layers(model)
            ]
        ),
    }


@torch.no_grad()
def ablation_effects(
    model: AttnOnlyTransformer, rep: Tensor, n: int, mode: str
) -> Tensor:
    """(n_layer, n_head): how much the loss on the repeated copy (`copy_losses`) rises when
    one head is ablated, `mode` "zero" (it writes 0) or "mean" (it writes its mean output
    over the batch at each position, (T, d_head)).

    Chapter 10.
    """
    if mode not in ("zero", "mean"):
        raise ValueError(f"mode must be 'zero' or 'mean', got {mode!r}")
    base = copy_losses(loss_per_position(model, rep), n)[1]
    outputs = head_outputs(model, rep)  # n_layer x (B, T, H, d_head)
    effects = torch.zeros(len(outputs), outputs[0].shape[2])
    for layer, z in enumerate(outputs):
        for head in range(z.shape[2]):
            value = 0.0 if mode == "zero" else z[:, :, head].mean(0)  # (T, d_head)
            with ablate_heads(model, {(layer, head): value}):
                loss = copy_losses(loss_per_position(model, rep), n)[1]
            effects[layer, head] = loss - base
    return effects


def repeat_loss_falls(
    history: list[dict], window: int = 50, drop: float = 3.0
) -> tuple[float, int | None]:
    """How fast the loss on the repeat fell during training (chapter 10), from the
    evaluations of `train_on_repeats` (dicts with "iter" and "loss_repeat", in step order):
    the largest fall within `window` steps (nats; 0.0 if it only rose), and the fewest steps
    over which it fell by more than `drop` (None: it never did)."""
    window = positive_int("window", window)
    drop = positive_float("drop", drop)
    if not history or any("iter" not in h or "loss_repeat" not in h for h in history):
        raise ValueError(
            "history must be a non-empty list of evaluations with 'iter' and "
            "'loss_repeat' (TrainResult.history of train_on_repeats)"
        )
    steps = [int(h["iter"]) for h in history]
    if any(b <= a for a, b in zip(steps, steps[1:])):
        raise ValueError(f"history must be in increasing step order, got {steps}")
    loss = [float(h["loss_repeat"]) for h in history]
    pairs = [
        (steps[j] - steps[i], loss[i] - loss[j])
        for i in range(len(steps))
        for j in range(i + 1, len(steps))
    ]
    fastest = max([0.0, *(fall for gap, fall in pairs if gap <= window)])
    span = min((gap for gap, fall in pairs if fall > drop), default=None)
    return fastest, span


@torch.no_grad()
def initial_scales(
    task: InductionTask, init: str, seed: int = 0, n_layer: int = 2
) -> dict[str, Tensor]:
    """How large the untrained `chapter_model(task, n_layer, init, seed)` starts, on the
    evaluation batch `task.eval_data()[0]` (B, T): "stream", the residual stream after the
    embeddings (B, T, d_model), and "scores", layer 0's attention scores
    q k^T / sqrt(d_head) of every head on the entries the causal mask keeps (B, H, n) with
    n = T (T + 1) / 2, before the softmax.

    Chapter 10.
    """
    model = chapter_model(task, n_layer, init, seed)  # checks `init`
    rep = task.eval_data()[0]
    stream = model.residual(rep)  # (B, T, d_model)
    attn = attention_layers(model)[0]  # layer 0
    q = split_heads(attn.W_q(stream), attn.n_head)  # (B, H, T, d_head)
    k = split_heads(attn.W_k(stream), attn.n_head)  # (B, H, T, d_head)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5  # (B, H, T, T)
    T = scores.shape[-1]
    kept = causal_mask(T, device=scores.device)  # (T, T): key j <= query i
    return {"stream": stream, "scores": scores[..., kept]}
