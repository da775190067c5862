"""The import graph of the course package and of the grading engine has no circle: every
`import` of an `attnbook` or `attnbook_grader` module, at the top of a module, inside a
function or under `TYPE_CHECKING`, read from the source with `ast`. The engine may import
the course package; the course package imports nothing of the engine (a student installs
`attnbook` alone)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "attnbook"
ENGINE = ROOT / "grader" / "src" / "attnbook_grader"


def module_name(path: Path) -> str:
    package = ENGINE if path.is_relative_to(ENGINE) else PACKAGE
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The attnbook and attnbook_grader modules `path` imports (a name imported from a
    package counts as its submodule when one of that name exists)."""
    name, found = module_name(path), set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("attnbook")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            if base.startswith("attnbook"):
                found.add(base)
                found |= {f"{base}.{a.name}" for a in node.names}
    return found


def graph() -> dict[str, set[str]]:
    paths = sorted([*PACKAGE.rglob("*.py"), *ENGINE.rglob("*.py")])
    names = {module_name(p) for p in paths}
    return {module_name(p): (imports(p) & names) - {module_name(p)} for p in paths}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One circle of `edges` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_reader_finds_a_circle_where_there_is_one() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_every_kind_of_import() -> None:
    edges = graph()
    assert "attnbook.caches" in edges["attnbook.multihead"]  # `from .caches import`
    assert "attnbook.attention" in edges["attnbook.multihead"]
    assert len(edges) > 40


def test_the_package_has_no_import_circle() -> None:
    found = cycle(graph())
    assert found is None, "import circle: " + " -> ".join(found or [])


def test_the_course_package_imports_nothing_of_the_engine() -> None:
    edges = graph()
    engine = {name for name in edges if name.split(".")[0] == "attnbook_grader"}
    assert {"attnbook_grader.engine", "attnbook_grader.sandbox"} <= engine
    assert "attnbook.exercise_checks.watch" in edges["attnbook_grader.watched"]
    wrong = {
        name: sorted(edges[name] & engine)
        for name in edges
        if name not in engine and edges[name] & engine
    }
    assert not wrong, f"the course package imports the grading engine: {wrong}"
    # nor by a name in a string (importlib, __import__): only docstrings may name it
    named = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for p in PACKAGE.rglob("*.py")
        for node in code_strings(ast.parse(p.read_text()))
        if "attnbook_grader" in node.value
    ]
    assert not named, named


def code_strings(tree: ast.Module) -> list[ast.Constant]:
    """The string constants of `tree` that are not docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        )
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_the_string_reader_sees_code_not_docstrings() -> None:
    tree = ast.parse('"""doc x"""\nimport importlib\nm = importlib.import_module("x")')
    assert [node.value for node in code_strings(tree)] == ["x"]


def test_every_module_of_the_package_the_engine_and_the_tools_is_at_most_400_lines():
    """Small modules whose names say what they hold: none over 400 lines (split by concept
    before the cap; the benchmarks are scripts, not modules, and are not held to it)."""
    over = {
        str(path.relative_to(ROOT)): n
        for folder in (PACKAGE, ENGINE, ROOT / "tools")
        for path in sorted(folder.rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > 400
    }
    assert not over, f"modules over 400 lines: {over}"
