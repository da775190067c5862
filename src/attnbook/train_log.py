"""What the course's training loop (`attnbook.train`, chapter 6) records of a run: its
`TrainResult` (the evaluations' history, the steps done, the training time and each step's
loss) and the `RunLog` that fills it while `train_loop` runs, with the progress bar and the
time budget. The loop trains; this module only watches and writes down.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import torch
from torch import Tensor, nn

# the text bar: widget bars would need JavaScript from a CDN in the book
from tqdm import tqdm

from .device import evaluating, synchronize

__all__ = ["TrainResult", "RunLog", "Recipe"]


class Recipe(Protocol):
    """What the log reads of a `train.TrainConfig` (chapter 6)."""

    max_iters: int
    eval_interval: int
    max_seconds: float | None
    step_times: bool
    progress: bool


@dataclass
class TrainResult:
    """What `train_loop` returns (chapter 6): one history row per evaluation ({"iter",
    "seconds", and whatever `evaluate` measured}), the steps done, the training time and
    throughput."""

    history: list[dict] = field(default_factory=list)
    iters: int = 0
    train_seconds: float = 0.0  # time spent in training steps (evaluations excluded)
    tokens_per_second: float = 0.0  # set by `train` (language models)
    # each step, with cfg.step_times
    step_seconds: list[float] = field(default_factory=list)
    step_losses: list[float] = field(default_factory=list)  # each step's batch loss

    def final(self, name: str) -> float:
        """The last recorded value of metric `name`."""
        if not self.history or name not in self.history[-1]:
            raise KeyError(
                f"no metric {name!r} recorded; have {sorted(self.history[-1]) if self.history else []}"
            )
        return self.history[-1][name]

    @property
    def final_val_loss(self) -> float:
        return self.final("val_loss")


class RunLog:
    """What `train_loop` records besides the training itself: the history (an evaluation at
    step 0, every eval_interval steps and at the end), the training time (evaluations left
    out; the device's queued work waited for before each reading), each step's loss and, with
    cfg.step_times, each step's synchronised time; the progress bar; the time budget
    (chapter 6)."""

    def __init__(
        self,
        model: nn.Module,
        cfg: Recipe,
        evaluate: Callable[[nn.Module], dict[str, float]] | None,
        device: torch.device,
    ) -> None:
        self.model, self.cfg, self.evaluate_fn, self.device = (
            model,
            cfg,
            evaluate,
            device,
        )
        self.result = TrainResult()
        self.losses: list[Tensor] = []  # each step's loss, read back at the end
        self.since: float | None = None  # start of the current training segment
        self.step_start = 0.0
        self.bar = tqdm(
            total=cfg.max_iters, disable=not cfg.progress, desc="training", unit="it"
        )

    def evaluate(self, it: int) -> None:
        """One history row after `it` steps; its time does not count as training."""
        if self.since is not None:
            synchronize(self.device)
            self.result.train_seconds += time.perf_counter() - self.since
        row: dict = {"iter": it}
        if self.evaluate_fn is not None:
            with evaluating(self.model):
                row.update(self.evaluate_fn(self.model))
            self.bar.set_postfix({k: f"{v:.3f}" for k, v in row.items() if k != "iter"})
        self.result.history.append({**row, "seconds": self.result.train_seconds})
        self.since = time.perf_counter()
        self.step_start = self.since

    def step_done(self, iters: int, loss: Tensor) -> bool:
        """Record a finished step (`iters` steps so far), evaluate when due; True when the
        time budget is spent and the run must stop."""
        cfg, result = self.cfg, self.result
        self.losses.append(loss.detach())
        if cfg.step_times:
            synchronize(self.device)
            result.step_seconds.append(time.perf_counter() - self.step_start)
        result.iters = iters
        self.bar.update()
        elapsed = result.train_seconds + time.perf_counter() - (self.since or 0.0)
        out_of_time = cfg.max_seconds is not None and elapsed >= cfg.max_seconds
        if iters % cfg.eval_interval == 0 or iters == cfg.max_iters or out_of_time:
            self.evaluate(iters)
        elif cfg.step_times:
            self.step_start = time.perf_counter()
        return out_of_time

    def finish(self) -> TrainResult:
        self.bar.close()
        if self.device.type != "meta":  # read back once (a meta tensor holds no number)
            self.result.step_losses = torch.stack(self.losses).float().cpu().tolist()
        return self.result
