"""Every definition of the course package can be traced to its chapter: the first paragraph
of each module's docstring names the chapter its code is derived in ("chapter 6", "chapters
6-9", "every chapter"), in a module of several chapters each public definition names its
own, and the package's map of modules (`attnbook/__init__.py`) lists every module with the
same chapters. Read with `ast`, nothing imported; the public checks of the exercises
(`attnbook.exercise_checks`) belong to exercises, not chapters, and are left out."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "attnbook"
# One attention view, the same in each chapter that shows it: its parts serve all of them.
ONE_TOOL = {"explore", "explore_inputs", "explore_labels", "explore_picture"}
NAMED = re.compile(r"\bchapters? (\d+(?:\s*(?:-|–|,|and)\s*\d+)*)|\bch\. ?(\d+)", re.I)


def chapters_named(text: str) -> set[int]:
    """The chapter numbers a text names: "chapters 2, 6-8 and 11" -> {2, 6, 7, 8, 11}."""
    found: set[int] = set()
    for match in NAMED.finditer(text):
        if match.group(2):
            found.add(int(match.group(2)))
            continue
        for first, last in re.findall(r"(\d+)(?:\s*[-–]\s*(\d+))?", match.group(1)):
            found |= set(range(int(first), int(last or first) + 1))
    return found


def header(tree: ast.Module) -> str:
    return (ast.get_docstring(tree) or "").split("\n\n")[0]


def modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[0] == "exercise_checks" or parts == ("__init__",):
            continue  # the package's own docstring is the map of all the chapters
        name = ".".join(p for p in parts if p != "__init__")
        found.append((name, ast.parse(path.read_text(encoding="utf-8"))))
    return found


def public_definitions(tree: ast.Module) -> list[ast.FunctionDef | ast.ClassDef]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            names = list(ast.literal_eval(node.value))
    return [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in names
    ]


def test_chapters_named_reads_lists_and_ranges() -> None:
    assert chapters_named("(chapters 2, 6-8 and 11; see ch. 9)") == {2, 6, 7, 8, 9, 11}
    assert chapters_named("(chapter 10)") == {10}
    assert chapters_named("every chapter") == set()
    assert chapters_named("exercise 3 of the course") == set()


@pytest.mark.parametrize("name, tree", modules(), ids=[m for m, _ in modules()])
def test_the_module_names_its_chapter(name: str, tree: ast.Module) -> None:
    text = header(tree)
    assert chapters_named(text) or "every chapter" in text, (
        f"attnbook.{name}: the first paragraph of its docstring names no chapter"
    )


@pytest.mark.parametrize("name, tree", modules(), ids=[m for m, _ in modules()])
def test_a_module_of_several_chapters_names_each_definitions_own(
    name: str, tree: ast.Module
) -> None:
    text = header(tree)
    if len(chapters_named(text)) < 2 or "every chapter" in text or name in ONE_TOOL:
        return  # its definitions belong to the one chapter it names (or to all)
    unnamed = [
        node.name
        for node in public_definitions(tree)
        if not chapters_named(ast.get_docstring(node) or "")
    ]
    assert not unnamed, (
        f"attnbook.{name} spans chapters {sorted(chapters_named(text))}; "
        f"these public definitions do not say which is theirs: {unnamed}"
    )


def module_map() -> dict[str, str]:
    """The entries of the package docstring's list of modules: name -> its text."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    entries: dict[str, str] = {}
    name = None
    for line in (ast.get_docstring(tree) or "").splitlines():
        entry = re.match(r"- ``attnbook\.(\w+)``\s+(.*)", line)
        if entry:
            name = entry.group(1)
            entries[name] = entry.group(2)
        elif name and line.startswith("   "):
            entries[name] += " " + line.strip()
        else:
            name = None
    return entries


def test_the_package_map_lists_each_module_with_its_chapters() -> None:
    entries = module_map()
    text = " ".join(entries.values())
    for name, tree in modules():
        top = name.split(".")[0]
        if top.startswith("_"):
            continue
        if top not in entries:
            # a part of a listed module, named in that module's entry
            assert f"``{top}``" in text, f"attnbook.{top} is not in the package's map"
            continue
        if "." in name:
            continue  # a subpackage's modules: its own docstring is their map
        in_map, in_module = entries[top], header(tree)
        if "every chapter" in in_map and "every chapter" in in_module:
            continue
        assert chapters_named(in_map) == chapters_named(in_module), (
            f"attnbook.{top}: the package's map names chapters "
            f"{sorted(chapters_named(in_map))}, its docstring "
            f"{sorted(chapters_named(in_module))}"
        )


BOOK = {
    int(p.name[:2]) for p in (PACKAGE.parents[1] / "book").glob("[0-9][0-9]_*.ipynb")
}


def definitions_without_chapter(tree: ast.Module) -> list[str]:
    """The public definitions of `tree` whose own docstring names no chapter of the book
    (nor "every chapter"), or names a chapter the book does not have."""
    wrong = []
    for node in public_definitions(tree):
        doc = ast.get_docstring(node) or ""
        named = chapters_named(doc)
        if not (named or "every chapter" in doc.lower()) or named - BOOK:
            wrong.append(node.name)
    return wrong


def test_the_definition_reader_sees_a_missing_or_unknown_chapter() -> None:
    tree = ast.parse(
        '__all__ = ["a", "b", "c", "d", "Model", "e"]\n'
        'def a():\n    """Adds (chapter 3)."""\n'
        'def b():\n    """Adds."""\n'
        'def c():\n    """Adds (chapter 99)."""\n'
        "def d():\n    pass\n"
        'class Model:\n    """A model.\n\n    Chapters 6 and 9.\n    """\n'
        'def e():\n    """Every chapter."""\n'
        'def hidden():\n    """Not listed."""\n'
    )
    assert definitions_without_chapter(tree) == ["b", "c", "d"]
    assert len(BOOK) >= 11


def test_every_public_definition_names_its_chapter() -> None:
    """Issue 49, item 6: a reader of any public function or class finds the chapter that
    teaches it in its own docstring, whatever its module spans."""
    wrong = {
        name: found
        for name, tree in modules()
        if (found := definitions_without_chapter(tree))
    }
    assert not wrong, f"public definitions that name no chapter of the book: {wrong}"
