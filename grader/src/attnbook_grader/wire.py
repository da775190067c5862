"""The data format between the grader and the process that runs a submission.

Only plain data crosses: numbers, strings, lists, tuples, dicts, sets, NumPy arrays and
scalars, PyTorch tensors (on the CPU; a tensor on the ``meta`` device, which holds no
numbers, as its shape and dtype, and it arrives on ``meta``), dtypes, shapes and random
generators' states, as JSON text (`frames`: a tensor's or an array's storage follows the
text as bytes, other bytes are in base64), tensors and arrays with their
layout (`layout`: strides, offsets, views of one storage). Tensors and arrays cross only as
exactly `torch.Tensor`, `torch.nn.Parameter` or `numpy.ndarray`: a subclass, whose
methods are the submission's, arrives opaque. Decoding builds nothing else, so a submission
can send the grader wrong numbers but never an object with code of its own (no pickle
anywhere). Anything else a student's function returns arrives as an `Opaque` placeholder
that equals nothing. Every frame the child sends is checked (`checked_ready`,
`checked_reply`, `checked_description`) before the grader reads a field of it; frames are
read and written whole within a time limit, their text no deeper than `frames.MAX_DEPTH`.
"""

from __future__ import annotations

import base64
import random
from typing import Any

import numpy as np

from attnbook_grader.torchless import torch  # or a stand-in where it must be absent

from attnbook_grader import layout
from attnbook_grader.frames import (
    MAX_MESSAGE_BYTES,
    WireError,
    dumps,
    loads,
    receive,
    send,
)

__all__ = [
    "Opaque",
    "WireError",
    "encode",
    "decode",
    "dumps",
    "loads",
    "update_in_place",
    "receive",
    "send",
    "MAX_MESSAGE_BYTES",
    "checked_index",
    "checked_ready",
    "checked_reply",
    "checked_description",
    "SAME_STATES",
    "SAME_INPUTS",
]
# in place of a frame's random states: the states both sides already hold (`rng`)
SAME_STATES = "$same"
# in place of a reply's inputs after the call (args_after, kwargs_after): exactly as the
# request sent them, so that a tensor the call only read does not cross back. The child's
# word, as a full copy would be: either way the inputs after a call are what it reports
SAME_INPUTS = "$same"

_NUMPY_KINDS = "biufc"  # bool, signed, unsigned, float, complex: never object arrays
_TORCH_DTYPES = {
    str(d): d
    for d in (
        torch.bool,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
        torch.complex128,
    )
}


class Opaque:
    """A value the submission returned that is not data (a module, a function, ...)."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name} from the submission: {self.text}>"

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def encode(value: Any, memo: dict | None = None) -> Any:
    """A JSON-ready form of `value` (see the module docstring). memo: shared by the values
    of one frame (arguments, then keyword arguments), so a storage crosses once and views
    of one tensor arrive as views of one storage (`layout`); {"$flat": True}: tensors and
    arrays as contiguous copies (a comparison of values, never sent)."""
    memo = {} if memo is None else memo
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [encode(v, memo) for v in value]
    if isinstance(value, tuple) and not isinstance(value, torch.Size):
        return {"$t": [encode(v, memo) for v in value]}
    if isinstance(value, dict):
        return {"$d": [[encode(k, memo), encode(v, memo)] for k, v in value.items()]}
    if isinstance(value, (set, frozenset)):
        return {"$s": [encode(v, memo) for v in value]}
    if isinstance(value, complex):
        return {"$c": [value.real, value.imag]}
    if isinstance(value, torch.Size):
        return {"$size": list(value)}
    if isinstance(value, torch.dtype):
        return {"$dtype": str(value)}
    if (
        type(value) in (torch.Tensor, torch.nn.Parameter)  # a subclass: opaque
        and str(value.dtype) in _TORCH_DTYPES
        and value.layout == torch.strided
    ):
        if value.device.type == "meta":  # shape, dtype and device only: no numbers
            return {
                "$torch": str(value.dtype),
                "shape": list(value.shape),
                "meta": True,
                "grad": bool(value.requires_grad),
            }
        if not memo.get("$flat"):
            return layout.encode_tensor(value, memo)
        t = value.detach().cpu().contiguous()
        raw = t.view(torch.int16) if t.dtype == torch.bfloat16 else t
        return {
            "$torch": str(t.dtype),
            "shape": list(t.shape),
            "data": _b64(raw.numpy().tobytes()),
            "grad": bool(value.requires_grad),
        }
    if type(value) is np.ndarray and value.dtype.kind in _NUMPY_KINDS:
        if not memo.get("$flat"):
            return layout.encode_array(value, memo)
        return {
            "$np": value.dtype.str,
            "shape": list(value.shape),
            "data": _b64(np.ascontiguousarray(value).tobytes()),
        }
    if isinstance(value, np.generic) and np.dtype(type(value)).kind in _NUMPY_KINDS:
        return {"$npscalar": value.dtype.str, "data": _b64(value.tobytes())}
    if isinstance(value, torch.Generator):
        return {"$tgen": _b64(value.get_state().numpy().tobytes())}
    if isinstance(value, np.random.Generator):
        return {"$npgen": encode(value.bit_generator.state, memo)}
    if isinstance(value, random.Random):
        return {"$pyrandom": encode(value.getstate(), memo)}
    if isinstance(value, range):
        return {"$range": [value.start, value.stop, value.step]}
    try:
        text = repr(value)[:200]
    except Exception:  # noqa: BLE001 - a repr that raises is still a placeholder
        text = "?"
    return {"$opaque": type(value).__name__, "repr": text}


def _bytes(item: dict, key: str = "data") -> bytes:
    data = item.get(key)
    if not isinstance(data, str):
        raise WireError("array data must be base64 text")
    return base64.b64decode(data, validate=True)


def _shape(item: dict) -> tuple[int, ...]:
    shape = item.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) > layout.MAX_DIMS
        or not all(isinstance(n, int) and n >= 0 for n in shape)
    ):
        raise WireError(f"bad shape {shape!r}")
    return tuple(shape)


def _decode_tagged(item: dict, memo: dict) -> Any:  # noqa: C901 - one branch per tag
    if "$t" in item:
        return tuple(decode(v, memo) for v in item["$t"])
    if "$d" in item:
        return {decode(k, memo): decode(v, memo) for k, v in item["$d"]}
    if "$s" in item:
        return {decode(v, memo) for v in item["$s"]}
    if "$c" in item:
        return complex(float(item["$c"][0]), float(item["$c"][1]))
    if "$size" in item:
        return torch.Size(int(n) for n in item["$size"])
    if "$dtype" in item:
        if item["$dtype"] not in _TORCH_DTYPES:
            raise WireError(f"unknown dtype {item['$dtype']!r}")
        return _TORCH_DTYPES[item["$dtype"]]
    if "$torch" in item:
        dtype = _TORCH_DTYPES.get(item["$torch"])
        if dtype is None:
            raise WireError(f"unknown dtype {item['$torch']!r}")
        shape = _shape(item)
        if item.get("meta") is True:
            tensor = torch.empty(shape, dtype=dtype, device="meta")
            grad = bool(item.get("grad")) and tensor.is_floating_point()
            return tensor.requires_grad_(grad)
        return layout.decode_tensor(item, dtype, list(shape), memo, MAX_MESSAGE_BYTES)
    if "$np" in item or "$npscalar" in item:
        np_dtype = np.dtype(str(item.get("$np", item.get("$npscalar"))))
        if np_dtype.kind not in _NUMPY_KINDS:
            raise WireError(f"refused NumPy dtype {np_dtype}")
        if "$np" in item:
            dims = list(_shape(item))
            return layout.decode_array(item, np_dtype, dims, memo, MAX_MESSAGE_BYTES)
        return np.frombuffer(_bytes(item), dtype=np_dtype).copy().reshape(())[()]
    if "$tgen" in item:
        generator = torch.Generator()
        generator.set_state(
            torch.frombuffer(bytearray(_bytes(item, "$tgen")), dtype=torch.uint8)
        )
        return generator
    if "$npgen" in item:
        state = decode(item["$npgen"], memo)
        if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
            raise WireError("only PCG64 NumPy generators cross")
        bit_generator = np.random.PCG64()
        bit_generator.state = state  # type: ignore[assignment]
        return np.random.Generator(bit_generator)
    if "$pyrandom" in item:
        python_generator = random.Random()
        python_generator.setstate(decode(item["$pyrandom"], memo))
        return python_generator
    if "$range" in item:
        return range(*(int(n) for n in item["$range"]))
    if "$opaque" in item:
        return Opaque(str(item["$opaque"])[:100], str(item.get("repr", ""))[:200])
    raise WireError(f"unknown tag in {sorted(item)[:3]}")


def decode(item: Any, memo: dict | None = None) -> Any:
    """The value `encode` was given (plain data only; raises WireError on anything else).
    memo: shared by the values of one frame, decoded in the order they were encoded."""
    memo = {} if memo is None else memo
    if item is None or isinstance(item, (bool, int, float, str)):
        return item
    if isinstance(item, list):
        return [decode(v, memo) for v in item]
    if isinstance(item, dict):
        try:
            return _decode_tagged(item, memo)
        except WireError:
            raise
        except Exception as err:  # noqa: BLE001 - malformed data of any kind
            raise WireError(f"malformed value: {type(err).__name__}: {err}") from None
    raise WireError(f"not data: {type(item).__name__}")


def update_in_place(target: Any, source: Any) -> None:
    """Make `target` hold what `source` holds where it can change in place (a tensor, an
    array, a list, a dict, a generator): how a call in another process shows its effects on
    the caller's inputs. Anything else, or a change of shape or type, is left as it was."""
    if isinstance(target, torch.Tensor) and isinstance(source, torch.Tensor):
        same_kind = target.shape == source.shape and target.dtype == source.dtype
        if (
            same_kind
            and "meta" not in (target.device.type, source.device.type)  # no numbers
            and not torch.equal(target.detach(), source)
            and not _overlaps(target)
        ):
            with torch.no_grad():
                target.copy_(source)
    elif isinstance(target, np.ndarray) and isinstance(source, np.ndarray):
        same_kind = target.shape == source.shape and target.dtype == source.dtype
        if same_kind and target.flags.writeable and 0 not in target.strides:
            target[...] = source
    elif isinstance(target, list) and isinstance(source, list):
        if len(target) == len(source):
            for i, (old, new) in enumerate(zip(target, source)):
                if type(old) is type(new) and isinstance(
                    old, (torch.Tensor, np.ndarray, list, dict)
                ):
                    update_in_place(old, new)
                else:
                    target[i] = new
        else:
            target[:] = source
    elif isinstance(target, dict) and isinstance(source, dict):
        target.clear()
        target.update(source)
    elif isinstance(target, torch.Generator) and isinstance(source, torch.Generator):
        target.set_state(source.get_state())
    elif isinstance(target, np.random.Generator) and isinstance(
        source, np.random.Generator
    ):
        target.bit_generator.state = source.bit_generator.state
    elif isinstance(target, random.Random) and isinstance(source, random.Random):
        target.setstate(source.getstate())


def _overlaps(t: torch.Tensor) -> bool:
    """True for a tensor whose elements share memory (an `expand`ed one): not writable."""
    return any(stride == 0 and size > 1 for stride, size in zip(t.stride(), t.shape))


# ----------------------------------------------------------------------------- frames
# What the child may send, checked before the grader reads a field of it (a frame that fails
# is the submission's error: `child.Child` ends the process and the call's question is lost).
def _require(ok: bool, what: str) -> None:
    if not ok:
        raise WireError(f"malformed frame: {what}")


def checked_index(value: Any, n: int) -> int:
    """A cell index in range(n)."""
    _require(type(value) is int and 0 <= value < n, f"cell index {value!r}")
    return int(value)


def _pairs(value: Any, n: int, what: str) -> list[list]:
    _require(type(value) is list and len(value) <= 10_000, what)
    for item in value:
        _require(type(item) is list and len(item) == 2, what)
        checked_index(item[0], n)
        _require(type(item[1]) is str, what)
    return [list(item) for item in value]


def checked_ready(frame: dict, n_cells: int) -> dict:
    """The child's first message: the cells' errors and events, cell indices in range."""
    if "crash" in frame:
        _require(type(frame["crash"]) is str, "crash")
        raise WireError(f"the notebook could not run: {frame['crash'][:500]}")
    _require(frame.get("ready") is True and set(frame) <= _READY_KEYS, "ready")
    return {
        "ready": True,
        "cell_errors": _pairs(frame.get("cell_errors", []), n_cells, "cell_errors"),
        "cell_events": _pairs(frame.get("cell_events", []), n_cells, "cell_events"),
    }


_READY_KEYS = {"ready", "cell_errors", "cell_events", "seq"}
_REPLY_KEYS = {"seq", "result", "raised", "crash", "args_after", "kwargs_after", "rng"}
_REPLY_KEYS |= {"events", "memory", "watcher", "kind", "params", "value"}
_CALLBACK_KEYS = {"seq", "callback", "args", "kwargs", "rng"}


def _encoded_dict(value: Any) -> bool:
    return type(value) is dict and type(value.get("$d")) is list


def checked_reply(frame: dict, seq: int) -> dict:
    """A reply (or a callback) to request `seq`: its fields of the right types."""
    _require(frame.get("seq") == seq and type(frame.get("seq")) is int, "out of turn")
    if "callback" in frame:
        _require(set(frame) <= _CALLBACK_KEYS, "callback fields")
        _require(type(frame["callback"]) is str, "callback name")
        _require(type(frame.get("args")) is list, "callback args")
        _require(_encoded_dict(frame.get("kwargs")), "callback kwargs")
        _require(_encoded_dict(frame.get("rng")), "callback rng")
        return frame
    _require(set(frame) <= _REPLY_KEYS, "reply fields")
    if "kind" in frame:  # a description
        return frame
    if "crash" in frame:
        _require(type(frame["crash"]) is str, "crash")
        return frame
    _require(("result" in frame) != ("raised" in frame), "result or raised")
    args_after, kwargs_after = frame.get("args_after"), frame.get("kwargs_after")
    _require(type(args_after) is list or args_after == SAME_INPUTS, "args_after")
    _require(_encoded_dict(kwargs_after) or kwargs_after == SAME_INPUTS, "kwargs_after")
    rng = frame.get("rng")
    sent = _encoded_dict(rng) and len(rng["$d"]) == 3  # type: ignore[index]
    _require(sent or rng == SAME_STATES, "rng")
    events = frame.get("events", [])
    _require(type(events) is list and all(type(e) is str for e in events), "events")
    _require(type(frame.get("watcher", "")) is str, "watcher")
    _require(type(frame.get("memory", {})) in (dict, type(None)), "memory")
    if "raised" in frame:
        raised = frame["raised"]
        _require(type(raised) is dict, "raised")
        _require(all(type(raised.get(k)) is str for k in ("type", "message")), "raised")
    return frame


def checked_description(frame: dict) -> dict:
    """A description of a name: missing, a function (its parameters) or data."""
    kind = frame.get("kind")
    _require(kind in ("missing", "function", "data"), f"description {kind!r}")
    if kind == "function":
        params = frame.get("params")
        _require(type(params) is list and all(type(p) is str for p in params), "params")
    if kind == "data":
        _require("value" in frame, "data value")
    return {k: frame[k] for k in ("kind", "params", "value") if k in frame}
