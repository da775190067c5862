"""The rule about Python loops (exercises 2 and 5): a question that asks for whole-array
operations (``guarded(f, loops=False)``) fails a function whose source holds a ``for`` or
``while`` loop or a comprehension, or whose notebook functions it calls do.

`first_loop` finds the first loop in a function's syntax tree; the grader applies it to the
submitted source (the engine's `source_rules.Reading.shortcut`, attnbook-grader), and
`local_loop` to a live function's source read with `inspect` (the public checks on a
student's machine, where `grading.guarded` runs in the student's own process). Imports
nothing else of the grading code.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator

__all__ = ["first_loop", "loop_message", "local_loop"]

_LOOPS = {
    ast.For: "for loop",
    ast.AsyncFor: "for loop",
    ast.While: "while loop",
    ast.ListComp: "comprehension",
    ast.SetComp: "comprehension",
    ast.DictComp: "comprehension",
    ast.GeneratorExp: "comprehension (generator expression)",
}


def first_loop(node: ast.AST) -> tuple[int, str] | None:
    """(line, which loop) of the first loop in `node` (nested functions included), or None."""
    found = [
        (getattr(n, "lineno", 0), _LOOPS[type(n)])
        for n in ast.walk(node)
        if type(n) in _LOOPS
    ]
    return min(found) if found else None


def loop_message(kind: str, where: str) -> str:
    """The verdict on a Python loop in a question that rules loops out."""
    return (
        f"loop: your function uses a Python {kind} (read from your code: {where}); this "
        "question asks for whole-array operations (broadcasting, a reduction over an axis): "
        "no for, while or comprehension"
    )


def _tree(fn: Callable) -> tuple[ast.AST, int] | None:
    """The syntax tree of a live function and the line its source starts at, or None."""
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    return tree, max(first, 1)


def reached(fn: Callable) -> Iterator[tuple[Callable, tuple[ast.AST, int] | None]]:
    """A live function and the functions of its module it calls (by name, transitively),
    each once, with its syntax tree and first line (`_tree`; None where there is no source)."""
    todo, seen = [fn], set()
    while todo:
        current = todo.pop(0)
        if id(current) in seen or not inspect.isfunction(current):
            continue
        seen.add(id(current))
        yield current, _tree(current)
        namespace = current.__globals__
        todo += [
            namespace[name]
            for name in current.__code__.co_names
            if inspect.isfunction(namespace.get(name))
            and namespace[name].__module__ == fn.__module__
        ]


def local_loop(fn: Callable) -> str | None:
    """The loop verdict for a function of this process and the functions of its module it
    calls (by name, transitively); None where there is no loop or no source to read (the
    hidden tests decide then)."""
    for current, read in reached(fn):
        if read is not None:
            found = first_loop(read[0])
            if found:
                line = found[0] + read[1] - 1  # the line in the function's cell or file
                return loop_message(found[1], f"{current.__name__}, line {line}")
    return None
