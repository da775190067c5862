"""What an answer cell may use: the allowlist, an early hint in the student's public
checks (`local_refusal`) and, in the grader, a note beside a grade for credit.

An answer cell (a code cell that is not, character for character, a cell of the reference
notebook) may import only the modules of `ALLOWED_MODULES` and, from ``otter`` and the course
package ``attnbook``, only the names the exercise's own notebook imports (``otter.Notebook``,
``attnbook.exercise_checks.tests_dir``, a plotting helper); it may call only the builtins of
`ALLOWED_BUILTINS`. Because nothing can be fetched by a name computed at run time
(``getattr`` with a computed name, ``vars``, ``globals``, ``__dict__``, ``eval``/``exec`` are
refused), every attribute the code reaches is written in it: the attributes through which the
allowed modules reach the machinery (other modules such as ``os``, ``pickle`` or
``multiprocessing``, file loaders, compilers; `REFUSED_ATTRIBUTES`), private and dunder
attributes (but ``__init__`` and the operators' own, such as ``p.__getitem__`` as a sort key)
and frame attributes are refused wherever they appear, and an
attribute may be written only on the code's own objects (``self.x = ...``). Type hints and
small helpers are allowed (``typing``, ``__future__``, ``functools``, ``dataclasses``, ``copy``,
``time``, ``warnings``, ``operator``), less their routines that evaluate a string, fetch an
attribute by a name given as a string or write the attributes of another object
(``get_type_hints``, ``attrgetter``, ``methodcaller``, ``singledispatch``, ``wraps``). `Allowlist.problems` gives,
per statement, what it breaks, with the line. No grade for credit depends on it: there
the answers run in an isolated process that lacks what a question rules out, the refused
statements run too, and the grading engine's `source_rules` (attnbook-grader) only notes
them; only a practice grade without isolation keeps it as the gate (a refused statement not
run, the questions that use it scored 0).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from typing import Any

__all__ = [
    "ALLOWED_MODULES",
    "ALLOWED_BUILTINS",
    "REFUSED_ATTRIBUTES",
    "Allowlist",
    "local_refusal",
]

ALLOWED_MODULES = frozenset(
    """
    math cmath random statistics collections collections.abc itertools heapq bisect
    __future__ typing functools dataclasses copy time warnings operator
    numpy numpy.random numpy.linalg numpy.fft numpy.testing
    torch torch.nn torch.nn.functional torch.nn.init torch.linalg torch.fft torch.special
    torch.autograd torch.testing torch.random
    matplotlib matplotlib.pyplot
    """.split()
)
ALLOWED_BUILTINS = frozenset(
    """
    abs all any ascii bin bool bytearray bytes callable chr classmethod complex dict
    dir divmod enumerate filter float format frozenset hasattr hash hex id input int
    isinstance issubclass iter len list map max min next object oct ord pow print
    property range repr reversed round set slice sorted staticmethod str sum super tuple
    type zip None True False Ellipsis NotImplemented
    ArithmeticError AssertionError AttributeError BaseException EOFError Exception
    FloatingPointError IndexError KeyError LookupError NameError NotImplementedError
    OverflowError RuntimeError StopIteration TypeError ValueError ZeroDivisionError
    UserWarning Warning
    """.split()
)
# The exits of the allowed modules' attribute graph to the machinery: modules that run,
# load or inspect code, reach the interpreter or the file system; loaders and compilers.
REFUSED_ATTRIBUTES = frozenset(
    """
    os sys builtins importlib inspect functools operator pickle dill marshal shelve
    copyreg multiprocessing subprocess threading signal ctypes ctypeslib gc types code
    codeop runpy pty socket shutil glob io pathlib tempfile weakref platform linecache
    traceback atexit faulthandler resource posix mmap typing dataclasses
    get_type_hints ForwardRef update_wrapper wraps singledispatch singledispatchmethod
    attrgetter methodcaller
    lib f2py distutils extbuild utils hub jit ops classes library package fx export
    compiler overrides serialization distributed cpp cpp_extension profiler monitor
    load loads load_inline save savez savez_compressed savetxt loadtxt genfromtxt
    fromfile tofile memmap from_file fromregex dump dumps open compile
    f_globals f_locals f_back f_builtins f_code gi_frame gi_code cr_frame cr_code
    ag_frame ag_code tb_frame tb_next co_code co_consts
    """.split()
)
_REFUSED_CALLS = {
    "getattr": "getattr with a name computed at run time",
    "setattr": "setattr",
    "delattr": "delattr",
    "vars": "vars()",
    "globals": "globals()",
    "locals": "locals()",
    "eval": "eval",
    "exec": "exec",
    "compile": "compile",
    "__import__": "__import__",
    "open": "open (answer cells read no files)",
    "breakpoint": "breakpoint",
    "get_ipython": "get_ipython other than in a magic",
}
# the operators' own methods read as attributes do what their operator does (``p.__getitem__``
# is ``p[...]``, a common sort key): nothing a written operator cannot reach
_DUNDERS_ALLOWED = frozenset(
    """
    __init__ __name__ __doc__ __getitem__ __len__ __contains__ __iter__ __next__
    __lt__ __le__ __gt__ __ge__ __eq__ __ne__ __neg__ __abs__ __add__ __sub__ __mul__
    __truediv__ __floordiv__ __mod__ __pow__ __matmul__
    """.split()
)
_RESTRICTED = ("otter", "attnbook")  # only the exact names the exercise imports


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class Allowlist:
    """The allowlist of one exercise: `ALLOWED_MODULES`, plus the exact ``otter`` and
    ``attnbook`` names its notebook imports (`paths`, e.g. "attnbook.plot.attention_heatmap")."""

    def __init__(self, paths: Collection[str] = ()):
        self.paths = frozenset(paths) | {
            "otter.Notebook",
            "attnbook.exercise_checks.tests_dir",
        }

    @classmethod
    def from_reference(cls, trees: list[ast.Module]) -> Allowlist:
        """The names of ``otter`` and ``attnbook`` that the reference notebook imports."""
        paths = set()
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    root = node.module.split(".")[0]
                    if root in ("otter", "attnbook"):
                        paths |= {f"{node.module}.{a.name}" for a in node.names}
        return cls(paths)

    @classmethod
    def nothing_refused(cls) -> Allowlist:
        """An allowlist that refuses nothing (the engine's `source_rules.NO_ALLOWLIST`: tests only)."""
        allowlist = cls()
        allowlist.problems = lambda tree, bound: iter(())  # type: ignore[method-assign]
        return allowlist

    def module_ok(self, path: str) -> bool:
        return path in ALLOWED_MODULES or path in self.paths

    def problems(
        self, tree: ast.AST, bound: Collection[str]
    ) -> Iterator[tuple[int, str]]:
        """(line, what) for each thing in `tree` (a statement of an answer cell) that the
        allowlist refuses; `bound`: the names the notebook binds itself."""
        parents = {
            id(child): node
            for node in ast.walk(tree)
            for child in ast.iter_child_nodes(node)
        }
        for node in ast.walk(tree):
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    root = alias.name.split(".")[0]
                    if root in _RESTRICTED and (alias.asname or alias.name != root):
                        yield line, f"imports {alias.name} (only from ... import name)"
                    elif root not in _RESTRICTED and not self.module_ok(alias.name):
                        yield line, f"imports {alias.name}"
            elif isinstance(node, ast.ImportFrom):
                yield from self._import_from(node, line)
            elif isinstance(node, ast.Attribute):
                yield from self._attribute(node, node.attr, line)
            elif isinstance(node, ast.Name) and (
                node.id not in bound or node.id in _RESTRICTED
            ):
                yield from self._name(node, parents, line)
            elif isinstance(node, ast.Call):
                yield from self._call(node, bound, line)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                for arg in _arg_names(node):
                    if arg.startswith("__"):
                        yield line, f"names an argument {arg}"

    def _import_from(
        self, node: ast.ImportFrom, line: int
    ) -> Iterator[tuple[int, str]]:
        if node.level or not node.module:
            yield line, "a relative import"
            return
        for alias in node.names:
            path = f"{node.module}.{alias.name}"
            if alias.name == "*":
                yield line, f"imports * from {node.module}"
            elif node.module.split(".")[0] in _RESTRICTED:
                if path not in self.paths:
                    yield line, f"imports {path}"
            elif not self.module_ok(node.module):
                yield line, f"imports {path}"
            elif path not in ALLOWED_MODULES and _refused_attribute(alias.name):
                yield line, f"imports {path}"

    def _attribute(
        self, node: ast.AST, attr: str, line: int
    ) -> Iterator[tuple[int, str]]:
        base = node.value if isinstance(node, ast.Attribute) else None
        own = isinstance(base, ast.Name) and base.id in ("self", "cls")
        if _refused_attribute(attr) and not (own and _private(attr)):
            yield line, f"reaches the attribute {attr}"
            return
        if isinstance(node, ast.Attribute) and isinstance(
            node.ctx, (ast.Store, ast.Del)
        ):
            if not own:
                what = ast.unparse(node.value)[:60]
                yield line, f"writes the attribute {attr} of {what} (only self.x)"

    def _name(
        self, node: ast.Name, parents: dict, line: int
    ) -> Iterator[tuple[int, str]]:
        name, parent = node.id, parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        if name in _RESTRICTED:
            chain: ast.AST = node
            while isinstance(parents.get(id(chain)), ast.Attribute):
                chain = parents[id(chain)]
            path = _dotted(chain) or name
            if path not in self.paths:
                yield (
                    line,
                    f"uses {path} (of {name}, only the names the exercise imports)",
                )
        elif name.startswith("__") and name not in _DUNDERS_ALLOWED:
            yield line, f"uses {name}"
        elif name == "get_ipython":
            if not _magic(node, parents):
                yield line, f"uses {_REFUSED_CALLS[name]}"
        elif name in ("getattr", "hasattr"):
            if not called:
                yield line, f"uses {name} other than in a plain call"
        elif name in _REFUSED_CALLS:
            yield line, f"uses {_REFUSED_CALLS[name]}"
        elif _is_builtin(name) and name not in ALLOWED_BUILTINS:
            yield line, f"uses the builtin {name}"

    def _call(
        self, node: ast.Call, bound: Collection[str], line: int
    ) -> Iterator[tuple[int, str]]:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr"):
            if func.id in bound:
                return
            name = node.args[1] if len(node.args) >= 2 else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                yield from self._attribute(node, name.value, line)
            else:
                yield line, f"uses {func.id} with a name computed at run time"


def _magic(node: ast.Name, parents: dict) -> bool:
    """``get_ipython().method("text", ...)``, as IPython writes a magic or a shell escape
    (the grader's child runs it as a no-op: it has no shell)."""
    call = parents.get(id(node))
    attribute = parents.get(id(call))
    outer = parents.get(id(attribute))
    return (
        isinstance(call, ast.Call)
        and not call.args
        and isinstance(attribute, ast.Attribute)
        and isinstance(outer, ast.Call)
        and outer.func is attribute
        and all(
            isinstance(a, ast.Constant) and isinstance(a.value, str) for a in outer.args
        )
        and not outer.keywords
    )


def _private(attr: str) -> bool:
    return attr.startswith("_") and not attr.startswith("__")


def _refused_attribute(attr: str) -> bool:
    if attr.startswith("__") and attr.endswith("__"):
        return attr not in _DUNDERS_ALLOWED
    return attr.startswith("_") or attr in REFUSED_ATTRIBUTES


def _is_builtin(name: str) -> bool:
    import builtins

    return hasattr(builtins, name)


def _arg_names(node: ast.AST) -> list[str]:
    args = getattr(node, "args", None)
    if not isinstance(args, ast.arguments):
        return []
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return [a.arg for a in every if a is not None]


def local_refusal(fn: Any) -> str | None:
    """The allowlist verdict on a live function of this process and the functions of its
    module it calls (by name, transitively): what the grader will refuse in its source, so
    that the public checks warn first; None where nothing is refused or there is no source
    to read."""
    from attnbook.exercise_checks.loop_rule import reached
    from attnbook.exercise_checks.rules import refused_hint

    for current, read in reached(fn):
        if read is None:
            continue
        tree, first = read
        found = list(Allowlist().problems(tree, set(current.__globals__)))
        found += [
            (node.lineno, f"uses {node.id}, imported from {origin}")
            for node in ast.walk(tree)
            if isinstance(node, ast.Name) and node.id in current.__globals__
            for origin in [_foreign(current.__globals__[node.id], current.__module__)]
            if origin
        ]
        for line, what in sorted(found)[:1]:
            return refused_hint(what, f"{current.__name__}, line {line + first - 1}")
    return None


def _foreign(value: Any, own: str) -> str | None:
    """The module a global an answer reads was imported from, where an answer cell may not
    import it (an import in another cell: ``import os``, ``from os.path import join``);
    None for the code's own objects (of its module `own`), data, and what is allowed."""
    if isinstance(value, type(ast)):
        name = value.__name__
    elif callable(value) and isinstance(getattr(value, "__module__", None), str):
        name = value.__module__
    else:
        return None
    root = name.split(".")[0]
    allowed = {m.split(".")[0] for m in ALLOWED_MODULES} | {"builtins", *_RESTRICTED}
    if name in ("__main__", own) or root.lstrip("_") in allowed:
        return None
    return f"the module {name}, which an answer cell may not import"
