"""How one check of the exercises runs, on both paths: the test files import `test_case` from
here (`tools/exercise_messages.course_test_files` makes otter write them so), a subclass of
otter's decorator that changes only what a failed check says.

* **One name per test:** a check is named after its function (``test_vector``), in the
  notebook's ``grader.check`` and in the grade, not otter's ``q1 - 3``.
* **No answer yet:** a check whose function is still the student notebook's stub (a body of
  ``...``, ``pass`` or ``raise NotImplementedError`` under its docstring) fails with one line
  saying so, instead of the TypeError the stub's ``None`` would cause.
* **Which earlier answer failed** (``grader.check`` only): a check that fails while the
  student's function calls their answer to another question whose own public checks fail,
  or that is still a stub, says so first ("fix q1 first"); grading runs the course's answer
  there, so only that question loses points.
* **Hidden tests show no data the submission sent back** (grading only): the test's own
  assertion message, the ``err_msg``/``msg`` of a NumPy or PyTorch comparison (its arrays
  cut), and the grader's house-rule verdicts stay; what the submission's function raised
  is named by its type alone. Public checks keep their full messages.
* otter strips quotes from both ends of a message (``'NoneType' object ...`` lost its first
  one); a space keeps them.
"""

from __future__ import annotations

import ast
import contextvars
import inspect
import sys
import textwrap
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from otter.test_files import test_case as _otter_case

from attnbook.exercise_checks.probes import Remote
from attnbook.exercise_checks.rules import cut

__all__ = ["test_case", "is_stub_source", "NO_ANSWER"]

NO_ANSWER = "No answer yet"
HIDDEN_LIMIT = 600  # characters of a hidden test's message that reach the student
# how the grader's own house-rule verdicts begin (`attnbook_grader.verdicts`, `session`):
# kept in a hidden test's feedback, since they hold no data of the submission's
_VERDICTS = (
    "your function",
    "loop:",
    "shortcut:",
    "memory:",
    "processes:",
    "refused:",
    "the grader could not use",
    "expected a function",
    "no gradient flows",
)
_NOISE = (
    "Mismatched elements",
    "Max absolute difference",
    "Max relative difference",
    "Greatest absolute difference",
    "Greatest relative difference",
    "x:",
    "y:",
    "ACTUAL:",
    "DESIRED:",
    "(shapes",
)
_checking_others: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "checking_others", default=False
)


# ----------------------------------------------------------------------------- stubs
def is_stub_source(source: str, name: str | None = None) -> bool | None:
    """True if the function `name` (any function where None) that `source` defines last is a
    stub: its body, after the docstring, only ``...``, ``pass`` or ``raise
    NotImplementedError``; None if `source` defines no such function."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    found = [
        n
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (name is None or n.name == name)
    ]
    if not found:
        return None
    body = list(found[-1].body)  # the last definition is the one that runs
    if body and _is_docstring(body[0]):
        body = body[1:]
    return all(_is_placeholder(s) for s in body)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _is_placeholder(node: ast.stmt) -> bool:
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return node.value.value is Ellipsis
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _stub(value: Any) -> bool:
    """`value` is a student's function that is still a stub (read from its source)."""
    if isinstance(value, Remote):  # grading: the source the submission's process runs
        name = getattr(value, "name", None)
        sources = getattr(getattr(value, "session", None), "sources", None)
        if not isinstance(name, str) or not isinstance(sources, list):
            return False
        for source in reversed(sources):  # the last cell that defines it
            if isinstance(source, str) and f"def {name}" in source:
                found = is_stub_source(source, name)
                if found is not None:
                    return found
        return False
    if isinstance(value, types.FunctionType):
        try:
            return bool(is_stub_source(inspect.getsource(value), value.__name__))
        except (OSError, TypeError):
            return False
    return False


def _no_answer(names: Iterable[str]) -> str:
    listed = ", ".join(f"`{n}`" for n in names)
    return (
        f"{NO_ANSWER}: {listed} is still the stub the notebook came with (`...`); write "
        "its body, run its cell, then run this check again"
    )


# ----------------------------------------------------------------------------- tracebacks
def _at(err: BaseException, tb: types.TracebackType | None) -> BaseException:
    """`err` with the traceback `tb` (from the test function's frame on): otter reads the
    failing line two frames below its own, the test's."""
    return err.with_traceback(tb)


def _at_line(err: BaseException, fn: Callable) -> BaseException:
    """`err` as if raised on the first line of the test function `fn`."""
    line = getattr(getattr(fn, "__code__", None), "co_firstlineno", 1)
    return err.with_traceback(types.TracebackType(None, sys._getframe(), 0, line))


def _innermost(tb: types.TracebackType | None) -> types.TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _kept_lines(message: str) -> str:
    """A comparison's message without the data NumPy or PyTorch print after the test's own
    ``err_msg``/``msg``."""
    kept = []
    for line in message.splitlines():
        stripped = line.strip()
        if stripped.startswith(_NOISE) or stripped.startswith(
            ("[", "array(", "tensor(")
        ):
            break
        if stripped:
            kept.append(stripped)
    return " ".join(kept)


def _from_submission(err: BaseException, tb: types.TracebackType | None) -> bool:
    """`err` is what the submission's function raised, rebuilt by the grader (its message
    is the submission's text), not one of the grader's verdicts."""
    if tb is None:
        return True
    reply = tb.tb_frame.f_locals.get("reply")
    raised = reply.get("raised") if isinstance(reply, dict) else None
    if isinstance(raised, dict):
        text = str(raised.get("message", ""))
        if str(err) == text or str(err).endswith(f": {text}"):
            return True
    message = str(err).strip()
    grader = type(err).__name__ == "CallLost" or (
        isinstance(err, AssertionError) and message.startswith(_VERDICTS)
    )
    return not grader


def _quotes_kept(message: str) -> str:
    """`message` padded with a space where it begins or ends with a quote: otter strips quotes
    off both ends of a failing test's message (``'tuple' object has no attribute 'shape'``)."""
    if message.startswith("'") or message.endswith("'"):
        return f" {message} "
    return message


def _hidden_message(err: BaseException, test: Callable) -> str:
    """What a hidden test's failure may show the student (see the module docstring)."""
    tb = _innermost(err.__traceback__)
    where = tb.tb_frame.f_code.co_filename.replace("\\", "/") if tb else ""
    message = str(err).strip()
    if tb is not None and tb.tb_frame.f_code is getattr(test, "__code__", None):
        return cut(
            message, HIDDEN_LIMIT
        )  # the test's own line (its interpolations are linted)
    if "numpy/testing" in where or "torch/testing" in where:
        return cut(_kept_lines(message), HIDDEN_LIMIT)
    if not _from_submission(err, tb):
        return cut(message, HIDDEN_LIMIT)
    return (
        f"your function raised {type(err).__name__} in this hidden test (a hidden test "
        "does not show the message; your answer should not raise on valid inputs)"
    )


# ----------------------------------------------------------------------------- earlier answers
def _questions_of(folder: Path, own: str) -> dict[str, str]:
    """function parameter name -> its question, from the other test files in `folder`."""
    found: dict[str, str] = {}
    for path in sorted(folder.glob("q*.py")):
        if path.stem == own:
            continue
        try:
            tree = ast.parse(path.read_text())
        except (OSError, SyntaxError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                for arg in node.args.args:
                    found.setdefault(arg.arg, path.stem)
    return found


def _names_used(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return names


def _earlier_answers(test: Callable, kwargs: dict, env: dict) -> str:
    """ "" or a sentence naming the student's answers to other questions that the failing
    check ran through their function and that are stubs or fail their own public checks."""
    path = Path(test.__code__.co_filename)
    if not path.is_file():
        return ""
    others = _questions_of(path.parent, path.stem)
    blamed = []
    for value in kwargs.values():
        if not isinstance(value, types.FunctionType):
            continue
        for name in sorted(_names_used(value.__code__)):
            question = others.get(name)
            other = env.get(name) if question else None
            if not isinstance(other, types.FunctionType) or other is value:
                continue
            if _stub(other):
                blamed.append(f"`{name}` ({question}), which has no answer yet")
            elif not _passes(path.with_name(f"{question}.py"), env):
                blamed.append(
                    f"`{name}` ({question}), which fails {question}'s own public checks"
                )
    if not blamed:
        return ""
    return (
        f"this check ran your answer, which calls your {'; '.join(sorted(set(blamed)))}: "
        "fix that first (grading uses the course's version there, so only that question "
        "loses points). What this check saw: "
    )


def _passes(path: Path, env: dict) -> bool:
    """Every public check of the test file `path` passes in `env`."""
    from otter.test_files.exception_test import ExceptionTestFile

    token = _checking_others.set(True)
    try:
        test_file = ExceptionTestFile.from_file(str(path))
        test_file.run(env)
        return all(r.passed for r in test_file.test_case_results)
    except Exception:  # noqa: BLE001 - a check that cannot run says nothing here
        return True
    finally:
        _checking_others.reset(token)


# ----------------------------------------------------------------------------- the decorator
class test_case(_otter_case):  # noqa: N801 - the name the test files use
    """otter's ``test_case``, named after its function, with the course's messages."""

    def __call__(self, test_func: Callable[..., None]) -> test_case:
        super().__call__(test_func)
        if getattr(self, "name", None) is None:
            self.name: str | None = test_func.__name__
        return self

    def call_func(self, global_environment: Any) -> None:
        params = self._get_func_params()
        kwargs = {
            p: global_environment if p == "env" else global_environment.get(p, None)
            for p in params
        }
        stubs = [name for name, value in kwargs.items() if _stub(value)]
        if stubs:
            raise _at_line(AssertionError(_no_answer(stubs)), self.test_func)
        grading = any(isinstance(v, Remote) for v in kwargs.values())
        try:
            self.test_func(**kwargs)
        except Exception as err:
            below = err.__traceback__.tb_next if err.__traceback__ else None
            if grading and self.hidden:
                message = _quotes_kept(_hidden_message(err, self.test_func))
                raise _at(AssertionError(message), below) from None
            prefix = ""
            if not grading and not _checking_others.get():
                prefix = _earlier_answers(self.test_func, kwargs, global_environment)
            message = str(err)
            if prefix:
                raise _at(AssertionError(prefix + message), below) from None
            if err.args == (message,) and _quotes_kept(message) != message:
                err.args = (_quotes_kept(message),)  # AttributeError's own __str__ too
            raise
