"""Where a call's inputs and results live in memory: the facts the child
reports and the grader's new-object rules read (`verdicts`); and an exception as data.

Computed with the base classes' own methods, taken when this module is imported (before
any student code runs) and called unbound, with subclasses' ``__torch_function__`` switched
off: a tensor subclass or a patched ``torch.Tensor.data_ptr`` cannot make a view look new.
A subclass is named in its fact (`verdicts` refuses it), as the wire refuses to carry it.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from attnbook_grader.torchless import has_torch

from attnbook_grader.torchless import torch  # or a stand-in where it must be absent

__all__ = ["memory_facts", "report_exception"]

_TENSORS = (torch.Tensor, torch.nn.Parameter)
_T = {
    name: torch._C.TensorBase.__dict__[name]
    for name in (
        "layout",
        "device",
        "shape",
        "dtype",
        "numel",
        "data_ptr",
        "untyped_storage",
        "stride",
    )
}
_STORAGE_PTR: Any = torch.UntypedStorage.data_ptr if has_torch() else None


def _tensor_fact(value: torch.Tensor) -> dict[str, Any]:
    meta = _T["device"].__get__(value).type == "meta"
    storage = 0 if meta else _STORAGE_PTR(_T["untyped_storage"](value))
    return {
        "kind": "tensor",
        "numel": int(_T["numel"](value)),
        "ptr": 0 if meta else int(_T["data_ptr"](value)),
        "storage": int(storage),
        "shape": list(_T["shape"].__get__(value)),
        "strides": list(_T["stride"](value)),
        "dtype": str(_T["dtype"].__get__(value)),
        "meta": meta,
    }


_byte_bounds: Any = getattr(
    getattr(np.lib, "array_utils", None),
    "byte_bounds",
    getattr(np, "byte_bounds", None),
)


def _fact(value: Any) -> dict:
    """Where `value` lives: identity, kind and, for arrays and tensors, memory and layout."""
    fact: dict[str, Any] = {"id": id(value), "kind": type(value).__name__}
    if has_torch() and isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():  # a subclass's overrides: off
            if _T["layout"].__get__(value) == torch.strided:
                fact.update(_tensor_fact(value))
        if type(value) not in _TENSORS:
            fact["subclass"] = type(value).__name__
    elif isinstance(value, np.ndarray):
        plain = value.view(np.ndarray) if type(value) is not np.ndarray else value
        lo, hi = _byte_bounds(plain)
        fact.update(
            kind="array",
            numel=int(plain.size),
            ptr=int(np.ndarray.__array_interface__.__get__(plain)["data"][0]),
            lo=int(lo),
            hi=int(hi),
            shape=list(plain.shape),
            strides=list(plain.strides),
            dtype=str(plain.dtype),
        )
        if type(value) is not np.ndarray:
            fact["subclass"] = type(value).__name__
    elif isinstance(value, list):
        fact["kind"] = "list"
    return fact


def memory_facts(labelled: dict[str, Any], result: Any, earlier: Any = ()) -> dict:
    """Where the inputs, the result's items and `earlier` results' (alive) live: `verdicts`."""

    def facts(value: Any) -> list[dict]:
        return [_fact(v) for v in (value if isinstance(value, tuple) else (value,))]

    return {
        "inputs": {label: _fact(v) for label, v in labelled.items()},
        "results": facts(result),
        "earlier": [fact for value in earlier for fact in facts(value)],
    }


def report_exception(err: BaseException) -> dict:
    """An exception as data: its type where it is a builtin one, else "Exception"."""
    kind = type(err)
    known = (
        kind.__name__ if getattr(builtins, kind.__name__, None) is kind else "Exception"
    )
    return {
        "type": known,
        "name": kind.__name__,
        "message": str(err)[:2000],
        "memory": isinstance(err, MemoryError),
    }
