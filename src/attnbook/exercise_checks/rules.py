"""The house rules' messages, and the snapshot of the global random states they watch,
written once for the two places a rule is decided.

A rule is decided in the student's process by `grading.guarded` (the public checks) and,
while grading, by the grading engine (the distribution attnbook-grader: its `verdicts`,
`rng` and `session` import this module; this module imports nothing of it). Each place
finds the facts its own way (live objects here, data sent back by the submission's
process there) and turns them into a message here, so that a student reads the same words
from the public check and from the grade (and an exception raised in the submission's
process is rebuilt one way, `exception_from`). Needs NumPy; PyTorch only where its state is asked
for, so that a grader's process that must not hold PyTorch can import it.
"""

from __future__ import annotations

import builtins
import random
from typing import Any

import numpy as np

__all__ = [
    "RNG_NAMES",
    "rng_states",
    "moved_states",
    "inputs_and_states",
    "changed_input",
    "moved_state",
    "returned_input",
    "returned_view",
    "returned_subclass",
    "shortcut",
    "SHARED_RESULTS",
    "PROFILER_REPLACED",
    "exception_from",
]

# the global generators, in the order `rng_states` lists them (and the wire carries them)
RNG_NAMES = {
    "torch": "PyTorch's global generator (torch.manual_seed or a draw without generator=)",
    "numpy": "NumPy's global generator (np.random.seed or a draw from np.random.*)",
    "random": "Python's random module (random.seed or a draw from random.*)",
}
SHARED_RESULTS = (
    "your function returned memory that an earlier call's result also "
    "holds (a table kept between calls and returned again?): a caller who "
    "changes one result changes the other; return a new array each call "
    "(a copy of what you keep)"
)
PROFILER_REPLACED = (
    "your function changed the profiler (sys.setprofile) used by the grader"
)


# ----------------------------------------------------------------------------- the states
def rng_states(with_torch: bool = True) -> dict[str, Any]:
    """The global random states, keyed as `RNG_NAMES`: PyTorch's (None without
    `with_torch`, and PyTorch is then not imported), NumPy's and Python's `random` module's
    (its 625 numbers as one uint32 array: one field on the wire, not 625)."""
    torch_state = None
    if with_torch:
        import torch

        torch_state = torch.get_rng_state()
    version, internal, gauss = random.getstate()
    return {
        "torch": torch_state,
        "numpy": np.random.get_state(),
        "random": (version, np.array(internal, dtype=np.uint32), gauss),
    }


def _fingerprint(what: str, state: Any) -> Any:
    """`state` as a value `==` can compare (arrays and tensors as their bytes)."""
    if state is None:
        return None
    if what == "torch":
        return bytes(np.asarray(state.numpy() if hasattr(state, "numpy") else state))
    if what == "numpy":
        kind, keys, pos, has_gauss, cached = state
        return (str(kind), np.asarray(keys).tobytes(), int(pos), int(has_gauss), cached)
    version, internal, gauss = state
    return (int(version), np.asarray(internal, dtype=np.uint32).tobytes(), gauss)


def moved_states(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The keys of the global generators whose state differs between two `rng_states`."""
    return [
        what
        for what in RNG_NAMES
        if _fingerprint(what, before[what]) != _fingerprint(what, after[what])
    ]


# ----------------------------------------------------------------------------- the rules
def changed_input(label: str) -> str:
    """The in-place rule, broken on the input called `label`."""
    return (
        f"your function changed its input `{label}` in place: "
        "work on a copy, the caller still needs the original"
    )


def moved_state(what: str) -> str:
    """what: a key of `RNG_NAMES`."""
    name = RNG_NAMES[what]  # "global" said once: a generator's name already says it
    state = "the state of" if "global" in name else "the global random state of"
    return (
        f"your function changed {state} {name}: "
        "use a local generator made from the seed or the one you are given"
    )


def inputs_and_states(
    changed: list[str], moved: list[str], global_torch_rng: bool = False
) -> str | None:
    """The rules on inputs and global random states: the message of the first one broken,
    or None. changed: the labels of the inputs changed in place; moved: the keys of the
    generators whose state moved; global_torch_rng: PyTorch's may move (sampling without
    a generator)."""
    if changed:
        return changed_input(changed[0])
    for what in moved:
        if what == "torch" and global_torch_rng:
            continue
        return moved_state(what)
    return None


def returned_input(label: str) -> str:
    """The new-object rule: the input `label` (or a view of all of it) came back."""
    return (
        f"your function returned its input `{label}` itself (or a "
        "view of all of it, such as x[:] or x.view_as(x)); return a "
        "new object (the caller's one must stay as it was)"
    )


def returned_view(label: str) -> str:
    """The no-views rule: what came back shares memory with the input `label`."""
    return (
        f"your function returned a view of its input `{label}` "
        "(the two share memory): return a new tensor or array"
    )


def returned_subclass(kind: str) -> str:
    """What came back is a `kind`, a subclass of a tensor or an array (the grader's rule:
    such an object may carry its own code into the grader's process)."""
    return (
        f"your function returned a {kind}, a subclass of a tensor or "
        "an array: return a plain torch.Tensor or numpy.ndarray"
    )


def shortcut(found: str, detail: str | None = None) -> str:
    """The ruled-out-routine rule, one sentence wherever it is seen: `found`, the routine
    the function reached that the question asks it to write; `detail`, where there is one
    (the grader's source reading: why and where; a routine the grader took away:
    `ruled_out`)."""
    more = f" ({detail})" if detail else ""
    return (
        f"shortcut: your function uses {found}{more}; "
        "the question asks you to write this step yourself"
    )


def ruled_out(names: list[str]) -> str:
    """What a routine the grader took away (`attnbook_grader.disarm`) raises when called."""
    one = len(names) == 1
    return shortcut(
        " and ".join(names),
        f"{'it is' if one else 'they are'} ruled out in this question: the grader took "
        f"{'it' if one else 'them'} away",
    )


_ALLOWED_ONLY = (
    "use only the modules and builtins the exercise allows, and attributes by their "
    "written name"
)


def refused(what: str, where: str, costs: bool = True) -> str:
    """The allowlist's refusal (`answer_allowlist`) where it is the gate: a practice grade,
    without isolation (`attnbook_grader.jail`): `what` an answer cell may not hold, `where`
    it stands; `costs`: whether a question's functions use it."""
    cost = (
        "the question that uses it scores 0"
        if costs
        else "no question's functions use it, so it costs no points"
    )
    return (
        f"dynamic code / tampering: not allowed in an answer cell: {what} ({where}); a "
        f"practice grade (no isolation) does not run this statement, and {cost}: "
        f"{_ALLOWED_ONLY}"
    )


def refused_hint(what: str, where: str) -> str:
    """The allowlist's word in the public checks, an early hint: what it finds, and that
    the grade for credit does not depend on it."""
    return (
        f"dynamic code / tampering: not allowed in an answer cell: {what} ({where}); a "
        "hint: the grade for credit runs it where the ruled-out code is not there, and "
        f"counts only what the tests see: {_ALLOWED_ONLY}"
    )


def would_refuse(what: str, where: str) -> str:
    """What a grade for credit (an isolated child, `attnbook_grader.jail`) notes of the
    allowlist's finding: the statement ran there, and its questions score what their
    tests saw."""
    return (
        f"dynamic code / tampering: the allowlist would refuse {what} ({where}): not "
        "counted; graded in an isolated process, the statement ran there and its "
        f"questions score what their tests see: {_ALLOWED_ONLY}"
    )


def exception_from(raised: dict) -> BaseException:
    """The exception a submission's (or the reference's) process reported as data (the
    grading engine's `sandbox.report_exception`), to raise again where the call was made:
    its builtin type (else RuntimeError), its message led by its own type's name where that
    is not the builtin's (a ShapeError reaches the test as "ShapeError: ...")."""
    kind = getattr(builtins, str(raised.get("type")), None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = RuntimeError
    name = str(raised.get("name", ""))
    message = str(raised.get("message", ""))
    return kind(message if name == kind.__name__ else f"{name}: {message}")


def cut(text: str, limit: int) -> str:
    """`text`, or where it is longer than `limit`, its words up to the limit and "…" (a
    hint cut in the public checks and in the grade alike)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:") + "…"
