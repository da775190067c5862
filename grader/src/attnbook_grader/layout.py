"""Tensors and arrays on the wire as they lie in memory: the half of `wire`
that keeps a layout across the process boundary.

A tensor crosses as its whole storage (its bytes as they are, once per frame, however many
tensors of the frame view it), its storage offset, sizes, strides and ``requires_grad``; a
NumPy array as the bytes of the array that owns its memory, its byte offset and byte strides. So a transposed key,
a slice of a larger buffer, or two views of one tensor arrive in the other process as exactly
that (a ``.view`` that fails on the caller's transposed keys fails there too, and a write into
one view shows in the other). Decoding checks every field against the bytes that came: an
offset, stride or size out of bounds, a reference to a storage not sent, or more elements than
the wire's limit is a ValueError (`wire.decode` makes it a WireError), never a crash.

`memo` is a dict shared by the values of one frame (its arguments and keyword arguments):
the storages met so far, in order; the receiver decodes the values in the same order with a
dict of its own.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np

from attnbook_grader.torchless import torch  # or a stand-in where it must be absent

__all__ = ["encode_tensor", "decode_tensor", "encode_array", "decode_array"]

MAX_DIMS = 32
_BASE = (
    torch._C.TensorBase.__dict__
)  # the base class's methods: a patched Tensor lies not
_STORAGE = _BASE["untyped_storage"]
_OFFSET = _BASE["storage_offset"]
_STRIDE = _BASE["stride"]


def _raw(item: dict) -> bytes:
    data = item.get("base")
    if isinstance(data, bytes):  # as `frames` carries them
        return data
    if not isinstance(data, str):
        raise ValueError("storage bytes must be bytes or base64 text")
    return base64.b64decode(data, validate=True)


def _ints(value: Any, what: str, low: int | None = 0) -> list[int]:
    ok = type(value) is list and len(value) <= MAX_DIMS
    if not ok or not all(type(n) is int and (low is None or n >= low) for n in value):
        raise ValueError(f"bad {what} {str(value)[:80]}")
    return list(value)


def _storage_index(item: dict, table: list, make: Any) -> Any:
    """The storage `item` names: a new one (with its bytes, numbered in order) or one sent
    earlier in the frame."""
    index = item.get("storage")
    if "base" in item:
        if index != len(table) or type(index) is not int:
            raise ValueError(f"storage {index!r} out of order")
        table.append(make(_raw(item)))
    elif not (type(index) is int and 0 <= index < len(table)):
        raise ValueError(f"storage {index!r} was not sent")
    return table[index]


def _check_extent(
    shape: list[int], strides: list[int], offset: int, itemsize: int, nbytes: int
) -> None:
    """Every element of the layout inside the storage's `nbytes` (offset and strides in
    bytes)."""
    if len(strides) != len(shape):
        raise ValueError(f"{len(strides)} strides for {len(shape)} sizes")
    if type(offset) is not int or offset < 0:
        raise ValueError(f"bad offset {offset!r}")
    if 0 in shape:
        if offset > nbytes:
            raise ValueError(f"offset {offset} past the storage's {nbytes} bytes")
        return
    low = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    if low < 0 or high + itemsize > nbytes:
        raise ValueError(
            f"the layout reaches bytes {low} to {high + itemsize} of a storage of {nbytes}"
        )


def _check_count(shape: list[int], itemsize: int, limit: int) -> None:
    if math.prod(shape) * itemsize > limit:
        raise ValueError(f"{math.prod(shape)} elements: over the wire's limit")


# ----------------------------------------------------------------------------- tensors
def encode_tensor(value: torch.Tensor, memo: dict) -> dict:
    """A strided CPU tensor (a plain one: `wire` checks the type) with its layout."""
    t = value.detach()
    if t.device.type != "cpu" or t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg().cpu()  # its own storage from here on
    storage = _STORAGE(t)
    key = ("torch", storage.data_ptr(), storage.nbytes())
    storages = memo.setdefault("$storages", {})
    item: dict[str, Any] = {
        "$torch": str(t.dtype),
        "shape": list(t.shape),
        "strides": list(_STRIDE(t)),
        "offset": int(_OFFSET(t)),
        "grad": bool(value.requires_grad),
    }
    if key in storages:
        item["storage"] = storages[key]
    else:
        item["storage"] = storages[key] = len(storages)
        whole = torch.empty(0, dtype=torch.uint8).set_(storage)
        # bytes: `frames` carries them as they are, after the frame's text
        item["base"] = whole.numpy().tobytes()
    return item


def _torch_storage(data: bytes) -> Any:
    return torch.from_numpy(
        np.frombuffer(data, dtype=np.uint8).copy()
    ).untyped_storage()


def decode_tensor(
    item: dict, dtype: torch.dtype, shape: list[int], memo: dict, limit: int
) -> torch.Tensor:
    """The tensor `encode_tensor` described, on a storage of this frame (checked)."""
    storage = _storage_index(item, memo.setdefault("$storages", []), _torch_storage)
    strides = _ints(item.get("strides"), "strides")
    itemsize = torch.empty(0, dtype=dtype).element_size()
    offset = item.get("offset")
    _check_count(shape, itemsize, limit)
    if type(offset) is not int or offset < 0:
        raise ValueError(f"bad offset {offset!r}")
    in_bytes = [stride * itemsize for stride in strides]
    _check_extent(shape, in_bytes, offset * itemsize, itemsize, storage.nbytes())
    tensor = torch.empty(0, dtype=dtype).set_(storage, offset, shape, strides)
    if item.get("grad") is True and tensor.is_floating_point():
        tensor.requires_grad_(True)
    return tensor


# ----------------------------------------------------------------------------- arrays
def _owner(value: np.ndarray) -> np.ndarray | None:
    """The plain contiguous array that owns `value`'s memory, where there is one."""
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    whole = root.flags.c_contiguous or root.flags.f_contiguous
    plain = type(root) is np.ndarray and whole and root.flags.owndata
    return root if plain else None


def encode_array(value: np.ndarray, memo: dict) -> dict:
    """A plain NumPy array of numbers with its layout (byte offset and strides into the
    array that owns its memory); one whose memory is not an array's crosses as a copy."""
    root = _owner(value)
    if root is None:
        # contiguous: itself; else a copy, kept alive with the frame, since its id names its
        # storage below (a freed copy's id may come back for the next one); 0-d stays 0-d
        # (np.ascontiguousarray returns at least 1-d)
        root = np.ascontiguousarray(value) if value.ndim else value.copy()
        if root is not value:
            memo.setdefault("$copies", []).append(root)
        value = root
    start = np.ndarray.__array_interface__.__get__(root)["data"][0]
    here = np.ndarray.__array_interface__.__get__(value)["data"][0]
    storages = memo.setdefault("$arrays", {})
    key = (id(root), start, root.nbytes)
    item: dict[str, Any] = {
        "$np": value.dtype.str,
        "shape": list(value.shape),
        "strides": list(value.strides),
        "offset": int(here - start),
    }
    if key in storages:
        item["storage"] = storages[key]
    else:
        item["storage"] = storages[key] = len(storages)
        item["base"] = root.tobytes(order="A")  # in memory order
    return item


def decode_array(
    item: dict, dtype: np.dtype, shape: list[int], memo: dict, limit: int
) -> np.ndarray:
    """The array `encode_array` described, on a buffer of this frame (checked)."""
    buffer = _storage_index(item, memo.setdefault("$arrays", []), bytearray)
    strides = _ints(item.get("strides"), "strides", low=None)
    offset = item.get("offset")
    _check_count(shape, dtype.itemsize, limit)
    if type(offset) is not int:
        raise ValueError(f"bad offset {offset!r}")
    _check_extent(shape, strides, offset, dtype.itemsize, len(buffer))
    return np.ndarray(
        tuple(shape), dtype=dtype, buffer=buffer, offset=offset, strides=tuple(strides)
    )
