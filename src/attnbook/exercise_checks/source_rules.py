"""The shortcut rules and the tampering verdict, decided from the submitted source (exercises
1-9), in the grader, before and whatever the submission's code does when it runs.

`scan` reads the code cells of a submission with `ast` (after IPython's own rewriting of
magics) and records, for every function the notebook defines at the top level, the names it
reaches: imports, attribute chains and the names bound to them (``F = torch.nn.functional``,
``from attnbook.kvquant import quantize as q``), in its body and in the functions of the
notebook it calls. `Reading.shortcut` answers a hidden test's rules (``guarded(f,
libraries=..., names=..., allow_attnbook=...)``) from that: the course package ``attnbook``,
a library the question rules out, a routine the question asks the student to write, and
(``loops=False``, `loop_rule`) a Python loop or comprehension.

Code whose effect cannot be read from the source is a verdict of its own, "dynamic code /
tampering" (`Reading.tampering`, messages for the instructor): ``eval``, ``exec``,
``compile``, ``__import__``, ``importlib.import_module``, ``getattr`` with a computed name,
``setattr``/``delattr``, ``globals()``/``vars()``, ``sys.modules`` (beyond ``name in
sys.modules``), the profiler and tracer hooks, the import machinery, ``builtins``,
``ctypes``, frames and code objects, the grading package's own modules and otter's
internals, and any write to an attribute of a module. Cells identical to a cell of the
reference notebook (the setup cell, the data) are trusted. Imports only `loop_rule` of the
grading package.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass, field

from attnbook.exercise_checks.loop_rule import first_loop, loop_message

__all__ = ["Reading", "scan"]

_CALLS = {  # builtins whose use is dynamic code
    "eval": "eval",
    "exec": "exec",
    "compile": "compile",
    "__import__": "__import__",
    "globals": "globals()",
    "vars": "vars()",
    "setattr": "setattr",
    "delattr": "delattr",
}
_PATHS = tuple(
    """
    sys.modules sys.setprofile sys.settrace sys.meta_path sys.path_hooks
    sys.path_importer_cache sys._getframe sys.monitoring sys.addaudithook
    threading.setprofile threading.settrace importlib.import_module importlib.reload
    importlib.__import__ importlib.machinery importlib.abc
    importlib.util.module_from_spec importlib.util.spec_from_file_location
    importlib.util.spec_from_loader builtins ctypes gc inspect.currentframe
    inspect.stack inspect.getouterframes types.FunctionType types.CodeType
    types.ModuleType marshal pickle dill runpy attnbook.exercise_checks. otter.
    """.split()
)  # module paths (and their attributes) that reach the machinery
_ALLOWED_PATHS = ("otter.Notebook", "attnbook.exercise_checks.tests_dir")
_DUNDERS = frozenset(
    """
    __builtins__ __dict__ __globals__ __code__ __closure__ __defaults__
    __kwdefaults__ __subclasses__ __bases__ __mro__ __getattribute__ __setattr__
    __delattr__ __import__ __loader__ __spec__ __self__ __func__ __wrapped__
    f_globals f_locals f_back f_builtins gi_frame tb_frame
    """.split()
)  # attributes that reach code, frames and namespaces


@dataclass
class _Function:
    cell: int
    node: ast.FunctionDef
    paths: dict[str, int] = field(default_factory=dict)  # module path -> line
    attrs: dict[str, int] = field(default_factory=dict)  # attribute names -> line
    free: dict[str, int] = field(default_factory=dict)  # unresolved names -> line
    calls: set[str] = field(default_factory=set)  # names of the notebook's functions


@dataclass
class Reading:
    """What the grader read from a submission's source."""

    functions: dict[str, _Function] = field(default_factory=dict)
    # (cell, line, top-level function or None, what)
    findings: list[tuple[int, int, str | None, str]] = field(default_factory=list)

    def reach(self, name: str, skip: set[str]) -> list[str]:
        """`name` and the notebook's functions it calls, transitively (not those in `skip`:
        other questions' functions, the reference's while it runs)."""
        seen, todo = [], [name]
        while todo:
            current = todo.pop()
            if current in seen or current not in self.functions:
                continue
            seen.append(current)
            todo += sorted(self.functions[current].calls - skip - {name})
        return seen

    def shortcut(
        self, name: str, rules: dict, skip: Collection[str] = ()
    ) -> str | None:
        """The message of the first shortcut rule the source of `name` breaks, or None."""
        libraries = [str(lib) for lib in rules.get("libraries", ())]
        names = {str(n) for n in rules.get("names", ())}
        for fn in self.reach(name, set(skip)):
            info = self.functions[fn]
            where = f"{fn}, cell {info.cell}"
            for path, line in sorted(info.paths.items(), key=lambda kv: -len(kv[0])):
                path = path.lstrip("?")  # noqa: PLW2901 - a value built from a module
                root = path.split(".")[0]
                if root == "attnbook" and not rules.get("allow_attnbook"):
                    why = "the course package attnbook"
                elif root in libraries:
                    why = f"this question rules out {' and '.join(libraries)}"
                elif path.split(".")[-1] in names:
                    why = "the routine this question asks you to write"
                else:
                    continue
                return _shortcut(path, why, where, line)
            for attr, line in sorted({**info.free, **info.attrs}.items()):
                if attr in names:
                    why = "the routine this question asks you to write"
                    return _shortcut(attr, why, where, line)
        if rules.get("loops", True) is False:  # a question that rules out Python loops
            for fn in self.reach(name, set(skip)):
                found = first_loop(self.functions[fn].node)
                if found:
                    where = f"{fn}, cell {self.functions[fn].cell}, line {found[0]}"
                    return loop_message(found[1], where)
        return None

    def tampering(self, question_functions: dict[str, set[str]]) -> dict[str, str]:
        """question -> the message of the dynamic code that costs it: code inside a function
        costs the questions whose functions reach it, any other code every question."""
        found: dict[str, str] = {}
        for cell, line, owner, what in self.findings:
            hit = [
                q
                for q, fns in question_functions.items()
                if owner is not None
                and any(
                    owner in self.reach(f, _others(question_functions, q)) for f in fns
                )
            ] or list(question_functions)
            message = (
                f"dynamic code / tampering: {what} (cell {cell}, line {line}"
                f"{', in ' + owner if owner else ''}); the grader reads the source and "
                "cannot tell what this does, so an instructor must read this submission: "
                "scored 0 on this question"
            )
            for q in hit:
                found.setdefault(q, message)
        return found


def _others(question_functions: dict[str, set[str]], question: str) -> set[str]:
    """The functions of the other questions (the reference's while `question` runs)."""
    return {f for q, fns in question_functions.items() if q != question for f in fns}


def _shortcut(what: str, why: str, where: str, line: int) -> str:
    return (
        f"shortcut: your function uses {what} ({why}; read from your code: {where}, "
        f"line {line}); the question asks you to write this step yourself"
    )


def _path(node: ast.AST, env: dict[str, str]) -> str | None:
    """The module path an expression names, through imports and bound names, or None."""
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _path(node.value, env)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        first = node.args[0]
        text = first.value if isinstance(first, ast.Constant) else None
        if node.func.id == "__import__" and isinstance(text, str):
            return text.split(".")[0]
        if node.func.id == "getattr" and len(node.args) >= 2:
            name = node.args[1]
            base = _path(first, env)
            if base and isinstance(name, ast.Constant) and isinstance(name.value, str):
                return f"{base}.{name.value}"
    return None


def _bind(node: ast.AST, env: dict[str, str]) -> list[str]:
    """Update `env` with the names an import or an assignment binds; the imported paths."""
    imported = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            imported.append(alias.name)
            if alias.asname:
                env[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                env[top] = top
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        for alias in node.names:
            path = f"{node.module}.{alias.name}"
            imported.append(node.module if alias.name == "*" else path)
            if alias.name != "*":
                env[alias.asname or alias.name] = path
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], _path(node.value, env)
        if isinstance(target, ast.Name):
            # a value built from a module (``m = [np][0]``, ``rng = np.random.default_rng()``)
            # is marked "?module": writing to its attributes counts as writing to a module's
            tainted = (_path(n, env) for n in ast.walk(node.value))
            value = value or next((f"?{p.lstrip('?')}" for p in tainted if p), None)
            if value:
                env[target.id] = value
            else:
                env.pop(target.id, None)
    return imported


def _machinery(path: str) -> bool:
    if any(path == p or path.startswith(p + ".") for p in _ALLOWED_PATHS):
        return False
    return any(
        path.startswith(p) if p.endswith(".") else path == p or path.startswith(p + ".")
        for p in _PATHS
    )


class _Reader(ast.NodeVisitor):
    """Walks one top-level statement: records paths, attributes, free names and calls of
    the function it is in, and findings of dynamic code."""

    def __init__(
        self, reading: Reading, cell: int, env: dict[str, str], defs: set[str]
    ):
        self.reading, self.cell, self.env, self.defs = reading, cell, dict(env), defs
        self.owner: _Function | None = None
        self.scan = True  # False in a trusted cell: no findings, only the functions
        self.allowed_modules: set[int] = set()  # sys.modules nodes in `in` tests

    def find(self, node: ast.AST, what: str) -> None:
        if self.scan:
            owner = self.owner.node.name if self.owner else None
            self.reading.findings.append(
                (self.cell, getattr(node, "lineno", 0), owner, what)
            )

    def note_path(self, node: ast.AST, path: str) -> None:
        if self.owner is not None:
            self.owner.paths.setdefault(path, getattr(node, "lineno", 0))
        if _machinery(path) and id(node) not in self.allowed_modules:
            self.find(node, f"uses {path}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for part in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if part is not None:
                self.visit(part)  # run when the def runs: module-level code
        outer_env, outer_owner = self.env, self.owner
        if outer_owner is None:
            self.owner = _Function(self.cell, node)
            self.reading.functions[node.name] = self.owner
        self.env = dict(outer_env)
        self.env.pop(node.name, None)
        for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
            self.env.pop(arg.arg, None)
        for statement in node.body:
            self.visit(statement)
        self.env, self.owner = outer_env, outer_owner

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Import(self, node: ast.Import) -> None:
        for path in _bind(node, self.env):
            self.note_path(node, path)

    visit_ImportFrom = visit_Import  # type: ignore[assignment]

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        _bind(node, self.env)
        self._stores(node.targets)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        self._stores([node.target])

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        self._stores([node.target])

    def visit_Delete(self, node: ast.Delete) -> None:
        self.generic_visit(node)
        self._stores(node.targets)

    def _stores(self, targets: list[ast.expr]) -> None:
        for target in targets:
            if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
                parts = [
                    getattr(t, "value", t) for t in getattr(target, "elts", [target])
                ]
                self._stores(parts)
                continue
            if not isinstance(target, ast.Attribute):
                continue
            base = _path(target.value, self.env)
            odd = any(
                isinstance(n, (ast.Call, ast.Subscript)) for n in ast.walk(target.value)
            )
            if base or odd:
                where = (base or ast.unparse(target.value)[:60]).lstrip("?")
                self.find(target, f"writes the attribute {target.attr} of {where}")

    def visit_Compare(self, node: ast.Compare) -> None:
        if all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            for side in node.comparators:
                if _path(side, self.env) == "sys.modules":
                    self.allowed_modules.add(id(side))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id not in self.env:
            if func.id in _CALLS and func.id not in self.defs:
                self.find(node, f"calls {_CALLS[func.id]}")
            if func.id == "getattr" and not (
                len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
            ):
                self.find(node, "calls getattr with a name computed at run time")
            if func.id == "getattr" and len(node.args) >= 2:
                name = node.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    self._attribute(node, name.value)
        path = _path(node, self.env)
        if path and isinstance(func, ast.Name):
            self.note_path(node, path)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        path = _path(node, self.env)
        if path:
            self.note_path(node, path)
        self._attribute(node, node.attr)
        self.generic_visit(node)

    def _attribute(self, node: ast.AST, attr: str) -> None:
        if self.owner is not None:
            self.owner.attrs.setdefault(attr, getattr(node, "lineno", 0))
        if attr in _DUNDERS:
            self.find(node, f"reaches {attr}")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _DUNDERS:
            self.find(node, f"reaches {node.id}")
        if self.owner is None or not isinstance(node.ctx, ast.Load):
            return
        path = self.env.get(node.id)
        if path:
            self.note_path(node, path)
        elif node.id in self.defs:
            self.owner.calls.add(node.id)
        else:
            self.owner.free.setdefault(node.id, node.lineno)


def _parse(source: str) -> ast.Module | None:
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except (SyntaxError, ValueError):
        return None


def scan(sources: list[str], trusted: Collection[str] = ()) -> Reading:
    """Read a submission's code cells; cells whose source is in `trusted` (the reference
    notebook's own cells) give no findings."""
    reading, env = Reading(), dict[str, str]()
    trees = [(i, _parse(s), s in set(trusted)) for i, s in enumerate(sources)]
    defs = {
        n.name
        for _, tree, _ in trees
        if tree is not None
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    for index, tree, is_trusted in trees:
        if tree is None:
            continue
        for statement in tree.body:
            reader = _Reader(reading, index, env, defs)
            reader.scan = not is_trusted
            reader.visit(statement)
            env.clear()
            env.update(reader.env)
    return reading
