"""Where tensors live: CPU, a CUDA GPU or Apple's MPS (chapter 6, "On a GPU").

`pick_device()` chooses the fastest device this machine has (CUDA, then MPS, then the CPU),
unless an argument or the environment variable ATTNBOOK_DEVICE names one. `to_device` moves a
batch once per training step (from pinned memory, without blocking the host, on CUDA).
`synchronize` waits for queued GPU work, so that a timer measures it. `check_float64` gives
the clear error MPS does not: it has no float64. `autocast_dtype`, `autocast`, `tf32` and
`place_model` are the training loop's mixed precision, TF32 and model placement, and
`TrainingDevice` gathers them for `train.train_loop`, so that the loop reads as its four steps.
`evaluating(model)` puts a model in eval mode without gradients (for measuring it, wherever
it lives) and restores its mode on the way out, even on an exception.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import cast

import torch
from torch import Tensor, nn

__all__ = [
    "DEVICE_ENV",
    "DEVICE_TYPES",
    "pick_device",
    "as_device",
    "model_device",
    "to_device",
    "synchronize",
    "check_float64",
    "float64_device",
    "supports_bf16",
    "AMP_MODES",
    "autocast_dtype",
    "autocast",
    "tf32",
    "place_model",
    "TrainingDevice",
    "evaluating",
]

AMP_MODES = ("auto", "none", "bf16", "fp16")  # TrainConfig.amp (chapter 6)

# e.g. ATTNBOOK_DEVICE=cpu forces the CPU on a GPU machine
DEVICE_ENV = "ATTNBOOK_DEVICE"
DEVICE_TYPES = ("cpu", "cuda", "mps", "meta")  # meta: shapes only, no data (tests)

DeviceLike = str | torch.device


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def as_device(device: DeviceLike) -> torch.device:
    """`device` as a torch.device that this machine has; a ValueError naming the problem
    (an unknown name, no such GPU, a CUDA index past the last GPU) otherwise.

    Chapter 6.
    """
    if isinstance(device, bool) or not isinstance(device, (str, torch.device)):
        raise TypeError(
            f"device must be a str or torch.device, got {type(device).__name__} {device!r}"
        )
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ValueError(
            f"unknown device {device!r}: use one of {DEVICE_TYPES} "
            "(optionally with an index, e.g. 'cuda:1')"
        ) from None
    if dev.type not in DEVICE_TYPES:
        raise ValueError(
            f"device {device!r}: attnbook runs on {DEVICE_TYPES}, not {dev.type!r}"
        )
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device {device!r} asked for, but this torch ({torch.__version__}) sees no "
                "CUDA GPU: on Colab choose a GPU runtime, or use 'cpu'"
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(
                f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA "
                f"GPU(s), numbered from 0"
            )
    if dev.type == "mps" and not _mps_available():
        raise ValueError(
            f"device {device!r} asked for, but MPS is not available (it needs Apple "
            "silicon, macOS 12.3+ and a torch built with MPS)"
        )
    return dev


def pick_device(prefer: DeviceLike | None = None) -> torch.device:
    """The device to compute on (chapter 6): `prefer` if given, else the environment variable
    ATTNBOOK_DEVICE if set, else the first of CUDA, MPS and the CPU that is available.
    "auto" (argument or variable) means the automatic choice."""
    if prefer is not None and prefer != "auto":
        return as_device(prefer)
    choice = (
        (os.environ.get(DEVICE_ENV, "").strip() or "auto") if prefer is None else "auto"
    )
    if choice != "auto":
        try:
            return as_device(choice)
        except ValueError as err:
            raise ValueError(
                f"the environment variable {DEVICE_ENV}={choice!r}: {err}"
            ) from None
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def model_device(model: nn.Module) -> torch.device:
    """The device of a model's first parameter (or buffer); the CPU for a model without any.

    Chapter 6.
    """
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return torch.device("cpu")


def to_device(batch: Iterable[Tensor], device: DeviceLike) -> tuple[Tensor, ...]:
    """Each tensor of a batch on `device`. Tensors already there are returned as they are; on
    CUDA a CPU tensor is copied from pinned (page-locked) memory without blocking the host,
    so the next step's Python runs while the copy is under way.

    Chapter 6.
    """
    dev = torch.device(device)
    moved = []
    for t in batch:
        if not isinstance(t, Tensor):
            raise TypeError(f"a batch must hold tensors, got {type(t).__name__}")
        if t.device == dev or (dev.index is None and t.device.type == dev.type):
            moved.append(t)
        elif dev.type == "cuda" and t.device.type == "cpu":
            moved.append(t.pin_memory().to(dev, non_blocking=True))
        else:
            moved.append(t.to(dev))
    return tuple(moved)


def synchronize(device: DeviceLike) -> None:
    """Wait until the work queued on `device` is done (a no-op on the CPU): GPU calls return
    before the GPU has finished, so a timer must call this before it reads the clock.

    Chapter 6.
    """
    dev = torch.device(device)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    elif dev.type == "mps":
        torch.mps.synchronize()


def check_float64(device: DeviceLike, what: str) -> None:
    """A ValueError saying that `what` needs float64, which MPS does not have.

    Chapter 6.
    """
    if torch.device(device).type == "mps":
        raise ValueError(
            f"{what} needs float64, and Apple's MPS has no float64: use float32, or "
            "compute it on the CPU (device='cpu') and move the result"
        )


def float64_device(device: DeviceLike | None) -> torch.device:
    """Where float64 work meant for `device` can run (chapters 5 and 8 build position tables
    in float64): the device itself, or the CPU when it is Apple's MPS, which has no float64;
    the result is then cast and moved to `device`. None means the CPU."""
    dev = torch.device("cpu") if device is None else torch.device(device)
    return torch.device("cpu") if dev.type == "mps" else dev


def supports_bf16(device: DeviceLike) -> bool:
    """Whether autocast to bfloat16 runs fast on `device`: CUDA GPUs from Ampere (A100, RTX 30xx)
    on, and the CPU (slowly, but correctly). A T4 or V100 has no bf16 units: use fp16 there
    (PyTorch's `is_bf16_supported()` says True for them, counting slow emulation).

    Chapter 6.
    """
    dev = torch.device(device)
    if dev.type != "cuda":
        return dev.type == "cpu"
    if not torch.cuda.is_available():
        return False
    try:
        return bool(torch.cuda.is_bf16_supported(including_emulation=False))
    except TypeError:  # a PyTorch before the argument: native bf16 from Ampere (8.0) on
        return torch.cuda.get_device_capability(dev) >= (8, 0)


def autocast_dtype(amp: str, device: DeviceLike) -> torch.dtype | None:
    """The autocast dtype `TrainConfig.amp` means on `device` (None: full float32), or a
    ValueError when the device cannot run it (chapter 6, "On a GPU")."""
    if amp not in AMP_MODES:
        raise ValueError(f"amp must be one of {AMP_MODES}, got {amp!r}")
    dev = torch.device(device)
    if amp == "none" or (amp == "auto" and dev.type != "cuda"):
        return None
    if amp == "auto":
        return torch.bfloat16 if supports_bf16(dev) else torch.float16
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"amp={amp!r} needs a cpu, cuda or mps device, got {dev}")
    if amp == "bf16":
        if dev.type == "cuda" and not supports_bf16(dev):
            raise ValueError(
                f"amp='bf16': {torch.cuda.get_device_name(dev)} has no bfloat16 "
                "(it needs an Ampere GPU or newer); use amp='fp16'"
            )
        return torch.bfloat16
    if dev.type == "cpu":
        raise ValueError(
            "amp='fp16' is for GPUs (with a gradient scaler); on the CPU use 'bf16' or 'none'"
        )
    return torch.float16


def autocast(dtype: torch.dtype | None, device: torch.device) -> AbstractContextManager:
    """Autocast to `dtype` on `device` inside the block, or nothing for None (chapter 6)."""
    return nullcontext() if dtype is None else torch.autocast(device.type, dtype=dtype)


@contextmanager
def tf32(on: bool, device: torch.device) -> Iterator[None]:
    """TF32 matmuls and convolutions on CUDA inside the block; the previous settings after it
    (chapter 6, "On a GPU")."""
    if not (on and device.type == "cuda"):
        yield
        return
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def place_model(model: nn.Module, device: DeviceLike | None) -> torch.device:
    """Move `model` to `device` (default: where it is) and return that device; float64
    parameters on MPS are a clear error (chapter 6)."""
    dev = model_device(model) if device is None else as_device(device)
    if device is not None:
        model.to(dev)
    if any(p.dtype == torch.float64 for p in model.parameters()):
        check_float64(dev, "a model with float64 parameters")
    return dev


class TrainingDevice:
    """Where and in which precision a model trains (chapter 6, "On a GPU"): the device (the
    model is moved there; default: where it is), the autocast dtype of `amp`, one gradient
    scaler, active only with fp16 (disabled, each of its calls is a no-op that costs no
    operation), and the model to call, through `torch.compile` if `compile`."""

    def __init__(
        self,
        model: nn.Module,
        device: DeviceLike | None = None,
        amp: str = "auto",
        compile: bool = False,
    ) -> None:
        self.device = place_model(model, device)
        self.dtype = autocast_dtype(amp, self.device)
        self.scaler = torch.amp.GradScaler(
            self.device.type, enabled=self.dtype == torch.float16
        )
        self.model = cast(nn.Module, torch.compile(model)) if compile else model

    def loss(
        self,
        loss_fn: Callable[[nn.Module, tuple[Tensor, ...]], Tensor],
        batch: Iterable[Tensor],
    ) -> Tensor:
        """loss_fn(model, batch) with the batch moved here, under autocast."""
        with autocast(self.dtype, self.device):
            return loss_fn(self.model, to_device(batch, self.device))

    def backward(self, loss: Tensor, optimizer: torch.optim.Optimizer) -> None:
        """Gradients of `loss`, scaled against fp16 underflow and then unscaled, so that
        clipping sees the true ones."""
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        """The optimiser's step (skipped by the scaler when an fp16 gradient overflowed)."""
        self.scaler.step(optimizer)
        self.scaler.update()


@contextmanager
def evaluating(model: nn.Module) -> Iterator[nn.Module]:
    """Eval mode and no gradients inside the block; the previous mode is restored on the way
    out, also when the block raises.

    Chapter 6.
    """
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train(was_training)
