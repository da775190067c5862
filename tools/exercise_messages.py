"""What the exercises' tests say when they fail (issue 45, item 1), for the exercises tool.

* `course_test_files`: while otter writes an exercise's test files, they import
  `test_case` from `attnbook.exercise_checks.case` (one name per test, "No answer yet",
  hidden tests without the submission's data; that module says how) instead of otter's.
* `message_problems`: the proof's reading of a master's tests. Every assertion carries a
  message: an ``assert`` its text, NumPy's testing calls an ``err_msg``, PyTorch's
  ``assert_close`` a ``msg``; and a hidden test's messages interpolate nothing the
  submission returned but its shape, dtype, length or type (the expected values, the
  settings and the test's own data are fine). Returned data includes the library's own
  message in ``msg=lambda m: ...`` (torch's prints the values compared; its first line,
  ``m.splitlines()[0]``, does not) and the text of an exception the submission raised
  (``except ValueError as err``: its type may be named). Exercises in `HELD` fail their proof on a
  break; the others print it as a warning until their masters are converted.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from pathlib import Path

import nbformat

# the exercises whose proof fails on a message problem (an assertion without a message, a
# hidden message showing returned data); each is added once its master is converted
HELD = {
    "ex01_attention",
    "ex02_scaling",
    "ex03_multihead",
    "ex04_masks",
    "ex05_positional",
    "ex06_sampling",
    "ex07_cars",
    "ex08_gqa",
    "ex09_kv_quant",
    "ex10_induction",
    "ex11_linear_attention",
}
# the exercises whose proof also fails on the scoring policy
# (`tools.exercise_public_rule.scoring_problems`); the others print it as a warning
SCORING_HELD = {
    "ex01_attention",
    "ex02_scaling",
    "ex03_multihead",
    "ex04_masks",
    "ex05_positional",
    "ex06_sampling",
    "ex07_cars",
    "ex08_gqa",
    "ex09_kv_quant",
    "ex10_induction",
    "ex11_linear_attention",
}

OTTER_IMPORT = "from otter.test_files import test_case"
COURSE_IMPORT = "from attnbook.exercise_checks.case import test_case"

# NumPy's testing calls: the position of err_msg among their positional arguments
_ERR_MSG_AT = {
    "assert_allclose": 5,
    "assert_array_equal": 2,
    "assert_equal": 2,
    "assert_array_less": 2,
    "assert_almost_equal": 3,
    "assert_array_almost_equal": 3,
}
# what a hidden test may say about a value the submission returned
_SHAPE_ATTRIBUTES = {"shape", "dtype", "ndim", "device", "__name__", "is_contiguous"}
_SHAPE_CALLS = {"shape", "ndim", "len", "type", "isinstance"}
_RULE_WRAPPERS = {"guarded", "grad_of", "calls_of"}


@contextlib.contextmanager
def course_test_files() -> Iterator[None]:
    """While it is open, otter assign writes test files that import the course's
    `test_case` (`attnbook.exercise_checks.case`)."""
    from jinja2 import Template
    from otter.assign import tests_manager

    original = tests_manager.EXCEPTION_BASED_TEST_FILE_TEMPLATE
    text = _template_source()
    if OTTER_IMPORT not in text:
        raise RuntimeError(
            "otter's test file template no longer imports test_case as expected"
        )
    tests_manager.EXCEPTION_BASED_TEST_FILE_TEMPLATE = Template(
        text.replace(OTTER_IMPORT, COURSE_IMPORT)
    )
    try:
        yield
    finally:
        tests_manager.EXCEPTION_BASED_TEST_FILE_TEMPLATE = original


def _template_source() -> str:
    """The text of otter's exception-test template, read from its module's source."""
    import inspect

    from otter.assign import tests_manager

    for node in ast.parse(inspect.getsource(tests_manager)).body:
        if (
            isinstance(node, ast.Assign)
            and any(
                isinstance(t, ast.Name) and t.id == "EXCEPTION_BASED_TEST_FILE_TEMPLATE"
                for t in node.targets
            )
            and isinstance(node.value, ast.Call)
            and node.value.args
            and isinstance(node.value.args[0], ast.Constant)
            and isinstance(node.value.args[0].value, str)
        ):
            return node.value.args[0].value
    raise RuntimeError("otter's exception-test template was not found")


# ----------------------------------------------------------------------------- the reading
def _test_cells(nb: nbformat.NotebookNode) -> Iterator[tuple[int, str, str, bool]]:
    """(cell index, question, source, hidden) of every test cell of a master."""
    question, in_tests = "", False
    for index, cell in enumerate(nb.cells):
        first = (
            cell.source.strip().splitlines()[0].strip() if cell.source.strip() else ""
        )
        if cell.cell_type == "raw":
            if first == "# BEGIN QUESTION":
                found = [
                    line.split(":", 1)[1].strip()
                    for line in cell.source.splitlines()
                    if line.startswith("name:")
                ]
                question = found[0] if found else "?"
            in_tests = {"# BEGIN TESTS": True, "# END TESTS": False}.get(
                first, in_tests
            )
            continue
        if in_tests and cell.cell_type == "code":
            yield index, question, cell.source, first.upper().startswith("# HIDDEN")


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _missing_message(node: ast.AST) -> str:
    """What `node` lacks, or ""."""
    if isinstance(node, ast.Assert) and node.msg is None:
        return "an assert without a message"
    if isinstance(node, ast.Call):
        name = _call_name(node)
        keywords = {k.arg for k in node.keywords}
        if name in _ERR_MSG_AT and "err_msg" not in keywords:
            if len(node.args) <= _ERR_MSG_AT[name]:
                return f"{name} without err_msg"
        if name == "assert_close" and "msg" not in keywords:
            return "assert_close without msg"
    return ""


def _messages(node: ast.AST) -> list[ast.expr]:
    """The message expressions of an assertion node."""
    if isinstance(node, ast.Assert) and node.msg is not None:
        return [node.msg]
    if (  # raise AssertionError(message): a failure's message too
        isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and _call_name(node.exc) == "AssertionError"
    ):
        return list(node.exc.args)
    if isinstance(node, ast.Call):
        found = [k.value for k in node.keywords if k.arg in ("err_msg", "msg")]
        name = _call_name(node)
        if name in _ERR_MSG_AT and len(node.args) > _ERR_MSG_AT[name]:
            found.append(node.args[_ERR_MSG_AT[name]])
        return found
    return []


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _tainted(fn: ast.FunctionDef) -> set[str]:
    """The names of `fn` that hold what a student's function returned (or the function):
    its parameters that it calls or wraps, and every name assigned from them, in turn."""
    params = {a.arg for a in fn.args.args}
    roots = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in params:
                roots.add(node.func.id)
            if _call_name(node) in _RULE_WRAPPERS and node.args:
                roots |= _names(node.args[0]) & params
    tainted = set(roots)
    for _ in range(4):  # assignments in any order: a few passes reach the fixed point
        for node in ast.walk(fn):
            pairs: list[tuple[ast.AST, ast.AST]] = []
            if isinstance(node, ast.Assign):
                pairs = [p for t in node.targets for p in _paired(t, node.value)]
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value:
                pairs = _paired(node.target, node.value)
            elif isinstance(node, (ast.For, ast.comprehension)):
                pairs = _paired(node.target, node.iter, iterated=True)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                pairs = _paired(node.optional_vars, node.context_expr)
            elif isinstance(node, ast.Try):  # what the submission raised: its text
                body = ast.Module(body=node.body, type_ignores=[])
                if _names(body) & tainted:
                    tainted |= {h.name for h in node.handlers if h.name}
            for target, value in pairs:
                if _names(_shown(value)) & tainted:
                    tainted |= _names(target)
    return tainted


def _shown(value: ast.AST) -> ast.AST:
    """What an assigned value can hold: of ``"cpu" if test else "other"`` only its two
    branches (a choice between the test's own constants shows nothing returned)."""
    if isinstance(value, ast.IfExp):
        return ast.Tuple(
            elts=[_shown(value.body), _shown(value.orelse)], ctx=ast.Load()
        )
    return value


def _paired(
    target: ast.AST, value: ast.AST, iterated: bool = False
) -> list[tuple[ast.AST, ast.AST]]:
    """(target part, the value part it receives): tuples unpacked element by element, and
    a loop over `zip(...)`, `enumerate(...)` or a literal of tuples by position, so that a
    setting unpacked beside a result is not taken for the result."""
    if not isinstance(target, (ast.Tuple, ast.List)):
        return [(target, value)]
    parts = target.elts
    if iterated:
        if isinstance(value, ast.Call) and _call_name(value) == "zip":
            if len(value.args) == len(parts):
                return [(t, v) for t, v in zip(parts, value.args)]
        if isinstance(value, ast.Call) and _call_name(value) == "enumerate":
            if len(parts) == 2 and value.args:
                return [(parts[1], value.args[0])]
        if isinstance(value, (ast.Tuple, ast.List)) and all(
            isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) == len(parts)
            for e in value.elts
        ):
            columns = [
                ast.Tuple(elts=[e.elts[i] for e in value.elts])  # type: ignore[attr-defined]
                for i in range(len(parts))
            ]
            return [(t, c) for t, c in zip(parts, columns)]
        return [(target, value)]
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(parts):
        return [p for t, v in zip(parts, value.elts) for p in _paired(t, v)]
    return [(target, value)]


def _shows_data(expr: ast.expr, tainted: set[str]) -> bool:
    """The interpolated `expr` shows a value the submission returned (not only its shape,
    dtype, length or type)."""
    if not (_names(expr) & tainted):
        return False
    if isinstance(expr, ast.Attribute) and expr.attr in _SHAPE_ATTRIBUTES:
        return False
    if isinstance(expr, ast.Call) and _call_name(expr) in _SHAPE_CALLS:
        return False
    if (  # the first line of a library's own message: "Tensor-likes are not close!"
        isinstance(expr, ast.Subscript)
        and isinstance(expr.value, ast.Call)
        and _call_name(expr.value) == "splitlines"
        and isinstance(expr.slice, ast.Constant)
        and expr.slice.value == 0
    ):
        return False
    if isinstance(expr, ast.Subscript):
        return _shows_data(expr.value, tainted)
    if isinstance(expr, ast.Call) and _call_name(expr) in ("tuple", "list", "str"):
        return any(_shows_data(a, tainted) for a in expr.args)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if expr.func.attr in ("size", "dim", "is_contiguous", "stride"):
            return False
    return True


def _data_shown(messages: list[ast.expr], tainted: set[str]) -> list[str]:
    shown = []
    for message in messages:
        # `msg=lambda m: ...`: m is the library's message, which prints the values compared
        own = (
            {a.arg for a in message.args.args}
            if isinstance(message, ast.Lambda)
            else set()
        )
        for part in ast.walk(message):
            if isinstance(part, ast.FormattedValue) and _shows_data(
                part.value, tainted | own
            ):
                shown.append(ast.unparse(part.value))
    return shown


def message_problems(name: str, master: Path) -> list[str]:
    """Each assertion of the master's tests that breaks the rules of the module docstring,
    as "NAME qN test_x (cell C, line L): what"."""
    nb = nbformat.read(master, as_version=4)
    problems = []
    for index, question, source, hidden in _test_cells(nb):
        try:
            tree = ast.parse(source)
        except SyntaxError as err:
            problems.append(f"{name} {question} (cell {index}): {err}")
            continue
        for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
            tainted = _tainted(fn) if hidden else set()
            where = f"{name} {question} {fn.name}"
            for node in ast.walk(fn):
                missing = _missing_message(node)
                line = getattr(node, "lineno", 0)
                if missing:
                    problems.append(f"{where} (cell {index}, line {line}): {missing}")
                for expr in _data_shown(_messages(node), tainted) if hidden else []:
                    problems.append(
                        f"{where} (cell {index}, line {line}): a hidden test's message "
                        f"shows {{{expr}}}, a value the submission returned (say the "
                        "expected value, and only the shape, dtype or length of theirs)"
                    )
    return problems
