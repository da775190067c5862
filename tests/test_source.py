"""Checks of the source of the package and of the grading engine that neither ruff nor mypy
makes: a decorator written twice in a row (as `@torch.no_grad()` once was on
`cars.predict_logits`) runs twice and is a slip."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "attnbook"
ENGINE = ROOT / "grader" / "src" / "attnbook_grader"


def repeated_decorators(source: str) -> list[str]:
    """'name:line' of every function or class whose decorator list repeats one line after another."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            dumps = [ast.dump(d) for d in node.decorator_list]
            if any(a == b for a, b in zip(dumps, dumps[1:])):
                found.append(f"{node.name}:{node.lineno}")
    return found


def test_the_check_finds_a_doubled_decorator() -> None:
    source = "import torch\n@torch.no_grad()\n@torch.no_grad()\ndef f():\n    pass\n"
    assert repeated_decorators(source) == ["f:4"]
    assert repeated_decorators(source.replace("@torch.no_grad()\n", "", 1)) == []


@pytest.mark.parametrize(
    "path",
    sorted([*SRC.rglob("*.py"), *ENGINE.rglob("*.py")]),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_decorator_is_written_twice(path: Path) -> None:
    assert repeated_decorators(path.read_text()) == []
