"""The notebooks' setup cell really installs `attnbook` where it is missing (Colab, fresh Binder).

The cell asks pip for `attnbook==<version>` (and, in exercises, the locked otter-grader). Here
PyPI is replaced by a local wheel index, a folder holding the wheel built from this checkout,
with pip's configuration ignored and its index switched off, so nothing is downloaded and the
wheel can only come from there. In a fresh virtual environment without `attnbook` (torch, otter
etc. come from this interpreter's site-packages through a `.pth` file) the shared first code
cell runs, followed by every notebook's top-level imports, in one process, as a kernel would run
them. One more case proves the override: `ATTNBOOK_SOURCE` naming the wheel file, with no index.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from wheel_helpers import (
    ROOT,
    TIMEOUT,
    build_distributions,
    code_cells,
    fresh_venv,
    top_level_imports,
)

pytestmark = pytest.mark.slow

NOTEBOOKS = sorted(ROOT.glob("book/*.ipynb")) + sorted(
    ROOT.glob("exercises/student/*.ipynb")
)
KINDS = {
    "chapter": sorted(ROOT.glob("book/*.ipynb")),
    "exercise": sorted(ROOT.glob("exercises/student/*.ipynb")),
}


def run(
    python: Path, code: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from this checkout, alone in a folder: the local stand-in for PyPI."""
    _, built = build_distributions(tmp_path_factory.mktemp("build"))
    return built


def test_there_are_notebooks() -> None:
    assert KINDS["chapter"], "no chapter notebook in book/"
    assert KINDS["exercise"], "no exercises/student notebook"


@pytest.mark.parametrize(
    "kind, source",
    [("chapter", "index"), ("exercise", "index"), ("chapter", "ATTNBOOK_SOURCE")],
)
def test_setup_cell_installs_attnbook(
    kind: str, source: str, wheel: Path, tmp_path: Path
) -> None:
    """One fresh environment per case: every notebook of a kind starts with the same setup cell
    (tests/test_config.py), so it is run once, then every notebook's own imports run after it,
    each in a namespace of its own."""
    notebooks = KINDS[kind]
    setups = {code_cells(nb)[0] for nb in notebooks}
    assert len(setups) == 1, f"the {kind} notebooks do not share one setup cell"
    setup = setups.pop()
    assert "ATTNBOOK_SOURCE" in setup, "the first code cell is not the setup cell"
    imports = {}
    for nb in notebooks:
        lines = [line for cell in code_cells(nb) for line in top_level_imports(cell)]
        assert any("attnbook" in line for line in lines), (
            f"{nb.name} never imports attnbook"
        )
        imports[nb.name] = "\n".join(lines)

    start = time.monotonic()
    python = fresh_venv(tmp_path / "venv")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        and not k.startswith("PIP_")
    }
    env |= {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
    }
    if source == "index":
        env["PIP_FIND_LINKS"] = str(wheel.parent)
    else:
        env["ATTNBOOK_SOURCE"] = str(wheel)

    before = run(
        python,
        textwrap.dedent("""
        import importlib.util
        assert importlib.util.find_spec("torch") is not None, "torch not visible through the .pth"
        assert importlib.util.find_spec("attnbook") is None, "attnbook is importable already"
        """),
        env,
    )
    assert before.returncode == 0, before.stderr

    script = "\n".join(
        [
            "exec(compile(SETUP, '<setup cell>', 'exec'), {})",
            "for name, code in IMPORTS.items():",
            "    exec(compile(code, f'<imports of {name}>', 'exec'), {})",
            "import sys, attnbook, importlib.metadata",
            "assert attnbook.__file__.startswith(sys.prefix), attnbook.__file__",
            "print(importlib.metadata.version('attnbook'))",
        ]
    )
    program = f"SETUP = {setup!r}\nIMPORTS = {imports!r}\n{script}"
    after = run(python, program, env)
    elapsed = time.monotonic() - start
    assert after.returncode == 0, (
        f"{kind} notebooks after the setup cell:\n{after.stdout}\n{after.stderr}"
    )
    assert after.stdout.split()[-1] == wheel.name.split("-")[1], after.stdout
    print(
        f"{kind} ({source}): setup cell + imports of {len(notebooks)} notebooks in {elapsed:.1f} s"
    )


def test_without_the_index_the_cell_fails(tmp_path: Path) -> None:
    """The control: with an empty local index the same cell stops with pip's error, so in the
    cases above the package can only have come from the wheel."""
    setup = code_cells(KINDS["chapter"][0])[0]
    python = fresh_venv(tmp_path / "venv")
    (tmp_path / "empty").mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        and not k.startswith("PIP_")
    }
    env |= {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(tmp_path / "empty"),
    }
    result = run(python, setup, env)
    assert result.returncode != 0 and "attnbook==" in result.stderr, result.stderr
