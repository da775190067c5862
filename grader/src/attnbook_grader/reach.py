"""The shortcut rules enforced by what the answer's process can reach, not by
reading its source.

A hidden test states a question's rule with `guarded(fn, libraries=..., allow_attnbook=...)`.
`question_reach` reads those calls from the exercise's test files (trusted, read before any
submission runs): per question, the top-level packages its answers may not use, the course
package ``attnbook`` among them unless the question allows it. Questions with the same set
run their answers in one child process (`groups`), built so that the ruled-out code is not
there:

* not importable: the child's view of the machine (`jail`) lacks their files (`hidden`):
  the package's folder (PyTorch for a NumPy question), or every module of ``attnbook`` but
  its public checks and its plotting helpers (the package's own solutions: `kvquant`,
  `induction`, ...); at the chroot level there are no files at all;
* not already imported: the child is forked from a process server that never imported them
  (`server_for`: PyTorch's questions share the usual server, a question that rules PyTorch
  out gets one started without it, `torchless`), and before the first cell runs the child
  checks that none of them is in ``sys.modules`` (`check_absent`), or refuses to run;
* not lent by the setup: the names the trusted cells bind to modules outside the answers'
  allowlist (``os``, ``sys``, ``subprocess``, ``importlib``, ``otter``) are removed before
  the next cell runs (`scrub_lent`).

* not callable: a routine a question names (``names=``) that a package its answers keep
  defines (PyTorch's fused attention in a PyTorch question) is taken away in the child before
  the first cell (`disarm`: a Python routine's code replaced in place, a compiled one's
  ATen kernels replaced by ones that raise); its entry in the ruled-out set is
  ``routine:NAME``, so questions with other routines get another child.

What such a child enforces, the grader no longer reads from the source (`left_to_read`):
the ruled-out packages, the routines a question names that only they define (the package's
own solutions), and the routines `disarm` takes away; reading them could only add false
positives (a student's own function that shares the routine's name). The source read keeps
a compiled routine `disarm` does not cover, and the loop rule, which no process layout can
enforce.

Then every spelling of a ruled-out routine (a name lent by the setup, a string run by an
allowed module, an attribute read by a ``match`` pattern, a path to the builtins module, a
routine smuggled through a container) reaches nothing: the import fails in the answer's own
process and the question's tests fail with it.
"""

from __future__ import annotations

import ast
import functools
import os
import sys
import types
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

from attnbook_grader import disarm

__all__ = [
    "ATTNBOOK_KEPT",
    "question_reach",
    "groups",
    "hidden",
    "check_absent",
    "enforce",
    "routines",
    "ROUTINE",
    "scrub_lent",
    "heavy",
    "left_to_read",
]

# what of `attnbook` a child that rules the package out still holds: its public checks (the
# engine's probes and watcher live there) and the plotting helpers the notebooks import
ATTNBOOK_KEPT = frozenset({"__init__.py", "exercise_checks", "plot.py", "py.typed"})
_KEPT_MODULES = ("attnbook", "attnbook.plot", "attnbook.exercise_checks")
HEAVY = frozenset({"torch"})  # ruled-out packages the usual process server holds
ROUTINE = "routine:"  # a ruled-out set's entry that names a routine, not a package


def _guarded_calls(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name == "guarded":
                yield node


def _literal(node: ast.expr | None, default: Any) -> Any:
    if node is None:
        return default
    try:
        return ast.literal_eval(node)
    except ValueError:
        return default


def _rule_of(call: ast.Call) -> frozenset[str]:
    """What one `guarded` call rules out: packages (attnbook unless it allows it), and as
    ``routine:NAME`` each routine of ``names`` that a package the answers keep defines and
    the child can take away (`disarm.covered`)."""
    given = {k.arg: k.value for k in call.keywords if k.arg}
    libraries = _literal(given.get("libraries"), ())
    allow = _literal(given.get("allow_attnbook"), False)
    found = {str(lib).split(".")[0] for lib in libraries if isinstance(lib, str)}
    found |= set() if allow is True else {"attnbook"}
    names = _literal(given.get("names"), ())
    kept = frozenset(found)
    routines = {
        f"{ROUTINE}{name}"
        for name in names
        if isinstance(name, str) and _defines(name, kept) and disarm.covered(name)
    }
    return frozenset(found | routines)


def question_reach(tests: dict[str, str]) -> dict[str, frozenset[str]]:
    """question -> the top-level packages its answers may not reach: what every `guarded`
    call of its test file rules out (a question whose tests guard nothing: none)."""
    found: dict[str, frozenset[str]] = {}
    for question, text in tests.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])
        rules = [_rule_of(call) for call in _guarded_calls(tree)]
        found[question] = frozenset().union(*rules) if rules else frozenset()
    return found


def groups(reach: dict[str, frozenset[str]]) -> dict[frozenset[str], list[str]]:
    """The ruled-out set -> its questions, in the questions' order."""
    found: dict[frozenset[str], list[str]] = {}
    for question in sorted(reach):
        found.setdefault(reach[question], []).append(question)
    return found


def heavy(ruled_out: frozenset[str]) -> frozenset[str]:
    """What of `ruled_out` the usual process server holds: such a group needs its own."""
    return ruled_out & HEAVY


def _places(package: str) -> list[str]:
    """The files and folders an installed top-level package is imported from."""
    if package == "attnbook":
        import attnbook

        folder = os.path.dirname(os.path.realpath(attnbook.__file__))
        return [
            os.path.join(folder, entry)
            for entry in sorted(os.listdir(folder))
            if entry not in ATTNBOOK_KEPT
        ]
    try:
        spec = find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [os.path.realpath(p) for p in spec.submodule_search_locations]
    return [os.path.realpath(spec.origin)] if spec.origin else []


def hidden(ruled_out: frozenset[str]) -> list[str]:
    """The paths a child's view must lack so that `ruled_out` cannot be imported there."""
    packages = [p for p in ruled_out if not p.startswith(ROUTINE)]
    return sorted({p for package in packages for p in _places(package)})


def routines(ruled_out: frozenset[str]) -> list[str]:
    """The routines of `ruled_out` (its ``routine:NAME`` entries) the child takes away."""
    return sorted(p[len(ROUTINE) :] for p in ruled_out if p.startswith(ROUTINE))


def _ruled(module: str, ruled_out: frozenset[str]) -> bool:
    root = module.split(".")[0]
    if root != "attnbook":
        return root in ruled_out
    kept = module in _KEPT_MODULES or module.startswith("attnbook.exercise_checks.")
    return "attnbook" in ruled_out and not kept


def check_absent(ruled_out: frozenset[str]) -> None:
    """In the child, before any student code: RuntimeError if a ruled-out module is loaded
    (the process server imported it: the rule would not hold)."""
    if not ruled_out:  # nothing to walk for (~4 ms a child: a page copied per module)
        return
    loaded = sorted(m for m in list(sys.modules) if _ruled(m, ruled_out))
    if loaded:
        raise RuntimeError(
            f"ruled-out modules are loaded in the answer's process: {loaded[:5]}"
        )


def enforce(ruled_out: frozenset[str]) -> None:
    """In the child, before any student code: the ruled-out packages absent
    (`check_absent`) and the ruled-out routines of the others taken away (`disarm`)."""
    check_absent(ruled_out)
    disarm.disarm(routines(ruled_out))


def scrub_lent(
    namespace: dict, before: dict[str, Any], allowed: frozenset[str]
) -> None:
    """After a trusted cell: remove the names it bound (absent or other in `before`) to a
    module outside `allowed` (the answers' allowlist), so that no answer cell finds them."""
    for name, value in list(namespace.items()):
        if before.get(name, namespace) is value or name.startswith("__"):
            continue
        if isinstance(value, types.ModuleType) and value.__name__ not in allowed:
            del namespace[name]


@functools.lru_cache(maxsize=256)  # the modules are loaded before any grading starts
def _defines(name: str, ruled_out: frozenset[str]) -> bool:
    """Whether a module the answer's child can import defines `name`: a loaded module of a
    package of the answers' allowlist (PyTorch and NumPy are always loaded in the grader)
    or the builtins, outside `ruled_out`."""
    from attnbook.exercise_checks.answer_allowlist import ALLOWED_MODULES

    roots = {m.split(".")[0] for m in ALLOWED_MODULES} | {"builtins"}
    return any(
        module.split(".")[0] in roots
        and not _ruled(module, ruled_out)
        and name in getattr(sys.modules.get(module), "__dict__", {})
        for module in list(sys.modules)
    )


def left_to_read(rules: dict, ruled_out: frozenset[str]) -> dict:
    """A hidden test's shortcut rules less what a child that cannot reach `ruled_out`
    enforces by itself: the libraries and the course package it lacks, and the routines of
    ``names`` no module it can import defines. What is left is read from the source."""
    left = dict(rules)
    left["libraries"] = [
        lib
        for lib in rules.get("libraries", ())
        if str(lib).split(".")[0] not in ruled_out
    ]
    if "attnbook" in ruled_out:
        left["allow_attnbook"] = True
    taken = set(routines(ruled_out))  # not there in the child either (`disarm`)
    left["names"] = [
        n
        for n in rules.get("names", ())
        if _defines(str(n), ruled_out) and str(n) not in taken
    ]
    return left
