"""How many bytes of tensors a computation holds at its peak, on any device (chapters 2 and
8); the cache memory of a batch, reserved or paged (chapter 9).

`peak_tensor_bytes(fn)` runs `fn()` under a dispatch mode that sees every PyTorch operation:
each new tensor storage an operation returns is counted from its creation until Python frees
it, and the largest total is the peak. Only storages created inside `fn` count (inputs made
before are not), and scratch memory a fused kernel allocates *inside* one operation (for
example inside `scaled_dot_product_attention`) is invisible to it: the meter is meant to
compare PyTorch code written out of ordinary operations, such as naive and blockwise attention.

`reserved_vs_paged` counts the key/value memory of a batch by arithmetic (chapter 9): what
preallocation reserves against what whole blocks of a paged cache hold.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from ._checks import positive_int

__all__ = ["peak_tensor_bytes", "reserved_vs_paged"]

R = TypeVar("R")


class _StorageMeter(TorchDispatchMode):
    """Counts the bytes of the live storages that operations created while it was active."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, int] = {}
        self.current = 0
        self.peak = 0

    def _release(self, key: int) -> None:
        self.current -= self.live.pop(key, 0)

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        out = func(*args, **(kwargs or {}))
        inputs = {
            id(t.untyped_storage())
            for t in tree_flatten((args, kwargs))[0]
            if isinstance(t, torch.Tensor)
        }
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            key = id(storage)
            # a view, or an in-place result: no new memory
            if key in self.live or key in inputs:
                continue
            self.live[key] = storage.nbytes()
            self.current += storage.nbytes()
            weakref.finalize(storage, self._release, key)
            self.peak = max(self.peak, self.current)
        return out


def peak_tensor_bytes(fn: Callable[[], R]) -> tuple[R, int]:
    """Run `fn()`; return its result and the peak bytes of tensors it created (see above;
    chapters 2 and 8)."""
    if not callable(fn):
        raise TypeError(
            f"fn must be a callable taking no arguments, got {type(fn).__name__}"
        )
    meter = _StorageMeter()
    with meter:
        result = fn()
    return result, meter.peak


def reserved_vs_paged(
    lengths: Sequence[int], max_len: int, block_size: int, bytes_per_token: int
) -> dict[str, float]:
    """Cache memory of a batch of sequences of `lengths` tokens (chapter 9): "reserved" when
    each request preallocates `max_len` tokens, "paged" when it holds ceil(length /
    block_size) blocks, "used" for the tokens themselves, and the waste of each in %."""
    positive_int("max_len", max_len)
    positive_int("block_size", block_size)
    positive_int("bytes_per_token", bytes_per_token)
    lengths = list(lengths)
    if not lengths:
        raise ValueError("lengths must hold at least one sequence length")
    for n in lengths:
        positive_int("each length", n)
        if n > max_len:
            raise ValueError(f"a length of {n} exceeds max_len={max_len}")
    used = sum(lengths) * bytes_per_token
    reserved = len(lengths) * max_len * bytes_per_token
    paged = sum(-(-n // block_size) * block_size for n in lengths) * bytes_per_token
    return {
        "used": used,
        "reserved": reserved,
        "paged": paged,
        "reserved_waste_pct": 100 * (reserved - used) / reserved,
        "paged_waste_pct": 100 * (paged - used) / paged,
    }
