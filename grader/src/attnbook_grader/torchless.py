"""`torch` for the engine's modules, or, in a process that must never hold PyTorch, a stand-in
with none of its code.

A question that rules PyTorch out (a NumPy question) runs its answers in a child forked from
a process server that never imported it (`reach`); that server is started with
``ATTNBOOK_GRADER_WITHOUT`` naming the ruled-out packages. The wire (`wire`, `layout`) and
the child's own code (`sandbox`, `facts`) import `torch` from here: there it is a stand-in
whose types nothing is an instance of and whose dtypes match no name the wire accepts, so a
value of PyTorch is never built in such a process and no object in it leads to PyTorch's
code. Everywhere else (the grader, the other children) it is PyTorch itself.
"""

from __future__ import annotations

import os
import sys
import types
from typing import TYPE_CHECKING, Any

__all__ = ["WITHOUT_ENV", "ruled_out", "torch", "has_torch"]

WITHOUT_ENV = "ATTNBOOK_GRADER_WITHOUT"  # comma-separated top-level packages


def ruled_out() -> frozenset[str]:
    """The packages this process must not import (read once, from the environment the
    process server was started with)."""
    return frozenset(p for p in os.environ.get(WITHOUT_ENV, "").split(",") if p)


def _stand_in() -> Any:
    """A module object named like PyTorch's that holds no code of it."""
    module = types.ModuleType("torch_absent", "PyTorch is not in this process")

    def absent_type(name: str) -> type:
        return type(name, (), {"__module__": "torch_absent"})

    for name in ("Tensor", "Size", "dtype", "Generator", "UntypedStorage"):
        setattr(module, name, absent_type(name))
    vars(module)["nn"] = types.SimpleNamespace(Parameter=absent_type("Parameter"))
    vars(module)["strided"] = object()
    for dtype in (
        "bool uint8 int8 int16 int32 int64 float16 bfloat16 float32 float64 "
        "complex64 complex128"
    ).split():
        setattr(module, dtype, f"absent.{dtype}")  # no wire name equals these
    base = absent_type("TensorBase")
    for method in (
        "untyped_storage storage_offset stride layout device shape dtype numel data_ptr"
    ).split():
        setattr(base, method, None)
    vars(module)["_C"] = types.SimpleNamespace(TensorBase=base)
    return module


if TYPE_CHECKING:
    import torch
elif "torch" in ruled_out() and "torch" not in sys.modules:
    torch = _stand_in()
else:
    import torch


def has_torch() -> bool:
    """Whether `torch` is PyTorch here."""
    return torch.__name__ == "torch"
