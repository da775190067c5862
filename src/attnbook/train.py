"""The course's one training loop (chapter 6, reused by chapter 7).

`train_loop` runs AdamW (weight decay on matrices only), a learning rate that warms up
linearly and then follows a cosine down to `min_lr`, gradient clipping, and an evaluation
every `eval_interval` steps. What a batch is and how its loss is computed are arguments,
so the same loop trains the tiny GPT of chapter 6 (`train`, random windows of text) and the
car classifiers of chapter 7 (random mini-batches of sentences).

On a GPU (chapter 6, "On a GPU") the loop runs where the model is, or on `device`: batches are
moved there once per step, and the `TrainConfig` fields `amp` (bf16 or fp16 autocast, fp16
with a gradient scaler), `tf32`, `fused_adamw` and `compile` make a step fast. None of them
changes a CPU run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, cast

import torch
from torch import Tensor, nn

from .device import (  # AMP_MODES and autocast_dtype: also for TrainConfig.amp's users
    AMP_MODES,
    DeviceLike,
    TrainingDevice,
    as_device,
    autocast,
    autocast_dtype,
    evaluating,
    model_device,
    place_model,
    tf32,
    to_device,
)
from .text import get_batch
from .train_log import RunLog, TrainResult  # TrainResult: what train_loop returns

__all__ = [
    "TrainConfig",
    "TrainResult",
    "train_loop",
    "train",
    "lr_at",
    "plain_adam",
    "estimate_loss",
    "AMP_MODES",
    "autocast_dtype",
]

_PERFORMANCE_FIELDS = ("amp", "tf32", "fused_adamw", "compile", "step_times")


@dataclass(repr=False)
class TrainConfig:
    """Settings of `train_loop`. Every count must be positive (ValueError naming the field).

    The last five fields only speed up a GPU run (chapter 6, "On a GPU"): `amp` "auto" means
    bf16 autocast on a CUDA GPU that has bf16, fp16 (with a gradient scaler) on one that does
    not (a T4), and no autocast elsewhere; `tf32` lets CUDA float32 matmuls use TF32; `compile`
    runs the model through `torch.compile`; `step_times` synchronises after every step and
    records its time in `TrainResult.step_seconds` (for benchmarks). The repr shows them only
    when they differ from their defaults.
    """

    max_iters: int = 2000
    batch_size: int = 12
    learning_rate: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 100
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.99)
    grad_clip: float = 1.0  # 0 = no clipping
    eval_interval: int = 250
    eval_iters: int = 20  # batches per loss estimate (language models)
    max_seconds: float | None = None  # stop once this much training time has passed
    seed: int = 0
    progress: bool = False  # a tqdm bar on stderr (noise in a stored page)
    amp: str = "auto"  # one of AMP_MODES: autocast dtype of the forward pass
    tf32: bool = True  # CUDA float32 matmuls in TF32 (10 mantissa bits, faster)
    fused_adamw: bool = True  # AdamW's fused kernel where the device has one
    compile: bool = False  # torch.compile the model (minutes of compiling)
    step_times: bool = False  # each step's synchronised time in step_seconds

    def __repr__(self) -> str:
        shown = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.name not in _PERFORMANCE_FIELDS or getattr(self, f.name) != f.default
        ]
        return f"TrainConfig({', '.join(shown)})"

    def __post_init__(self) -> None:
        for name in ("max_iters", "batch_size", "eval_interval", "eval_iters"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        for name in ("learning_rate", "min_lr", "weight_decay", "grad_clip"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if self.learning_rate == 0:
            raise ValueError("learning_rate must be > 0, got 0")
        if not isinstance(self.warmup_iters, int) or self.warmup_iters < 0:
            raise ValueError(
                f"warmup_iters must be a non-negative int, got {self.warmup_iters!r}"
            )
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise ValueError(
                f"max_seconds must be > 0 or None, got {self.max_seconds!r}"
            )
        if len(self.betas) != 2 or not all(0.0 <= b < 1.0 for b in self.betas):
            raise ValueError(f"betas must be two numbers in [0, 1), got {self.betas!r}")
        if self.amp not in AMP_MODES:
            raise ValueError(f"amp must be one of {AMP_MODES}, got {self.amp!r}")
        for name in ("tf32", "fused_adamw", "compile", "step_times", "progress"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(
                    f"{name} must be True or False, got {getattr(self, name)!r}"
                )


def plain_adam(steps: int, batch_size: int, lr: float, seed: int = 0) -> TrainConfig:
    """`train_loop` settings for plain Adam at a constant rate: no warm-up, decay, weight
    decay or clipping (the small heads of chapters 1 and 3:
    `lookup`, `marked_pairs`, `cross`)."""
    if steps < 1 or lr <= 0:
        raise ValueError(f"need steps >= 1 and lr > 0, got steps={steps}, lr={lr}")
    return TrainConfig(
        max_iters=steps,
        batch_size=batch_size,
        learning_rate=lr,
        min_lr=lr,
        warmup_iters=0,
        weight_decay=0.0,
        betas=(0.9, 0.999),
        grad_clip=0.0,
        eval_interval=steps,
        seed=seed,
    )


def lr_at(it: int, cfg: TrainConfig) -> float:
    """Linear warm-up to learning_rate, then cosine decay to min_lr at max_iters
    (chapter 6)."""
    if it < cfg.warmup_iters:
        return cfg.learning_rate * (it + 1) / cfg.warmup_iters
    progress = min(
        1.0, (it - cfg.warmup_iters) / max(1, cfg.max_iters - cfg.warmup_iters)
    )
    return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (
        cfg.learning_rate - cfg.min_lr
    )


def _optimizer(
    model: nn.Module, cfg: TrainConfig, device: torch.device
) -> torch.optim.Optimizer:
    """AdamW with weight decay on matrices only (not on LayerNorm gains or biases); fused
    where the device has the kernel (torch checks only at the first step)."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {
            "params": [p for p in params if p.dim() >= 2],
            "weight_decay": cfg.weight_decay,
        },
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    if cfg.fused_adamw and device.type in ("cpu", "cuda", "mps"):
        try:
            return torch.optim.AdamW(
                groups, lr=cfg.learning_rate, betas=cfg.betas, fused=True
            )
        # older torch, or no fused AdamW on this device
        except (RuntimeError, TypeError):
            pass
    return torch.optim.AdamW(groups, lr=cfg.learning_rate, betas=cfg.betas)


Batch = tuple[Tensor, ...]


def _model_loss(model: nn.Module, batch: Batch) -> Tensor:
    return model(*batch)[1]  # a GPT returns (logits, loss)


def train_loop(
    model: nn.Module,
    next_batch: Callable[[torch.Generator], Batch],
    cfg: TrainConfig,
    loss_fn: Callable[[nn.Module, Batch], Tensor] = _model_loss,
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None,
    device: DeviceLike | None = None,
) -> TrainResult:
    """Train `model` for cfg.max_iters steps (chapter 6).

    next_batch(generator) returns one batch (a tuple of tensors) drawn with the generator
    seeded by cfg.seed; loss_fn(model, batch) returns the scalar loss (default: the second
    output of `model(*batch)`, as `GPT` returns it). evaluate(model), run in eval mode without
    gradients at step 0, every eval_interval steps and at the end, returns named metrics for
    the history. The model is left in eval mode.

    device: where to train (the model is moved there; default: where the model is). Each
    batch is moved there once per step; amp, compile and tf32: `device.TrainingDevice`.
    """
    run = TrainingDevice(model, device, cfg.amp, cfg.compile)
    optimizer = _optimizer(model, cfg, run.device)
    batches = torch.Generator().manual_seed(cfg.seed)
    log = RunLog(model, cfg, evaluate, run.device)
    model.train()
    with tf32(cfg.tf32, run.device):
        log.evaluate(0)
        for it in range(cfg.max_iters):
            for group in optimizer.param_groups:
                group["lr"] = lr_at(it, cfg)
            loss = run.loss(loss_fn, next_batch(batches))  # a batch, its loss
            optimizer.zero_grad(set_to_none=True)
            run.backward(loss, optimizer)  # the gradients
            if cfg.grad_clip:
                nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            run.step(optimizer)  # one step of AdamW
            if log.step_done(it + 1, loss):  # True: out of time
                break
    model.eval()
    return log.finish()


@torch.no_grad()
def estimate_loss(
    model: nn.Module,
    data: Tensor,
    block_size: int,
    batch_size: int,
    iters: int,
    generator: torch.Generator,
    device: DeviceLike | None = None,
    amp: str = "none",
) -> float:
    """Mean cross-entropy (nats per token) over `iters` random batches, computed on `device`
    (default: the model's) under the autocast of `amp`; the host waits for the GPU once
    (chapters 6 and 8)."""
    dev = model_device(model) if device is None else as_device(device)
    ctx = autocast(autocast_dtype(amp, dev), dev)
    losses = []
    with evaluating(model), ctx:
        for _ in range(iters):
            batch = get_batch(data, block_size, batch_size, generator, device=dev)
            losses.append(model(*batch)[1])
    values = (
        torch.stack(losses).float().cpu().tolist()
    )  # one transfer, not one per batch
    return sum(values) / len(values)


def train(
    model: nn.Module,
    train_data: Tensor,
    val_data: Tensor,
    cfg: TrainConfig,
    device: DeviceLike | None = None,
) -> TrainResult:
    """`train_loop` for a language model (a `GPT`, chapter 6): batches of random windows of
    train_data; the history records train_loss and val_loss estimated on eval_iters batches.

    device: where to train (default: where the model is). The token ids are copied there
    once, so each batch is gathered on the device itself."""
    block_size = int(cast(Any, model).config.block_size)  # a GPT's context length
    dev = place_model(model, device)
    train_data, val_data = to_device((train_data, val_data), dev)
    eval_gen = torch.Generator().manual_seed(cfg.seed + 1)

    def evaluate(m: nn.Module) -> dict[str, float]:
        return {
            name: estimate_loss(
                m,
                data,
                block_size,
                cfg.batch_size,
                cfg.eval_iters,
                eval_gen,
                device=dev,
                amp=cfg.amp,
            )
            for name, data in (("train_loss", train_data), ("val_loss", val_data))
        }

    result = train_loop(
        model,
        lambda g: get_batch(train_data, block_size, cfg.batch_size, g),
        cfg,
        evaluate=evaluate,
    )
    result.tokens_per_second = (
        result.iters * cfg.batch_size * block_size / max(result.train_seconds, 1e-9)
    )
    return result
