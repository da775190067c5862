"""A reusable training loop for the tiny GPT (chapter 6): AdamW, warm-up then cosine decay,
periodic evaluation on a validation split, a tqdm progress bar, loss history, tokens/second.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from torch import Tensor, nn
from tqdm import tqdm  # the text bar: widget bars would need JavaScript from a CDN in the book

from .text import get_batch

__all__ = ["TrainConfig", "TrainResult", "train", "estimate_loss", "unigram_loss", "plot_losses"]


@dataclass
class TrainConfig:
    max_iters: int = 2000
    batch_size: int = 12
    learning_rate: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 100
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.99)
    grad_clip: float = 1.0
    eval_interval: int = 250
    eval_iters: int = 20
    max_seconds: float | None = None  # stop early once this much training time has passed
    seed: int = 0
    progress: bool = True


@dataclass
class TrainResult:
    history: list[dict] = field(default_factory=list)  # one row per evaluation
    iters: int = 0
    train_seconds: float = 0.0  # time spent in training steps (evaluations excluded)
    tokens_per_second: float = 0.0

    @property
    def final_val_loss(self) -> float:
        return self.history[-1]["val_loss"]


def lr_at(it: int, cfg: TrainConfig) -> float:
    """Linear warm-up to learning_rate, then cosine decay to min_lr at max_iters."""
    if it < cfg.warmup_iters:
        return cfg.learning_rate * (it + 1) / cfg.warmup_iters
    progress = min(1.0, (it - cfg.warmup_iters) / max(1, cfg.max_iters - cfg.warmup_iters))
    return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (cfg.learning_rate - cfg.min_lr)


@torch.no_grad()
def estimate_loss(model: nn.Module, data: Tensor, block_size: int, batch_size: int, iters: int,
                  generator: torch.Generator) -> float:
    """Mean cross-entropy (nats per token) over `iters` random batches."""
    was_training = model.training
    model.eval()
    losses = [model(*get_batch(data, block_size, batch_size, generator))[1].item() for _ in range(iters)]
    model.train(was_training)
    return sum(losses) / len(losses)


def unigram_loss(train_data: Tensor, val_data: Tensor, vocab_size: int) -> float:
    """Cross-entropy on val_data of a model that ignores context: token frequencies of
    train_data (add-one smoothed). Any useful language model must beat it."""
    counts = torch.bincount(train_data, minlength=vocab_size).double() + 1.0
    log_p = torch.log(counts / counts.sum())
    return float(-log_p[val_data].mean())


def _optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """AdamW with weight decay on matrices only (not on LayerNorm gains or biases)."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    try:
        return torch.optim.AdamW(groups, lr=cfg.learning_rate, betas=cfg.betas, fused=True)
    except (RuntimeError, TypeError):  # older torch: no fused AdamW on this device
        return torch.optim.AdamW(groups, lr=cfg.learning_rate, betas=cfg.betas)


def train(model: nn.Module, train_data: Tensor, val_data: Tensor, cfg: TrainConfig) -> TrainResult:
    """Train `model` (a `GPT`) on random windows of train_data; evaluate every eval_interval."""
    block_size: int = model.config.block_size  # type: ignore[union-attr,assignment]  # a GPT
    batch_gen = torch.Generator().manual_seed(cfg.seed)
    eval_gen = torch.Generator().manual_seed(cfg.seed + 1)
    opt = _optimizer(model, cfg)
    result = TrainResult()
    model.train()

    def evaluate(it: int) -> None:
        row = {"iter": it,
               "train_loss": estimate_loss(model, train_data, block_size, cfg.batch_size, cfg.eval_iters, eval_gen),
               "val_loss": estimate_loss(model, val_data, block_size, cfg.batch_size, cfg.eval_iters, eval_gen),
               "seconds": result.train_seconds}
        result.history.append(row)
        bar.set_postfix(train=f"{row['train_loss']:.3f}", val=f"{row['val_loss']:.3f}")

    bar = tqdm(range(cfg.max_iters), disable=not cfg.progress, desc="training", unit="it")
    evaluate(0)
    for it in bar:
        start = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = lr_at(it, cfg)
        x, y = get_batch(train_data, block_size, cfg.batch_size, batch_gen)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip:
            nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        result.train_seconds += time.perf_counter() - start
        result.iters = it + 1
        out_of_time = cfg.max_seconds is not None and result.train_seconds >= cfg.max_seconds
        if result.iters % cfg.eval_interval == 0 or result.iters == cfg.max_iters or out_of_time:
            evaluate(result.iters)
        if out_of_time:
            break
    bar.close()
    result.tokens_per_second = result.iters * cfg.batch_size * block_size / max(result.train_seconds, 1e-9)
    model.eval()
    return result


def plot_losses(result: TrainResult, baseline: float | None = None, ax: Axes | None = None) -> Axes:
    """Train and validation loss against iterations (with an optional baseline line)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.8))
    its = [r["iter"] for r in result.history]
    ax.plot(its, [r["train_loss"] for r in result.history], marker="o", label="train")
    ax.plot(its, [r["val_loss"] for r in result.history], marker="o", label="validation")
    if baseline is not None:
        ax.axhline(baseline, color="grey", linestyle="--", label="unigram baseline")
    ax.set_xlabel("iteration")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title("Tiny GPT: loss during training")
    ax.legend()
    return ax
