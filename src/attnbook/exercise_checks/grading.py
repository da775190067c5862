"""The house rules a hidden test of the graded exercises checks besides the values.

A hidden test wraps the student's function once, ``f = guarded(f, ...)``, and then calls it
as usual. Every call

* fails if the function's source (or that of a notebook function it calls) holds what the
  grader refuses in an answer cell (`answer_allowlist`: a module or builtin not allowed,
  dynamic attribute access), so that the public checks warn before the grade does;
* fails, with ``loops=False``, if the function's source (or that of a notebook function it
  calls) holds a Python ``for``/``while`` loop or a comprehension;
* fails if the function reaches into the course package ``attnbook`` (any module, whatever
  the name of the function), into a library the question rules out, or into a routine the
  question asks the student to write;
* fails if the function changed one of its inputs in place, or the global random state of
  ``random``, NumPy or PyTorch, or returned one of its inputs, or a view of all of it (same
  memory, shape and strides: ``x[:]``), instead of a new object (and, where the question
  asks for a new tensor, ``no_views``, any view of one).

Where ``f`` is a local function (the public checks on a student's machine) the rules are
checked here, around the call (the shortcut rules with `watch.Watcher`). While grading, ``f``
is a function of the submission's process (a `probes.Remote`): ``guarded`` only attaches the
rules, and the grader decides them itself, from the submitted source and the data that
comes back (`source_rules` and `verdicts` of the grading engine, the separate distribution
attnbook-grader); nothing of this module runs in the submission's process. Both places
word each rule, and snapshot the global random states, with `rules`.

``grad_of`` (the gradients of a function's output, chapter 4's fully masked rows) and
``calls_of`` (the calls a function makes to the step it is asked to use, chapter 2's online
softmax) live in `probes` and are re-exported here. Nothing here is secret: it is the list of
house rules the exercises state.
"""

from __future__ import annotations

import copy
import inspect
import random
import sys
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

import numpy as np
import torch

from attnbook.exercise_checks import rules as messages
from attnbook.exercise_checks.probes import Remote, calls_of, grad_of, gradient_call
from attnbook.exercise_checks.answer_allowlist import local_refusal
from attnbook.exercise_checks.loop_rule import local_loop
from attnbook.exercise_checks.watch import Watcher

__all__ = ["guarded", "grad_of", "gradient_call", "calls_of"]
_MAX_INPUT_BYTES = 50_000_000  # inputs larger than this are not snapshotted
_GENERATORS = (
    torch.Generator,
    np.random.Generator,
    np.random.RandomState,
    random.Random,
)  # meant to advance


# ----------------------------------------------------------------------------- snapshots
def _snapshot(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, np.ndarray):
        return value.copy()
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - an object we cannot copy is not checked
        return value


def _same(now: Any, before: Any) -> bool:
    if isinstance(before, torch.Tensor):
        if (
            not isinstance(now, torch.Tensor)
            or now.shape != before.shape
            or now.dtype != before.dtype
        ):
            return False
        if "meta" in (now.device.type, before.device.type):  # no numbers to compare
            return now.device == before.device
        a, b = now.detach().cpu().contiguous(), before.cpu().contiguous()
        if a.dtype in (torch.bfloat16,):
            a, b = a.float(), b.float()
        return a.numpy().tobytes() == b.numpy().tobytes()
    if isinstance(before, np.ndarray):
        return (
            isinstance(now, np.ndarray)
            and now.shape == before.shape
            and now.dtype == before.dtype
            and np.ascontiguousarray(now).tobytes()
            == np.ascontiguousarray(before).tobytes()
        )
    if isinstance(before, (list, tuple)):
        return (
            type(now) is type(before)
            and len(now) == len(before)
            and all(_same(a, b) for a, b in zip(now, before))
        )
    if isinstance(before, dict):
        return now.keys() == before.keys() and all(
            _same(now[k], before[k]) for k in before
        )
    try:
        return bool(now == before)
    except Exception:  # noqa: BLE001
        return True


def _size(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, np.ndarray):
        return value.nbytes
    return 0


# ----------------------------------------------------------------------------- the wrapper
def guarded(
    fn: Callable,
    *,
    libraries: Iterable[str] = (),
    names: Iterable[str] = (),
    allow_attnbook: bool = False,
    global_torch_rng: bool = False,
    new_object: bool = True,
    no_views: bool = False,
    loops: bool = True,
    separate_results: bool = False,
) -> Callable:
    """Wrap a student's function so that each call is checked as the module docstring says.

    libraries: top-level packages the function may not use (e.g. ("torch", "scipy") in a
    NumPy question); names: routines it may not call (e.g. ("softmax",)). global_torch_rng:
    the function may draw from PyTorch's global generator (sampling without a generator).
    new_object: fail if a returned object (or an item of a returned tuple) is an input.
    no_views: fail if it is a view of an input too (a question that asks for a new tensor).
    loops: False fails a function whose source (or that of a notebook function it calls)
    holds a Python for/while loop or a comprehension (a question that asks for whole-array
    operations); read from the source, here with `inspect`, in the grader from the submission.
    separate_results: fail if a result shares memory with what an earlier call (of this
    wrapper; in the grader, of the function) returned (a table cached and handed out twice).
    """
    rules = {
        "libraries": list(libraries),
        "names": list(names),
        "allow_attnbook": allow_attnbook,
        "global_torch_rng": global_torch_rng,
        "new_object": new_object,
        "no_views": no_views,
        "loops": loops,
        "separate_results": separate_results,
    }
    if isinstance(fn, Remote):
        return fn.with_rules(rules)
    if not callable(fn):
        raise AssertionError(
            f"expected a function, got {type(fn).__name__}: did the cell run?"
        )
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    libraries, names = tuple(libraries), tuple(names)
    looping = local_refusal(fn) or (None if loops else local_loop(fn))
    earlier: list = []  # the last results, kept alive (separate_results)

    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if looping:
            raise AssertionError(looping)
        try:
            bound = signature.bind(*args, **kwargs).arguments if signature else {}
        except TypeError:
            bound = {}
        labelled = dict(bound) or {f"argument {i + 1}": a for i, a in enumerate(args)}
        before = {
            k: _snapshot(v)
            for k, v in labelled.items()
            if _size(v) <= _MAX_INPUT_BYTES and not isinstance(v, _GENERATORS)
        }
        states = messages.rng_states()
        watcher = Watcher(libraries, names, allow_attnbook)
        previous = sys.getprofile()
        sys.setprofile(watcher)
        try:
            result = fn(*args, **kwargs)
        finally:
            replaced = sys.getprofile() is not watcher
            sys.setprofile(previous)
            if watcher.found:
                raise AssertionError(messages.shortcut(watcher.found[0]))
        if replaced:
            raise AssertionError(messages.PROFILER_REPLACED)
        changed = [k for k, old in before.items() if not _same(labelled[k], old)]
        moved = messages.moved_states(states, messages.rng_states())
        broken = messages.inputs_and_states(changed, moved, global_torch_rng)
        if broken:
            raise AssertionError(broken)
        if new_object:
            items = result if isinstance(result, tuple) else (result,)
            for item in items:
                for label, value in labelled.items():
                    if (
                        item is value
                        and isinstance(value, (torch.Tensor, np.ndarray, list))
                    ) or _alias(item, value):
                        raise AssertionError(messages.returned_input(label))
                    if no_views and _shares_memory(item, value):
                        raise AssertionError(messages.returned_view(label))
        if separate_results:
            _check_separate(result, earlier)
        return result

    return call


def _check_separate(result: Any, earlier: list) -> None:
    """The separate-results rule: `result` shares no memory with the `earlier` results (kept
    alive, so that their memory cannot be reused); then `result` joins them."""
    items = result if isinstance(result, tuple) else (result,)
    for old in earlier:
        for item in items:
            array = isinstance(item, (torch.Tensor, np.ndarray, list))
            if (item is old and array) or _shares_memory(item, old):
                raise AssertionError(messages.SHARED_RESULTS)
    earlier[:] = [*earlier, *items][-4:]


def _alias(a: Any, b: Any) -> bool:
    """True if `a` is another name for all of `b`: the same memory, shape and strides (x[:],
    x.view_as(x), x.detach(), np.asarray(x)); writing into one writes into the other."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return (
            a is not b
            and "meta" not in (a.device.type, b.device.type)  # no memory to share
            and a.numel() > 0
            and a.data_ptr() == b.data_ptr()
            and a.shape == b.shape
            and a.stride() == b.stride()
            and a.dtype == b.dtype
        )
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return (
            a is not b
            and a.size > 0
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape
            and a.strides == b.strides
            and a.dtype == b.dtype
        )
    return False


def _shares_memory(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return (
            a.numel() > 0
            and b.numel() > 0
            and "meta" not in (a.device.type, b.device.type)
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
        )
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.shares_memory(a, b))
    return False
