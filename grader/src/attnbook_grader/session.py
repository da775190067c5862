"""One notebook running in a child process, and the calls into it: the half
of the grading engine (`engine`) that talks to the process where student code runs.

`Session` starts the child (`sandbox.serve`, forked from a server that imported PyTorch and
NumPy but never ran student code) and calls its functions: the inputs go as data
(`wire`); the result, the inputs after the call, the global random states and where inputs
and results live in memory come back as data. The house rules are decided here, in the
grader: the shortcut rules an isolated child does not enforce by itself (`reach.left_to_read`)
from the submitted source (`judge`, given by `engine`, from `source_rules`), the rest from
the data (`verdicts`); the child's profiler watcher only adds a second opinion. `RemoteFunction` is what a hidden test holds in place of a student's
function. Starting, restarting, time limits and the checked wire are `child.Child`'s.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from attnbook_grader import reach, verdicts, wire
from attnbook_grader.child import (
    CallLost,
    Child,
    SubmissionGone,
    SubmissionTimeout,
    _Broken,
    _Late,
)
from attnbook.exercise_checks.probes import Remote, shape_of
from attnbook.exercise_checks.rules import moved_states
from attnbook_grader.rng import SAME_STATES, rng_states, set_rng_states
from attnbook.exercise_checks.rules import exception_from as _exception

__all__ = [
    "Session",
    "RemoteFunction",
    "SubmissionTimeout",
    "SubmissionGone",
    "CallLost",
]


class Session(Child):
    """One notebook running in a child process (`child.Child`), and the calls into it."""

    reference: Session | None
    judge: Callable[[str, dict], str | None] | None

    def _callback(self, name: str, reply: dict, deadline: float) -> dict:
        wanted = reply["callback"]
        allowed = set(self.swaps.get(name, [])) | set(self._record)
        if wanted in self._record:
            self.recorded.append(self._shapes(wanted, reply))
        if self.reference is not None and wanted in allowed:
            try:
                return self.reference.call_raw(
                    wanted,
                    reply["args"],
                    reply["kwargs"],
                    reply["rng"],
                    deadline=deadline,
                )
            except CallLost as err:
                raise (
                    _Late() if "timed out" in str(err) else _Broken(str(err))
                ) from None
        return {
            "raised": {
                "type": "AssertionError",
                "message": f"{_echo(wanted)} is not available while {name} runs",
            },
            "args_after": reply["args"],
            "kwargs_after": reply["kwargs"],
            "rng": reply["rng"],
        }

    def describe(self, name: str) -> dict:
        if name not in self.known:
            deadline, limit = self._deadline()
            reply = self._ask(name, {"op": "describe", "name": name}, deadline, limit)
            self.known[name] = wire.checked_description(reply)
        return self.known[name]

    def call_raw(
        self,
        name: str,
        args: Any,
        kwargs: Any,
        rng: Any,
        rules: dict | None = None,
        grad: dict | None = None,
        record: str | None = None,
        deadline: float | None = None,
        seconds: float | None = None,
    ) -> dict:
        """One call, all in wire form; answers the child's calls of the reference meanwhile.
        record: a function of the submission that is the reference's during this call, each
        of its calls logged in `self.recorded` (the shapes of its inputs). deadline: the
        caller's (a callback shares the student's call's); seconds: a shorter limit than
        `CALL_SECONDS` (`RemoteFunction.within`)."""
        own, limit = self._deadline(seconds)
        if deadline is not None:
            own, limit = deadline, max(0.0, deadline - time.monotonic())
        self._record = [record] if record else []
        self.rng_kept = None  # known again once `call` reads the reply
        request = {"op": "call", "name": name, "args": args, "kwargs": kwargs}
        request.update(rng=rng, rules=rules, grad=grad, record=record)
        return self._ask(name, request, own, limit)

    def _shapes(self, name: str, reply: dict) -> list:
        """The shapes of the inputs of a call of `name`, in the order of its parameters."""
        args, kwargs = wire.decode([reply["args"], reply["kwargs"]])  # one frame
        described = self.reference.describe(name) if self.reference else {}
        params = described.get("params", [])
        ordered = list(args) + [kwargs.get(p) for p in params[len(args) :]]
        return [shape_of(a) for a in ordered]

    def call(
        self,
        name: str,
        args: tuple,
        kwargs: dict,
        rules: dict | None = None,
        grad: dict | None = None,
        record: str | None = None,
        seconds: float | None = None,
    ) -> Any:
        """Call the child's `name` with these inputs as a local call would behave: the result,
        the inputs changed in place and the global random states moved as the child's did.
        With `rules`, the house rules are decided here (AssertionError); with `seconds`,
        the call must return within them (else its question is lost)."""
        if rules is not None and self.judge is not None:
            # an isolated child enforces its ruled-out packages by itself (`reach`)
            read = (
                rules if self.how is None else reach.left_to_read(rules, self.without)
            )
            found = self.judge(name, read)
            if found:
                raise AssertionError(found)
        sent_args, sent_kwargs = wire.encode([list(args), kwargs])  # one frame
        states = rng_states()
        kept = self.rng_kept  # the child's, as it last reported them
        same = kept is not None and not moved_states(kept, states)
        sent_rng = SAME_STATES if same else wire.encode(states)
        self.recorded = []
        reply = self.call_raw(
            name, sent_args, sent_kwargs, sent_rng, rules, grad, record, None, seconds
        )
        if "crash" in reply:
            raise AssertionError(
                f"the grader could not use what {name} returned: {_echo(reply['crash'])}"
            )
        sent = [sent_args, sent_kwargs]
        after = [
            then if now == wire.SAME_INPUTS else now
            for now, then in zip([reply["args_after"], reply["kwargs_after"]], sent)
        ]
        # the inputs came back as they were sent: nothing to decode or copy
        unchanged = sent == after
        try:
            after_args, after_kwargs = ([], {}) if unchanged else wire.decode(after)
            rng_after = (
                states if reply["rng"] == SAME_STATES else wire.decode(reply["rng"])
            )
            result = wire.decode(reply["result"]) if "result" in reply else None
        except wire.WireError as err:
            raise self._lose(
                name, f"refused: {name} sent what is not data ({err}): scored 0"
            ) from None
        changed = []
        # which input? (the frame's text also equates a tuple with its list and NaN with
        # itself)
        if not unchanged and wire.dumps({"v": sent}) != wire.dumps({"v": after}):
            before = wire.decode([sent_args, sent_kwargs])
            changed = [
                label
                for label, old, new, now in self._inputs(
                    name, args, kwargs, before, [after_args, after_kwargs]
                )
                if _values(old) != _values(new) and not _is_generator(now)
            ]
        if not unchanged:
            for old, new in zip(args, after_args):
                wire.update_in_place(old, new)
            for key, old in kwargs.items():
                wire.update_in_place(old, after_kwargs.get(key))
        moved = moved_states(states, rng_after)
        if rng_after is not states:  # else: this process's, untouched meanwhile
            set_rng_states(rng_after)
        self.rng_kept = rng_after
        self._note(name, reply)
        if rules is not None:
            verdicts.house_rules(changed, moved, rules)
            _second_opinion(reply)
            memory = reply.get("memory") or {}
            aliased = verdicts.returned_inputs(memory, rules)
            aliased = aliased or verdicts.shared_results(memory, rules)
            if aliased:
                raise AssertionError(aliased)
        if "raised" in reply:
            raise _exception(reply["raised"])
        return result

    def _note(self, name: str, reply: dict) -> None:
        """Keep what the child reported that costs the whole question."""
        events = [str(e) for e in reply.get("events") or []]
        if events:
            self.events.setdefault(name, []).extend(events)
            raise AssertionError(verdicts.process_events(events))
        if verdicts.is_memory_error(reply.get("raised")):
            self.memory.add(name)
            raise AssertionError(verdicts.MEMORY_MESSAGE)

    def _inputs(
        self, name: str, args: tuple, kwargs: dict, before: list, after: list
    ) -> list[tuple[str, Any, Any, Any]]:
        """(label, value sent, value after the call, the caller's object) per input;
        before, after: [args, kwargs] as decoded."""
        params = self.describe(name).get("params", [])
        rows = [
            (params[i] if i < len(params) else f"argument {i + 1}", old, new, now)
            for i, (old, new, now) in enumerate(zip(before[0], after[0], args))
        ]
        kept = after[1] if isinstance(after[1], dict) else {}
        rows += [
            (key, old, kept.get(key), kwargs.get(key)) for key, old in before[1].items()
        ]
        return rows


def _echo(text: Any, limit: int = 200) -> str:
    """What the child sent, as the grader repeats it in a message: at most `limit`
    characters (a name or a crash report can be as long as the submission makes it)."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _values(value: Any) -> str:
    """The values in `value` (tensors and arrays as their elements, not their storage)."""
    return json.dumps(wire.encode(value, {"$flat": True}))


def _is_generator(value: Any) -> bool:
    import random

    import numpy as np
    import torch

    return isinstance(value, (torch.Generator, np.random.Generator, random.Random))


def _second_opinion(reply: dict) -> None:
    """The child's profiler watcher: it can only take points away."""
    found = reply.get("watcher")
    if found:
        raise AssertionError(verdicts.shortcut(found))


class RemoteFunction(Remote):
    """A function of the submission (or of the reference), called in its own process."""

    def __init__(
        self,
        session: Session,
        name: str,
        rules: dict | None = None,
        seconds: float | None = None,
    ):
        self.session, self.name, self.rules = session, name, rules
        self.seconds = seconds
        self.__name__ = name

    def with_rules(self, rules: dict) -> RemoteFunction:
        return RemoteFunction(self.session, self.name, rules, self.seconds)

    def within(self, seconds: float) -> RemoteFunction:
        """The same function, each call of which must return within `seconds` (at most
        `CALL_SECONDS`): for calls a right answer ends at once (a refused input), so that a
        wrong one that never returns costs its question that much time, not the whole
        limit. The question is lost as after any call past its limit."""
        return RemoteFunction(self.session, self.name, self.rules, float(seconds))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.session.call(
            self.name, args, kwargs, self.rules, seconds=self.seconds
        )

    def gradient(
        self, args: list, wrt: list[int], output: int | None, upstream: Any
    ) -> Any:
        grad = {"wrt": wrt, "output": output, "upstream": wire.encode(upstream)}
        return self.session.call(
            self.name, tuple(args), {}, self.rules, grad, seconds=self.seconds
        )

    def recording(self, inner: str, args: list) -> tuple[Any, list[list]]:
        """Call with the submission's function `inner` replaced by the reference's: (the
        result, the shapes of the inputs of each call of `inner`)."""
        result = self.session.call(
            self.name, tuple(args), {}, self.rules, record=inner, seconds=self.seconds
        )
        return result, list(self.session.recorded)

    def __repr__(self) -> str:
        return f"<function {self.name} of the submission>"
