"""Frames on the wire to a submission's process, each read and written whole within a time
limit: the transport under `wire`'s data format.

A frame is what ``multiprocessing.Connection.send_bytes`` writes: a 4-byte big-endian length,
then that many bytes: JSON text, and where the message holds `bytes` (a tensor's storage), a NUL
byte (never in JSON text) and the bytes themselves, each after its 4-byte length; the text names
each by its place, ``{"$blob": i}``, so that a storage crosses as it is, neither in base64 nor
scanned by the JSON parser. The grader never trusts the other end to finish what it
starts: `receive` gives a frame whose first byte has come `FRAME_SECONDS` to arrive whole (a
header announcing 4096 bytes followed by one byte is a `TimeoutError`, never a hang), and
`send` gives a frame the same time to leave (a child that never reads cannot block the
grader). `loads` refuses, as `WireError`, text that is not a JSON object, over
`MAX_MESSAGE_BYTES`, nested deeper than `MAX_DEPTH` (no `RecursionError` or `MemoryError`
ever leaves it), or with bytes that do not add up (a length past the end, a place not sent).
Imports nothing of the grading package.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

__all__ = [
    "FRAME_SECONDS",
    "MAX_DEPTH",
    "MAX_MESSAGE_BYTES",
    "WireError",
    "dumps",
    "loads",
    "receive",
    "send",
]

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
MAX_DEPTH = (
    100  # lists and dicts inside one another (the grader's own frames: under 20)
)
FRAME_SECONDS = float(os.environ.get("ATTNBOOK_GRADER_FRAME_SECONDS", "20"))


class WireError(ValueError):
    """A message that is not valid data of this format."""


_BLOB = "$blob"
_LENGTH = struct.Struct("!I")


def dumps(message: dict) -> bytes:
    """The frame of `message`: its JSON text, then its `bytes` values (see the module
    docstring)."""
    blobs: list[bytes] = []

    def blob(value: Any) -> dict:
        if not isinstance(value, bytes):
            raise TypeError(f"{type(value).__name__} is not data of the wire")
        blobs.append(value)
        return {_BLOB: len(blobs) - 1}

    text = json.dumps(message, default=blob).encode()
    if not blobs:
        return text
    return b"".join(
        [text, b"\0", *(part for b in blobs for part in (_LENGTH.pack(len(b)), b))]
    )


def _blobs(tail: bytes) -> list[bytes]:
    """The bytes after a frame's NUL: each after its 4-byte length, to the end exactly."""
    blobs, at, view = [], 0, memoryview(tail)
    while at < len(tail):
        if at + 4 > len(tail):
            raise WireError("a frame's bytes end inside a length")
        (size,) = _LENGTH.unpack_from(tail, at)
        at += 4
        if at + size > len(tail):
            raise WireError(f"a frame's bytes announce {size} bytes past its end")
        blobs.append(bytes(view[at : at + size]))
        at += size
    return blobs


def _depth(value: Any, limit: int) -> int:
    """How deep lists and dicts nest in `value`, counted without recursion, stopping past
    `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((c, level + 1) for c in children if isinstance(c, (list, dict)))
    return deepest


def loads(data: bytes) -> dict:
    """The JSON object of a frame; WireError for anything else (see the module docstring)."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {len(data)} bytes is over the limit")
    text, _, tail = data.partition(b"\0")
    blobs = _blobs(tail)

    def blob(item: dict) -> Any:
        if _BLOB not in item:
            return item
        index = item[_BLOB]
        if len(item) != 1 or type(index) is not int or not 0 <= index < len(blobs):
            raise WireError(f"a frame names bytes it did not send: {str(item)[:80]}")
        return blobs[index]

    try:
        message = json.loads(text, object_hook=blob if blobs else None)
    except WireError:
        raise
    except ValueError as err:
        raise WireError(f"not JSON: {str(err)[:200]}") from None
    except (RecursionError, MemoryError) as err:
        raise WireError(
            f"not readable: {type(err).__name__} (nested too deep?)"
        ) from None
    if not isinstance(message, dict):
        raise WireError("a message is a JSON object")
    if _depth(message, MAX_DEPTH) > MAX_DEPTH:
        raise WireError(f"a message nested deeper than {MAX_DEPTH} levels")
    return message


def _wait(fd: int, event: int, deadline: float, what: str) -> None:
    """Until `fd` is ready for `event` (select.POLLIN / POLLOUT), by `deadline`."""
    poller = select.poll()
    poller.register(fd, event | select.POLLHUP | select.POLLERR)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the frame was not {what} within {FRAME_SECONDS:.0f} s")
        if poller.poll(min(left, 60.0) * 1000):  # a minute at most, then look again
            return


def _read(fd: int, n: int, deadline: float) -> bytes:
    parts, got = [], 0
    while got < n:
        _wait(fd, select.POLLIN, deadline, "received whole")
        try:
            chunk = os.read(fd, min(n - got, 1 << 20))
        except BlockingIOError:
            continue
        if not chunk:
            raise EOFError("the other end closed the pipe in the middle of a frame")
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def receive(conn: Any, seconds: float | None = None) -> bytes:
    """The next frame on `conn` (a `multiprocessing.Connection`), read whole within
    `seconds` (`FRAME_SECONDS`) of the call: call it once the first byte is there (after
    ``conn.poll``). Raises TimeoutError (an OSError), EOFError, or WireError for a length
    over `MAX_MESSAGE_BYTES`."""
    deadline = time.monotonic() + (FRAME_SECONDS if seconds is None else seconds)
    fd = conn.fileno()
    blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    try:
        (size,) = struct.unpack("!i", _read(fd, 4, deadline))
        if size < 0 or size > MAX_MESSAGE_BYTES:
            raise WireError(f"a frame announced {size} bytes: over the limit")
        return _read(fd, size, deadline)
    finally:
        os.set_blocking(fd, blocking)


def send(conn: Any, data: bytes, seconds: float | None = None) -> None:
    """Write `data` as one frame on `conn`, whole within `seconds` (`FRAME_SECONDS`), else
    TimeoutError (an OSError): the other end may stop reading, the grader never waits on
    it for longer."""
    deadline = time.monotonic() + (FRAME_SECONDS if seconds is None else seconds)
    if len(data) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {len(data)} bytes is over the limit")
    view = memoryview(struct.pack("!i", len(data)) + data)
    fd = conn.fileno()
    blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    try:
        while view:
            _wait(fd, select.POLLOUT, deadline, "taken by the other end")
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                continue
    finally:
        os.set_blocking(fd, blocking)
