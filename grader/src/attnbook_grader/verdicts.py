"""The house rules the grader decides from the data a call sends back.

The process that runs a submission only executes and reports: the inputs after the call,
the global random states, and where each input and each returned item lives in memory
(`sandbox.memory_facts`: its identity, its first byte, its extent, shape, strides and
dtype). From those, here, in the grader: an input changed in place, a global random state
moved, an input (or a view of all of it) returned instead of a new object, a view returned
where the question asks for a new tensor (``no_views``), a process started, memory refused.
Each function returns the message of the first rule broken, or raises AssertionError with it;
the messages (and the names of the random states) are the course package's
`attnbook.exercise_checks.rules`, the ones the public checks give. Imports nothing else of
the grading package.
"""

from __future__ import annotations

from attnbook.exercise_checks import rules as messages
from attnbook.exercise_checks.rules import RNG_NAMES, shortcut

__all__ = [
    "RNG_NAMES",
    "house_rules",
    "shortcut",
    "returned_inputs",
    "shared_results",
    "process_events",
    "is_memory_error",
    "MEMORY_MESSAGE",
]

MEMORY_MESSAGE = (
    "memory: the code asked for more memory than the grader gives a submission "
    "(a few GiB; an allocation of many GB?): scored 0 on this question"
)


def house_rules(changed: list[str], moved: list[str], rules: dict) -> None:
    """The rules on inputs and global random states, from the data."""
    broken = messages.inputs_and_states(
        changed, moved, bool(rules.get("global_torch_rng"))
    )
    if broken:
        raise AssertionError(broken)


def _alias(a: dict, b: dict) -> bool:
    """`a` is another name for all of `b`: same first byte, shape, strides and dtype (never
    for tensors on the ``meta`` device: they hold no memory, only their identity counts)."""
    return (
        a["kind"] == b["kind"] in ("tensor", "array")
        and not (a.get("meta") or b.get("meta"))
        and a["id"] != b["id"]
        and a["numel"] > 0
        and a["ptr"] == b["ptr"]
        and a["shape"] == b["shape"]
        and a["strides"] == b["strides"]
        and a["dtype"] == b["dtype"]
    )


def _shares_memory(a: dict, b: dict) -> bool:
    """`a` and `b` share memory: tensors of one storage, arrays whose bytes overlap."""
    if a["kind"] != b["kind"] or a["kind"] not in ("tensor", "array"):
        return False
    if not (a["numel"] > 0 and b["numel"] > 0) or a.get("meta") or b.get("meta"):
        return False
    if a["kind"] == "tensor":
        return a["storage"] == b["storage"]
    return a["lo"] < b["hi"] and b["lo"] < a["hi"]


def returned_inputs(facts: dict, rules: dict) -> str | None:
    """The new-object rules, from `sandbox.memory_facts`: {"inputs": {label: fact},
    "results": [fact, ...]}."""
    for item in facts.get("results", []):
        if item.get("subclass"):
            return messages.returned_subclass(item["subclass"])
    if not rules.get("new_object", True) and not rules.get("no_views"):
        return None
    for item in facts.get("results", []):
        for label, value in facts.get("inputs", {}).items():
            same = item["id"] == value["id"] and value["kind"] in (
                "tensor",
                "array",
                "list",
            )
            if rules.get("new_object", True) and (same or _alias(item, value)):
                return messages.returned_input(label)
            if rules.get("no_views") and (same or _shares_memory(item, value)):
                return messages.returned_view(label)
    return None


def shared_results(facts: dict, rules: dict) -> str | None:
    """The separate-results rule (``separate_results=True``): no returned item shares memory
    with an item an earlier call of the same function returned, both alive in the child
    (a table cached between calls and handed out again: the caller who writes into one
    result writes into the other). From `sandbox.memory_facts`' "results" and "earlier"."""
    if not rules.get("separate_results"):
        return None
    for item in facts.get("results", []):
        for old in facts.get("earlier", []):
            same = item["id"] == old["id"] and item["kind"] in (
                "tensor",
                "array",
                "list",
            )
            if same or _shares_memory(item, old):
                return messages.SHARED_RESULTS
    return None


def process_events(events: list[str]) -> str | None:
    """The message for code that tried to start processes (audit events), or None."""
    if not events:
        return None
    return (
        f"processes: the code tried to start another process ({events[0]}); a submission "
        "may not fork, spawn or run commands (the grader refuses and ends them): scored 0 "
        "on this question"
    )


def is_memory_error(raised: dict | None) -> bool:
    """Whether an exception reported as data is a refused allocation."""
    if not raised:
        return False
    return bool(raised.get("memory")) or "can't allocate memory" in str(
        raised.get("message", "")
    )
