"""The notebooks' setup cell really installs `attnbook` where it is missing (Colab, fresh Binder).

For each kind of notebook (chapters, student exercises): a fresh virtual environment without `attnbook` (its heavy dependencies,
torch etc., come from this interpreter's site-packages through a path line in a `.pth` file, so
nothing big is downloaded), `ATTNBOOK_SOURCE` pointing at a copy of this checkout; then the
shared first code cell runs in that environment, followed by every notebook's top-level
imports, in one process, as a kernel would run them.
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(ROOT.glob("book/*.ipynb")) + sorted(ROOT.glob("exercises/student/*.ipynb"))
TIMEOUT = 300  # seconds per subprocess; a case normally takes well under a minute


def code_cells(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells if c["cell_type"] == "code"]


def top_level_imports(source: str) -> list[str]:
    """The module-level `import`/`from … import` statements of a cell (IPython magics ignored)."""
    python = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                       for line in source.splitlines())
    tree = ast.parse(python)
    return [ast.get_source_segment(python, node) or "" for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
            and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]


def host_site_packages() -> list[str]:
    """Where this interpreter's packages (torch, otter, …) live."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def checkout_copy(dest: Path) -> Path:
    """A copy of the repository's files as git would publish them (tracked + not ignored)."""
    listing = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                             cwd=ROOT, capture_output=True, text=True)
    if listing.returncode == 0 and listing.stdout:
        for name in filter(None, listing.stdout.split("\0")):
            if (ROOT / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
    else:
        shutil.copytree(ROOT, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".venv", "_build", ".git", ".cache", "*.egg-info", "__pycache__", ".pytest_cache"))
    return dest


def fresh_venv(where: Path) -> Path:
    """A new virtual environment that sees this interpreter's packages but not `attnbook`."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=TIMEOUT)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "host-packages.pth").write_text("\n".join(host_site_packages()) + "\n")
    return python


def run(python: Path, code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-c", code], env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`ATTNBOOK_SOURCE` for the setup cell: a file:// URL of a copy of this checkout."""
    copy = checkout_copy(tmp_path_factory.mktemp("checkout"))
    assert (copy / "pyproject.toml").is_file() and (copy / "src" / "attnbook").is_dir()
    return copy.as_uri()


def test_there_are_notebooks() -> None:
    assert any(p.parent.name == "book" for p in NOTEBOOKS), "no chapter notebook in book/"
    assert any(p.parent.name == "student" for p in NOTEBOOKS), "no exercises/student notebook"


KINDS = {
    "chapter": sorted(ROOT.glob("book/*.ipynb")),
    "exercise": sorted(ROOT.glob("exercises/student/*.ipynb")),
}


@pytest.mark.parametrize("kind", KINDS)
def test_setup_cell_installs_attnbook(kind: str, source: str, tmp_path: Path) -> None:
    """One fresh environment per kind of notebook: every chapter (and every student notebook)
    starts with the same setup cell (tests/test_config.py), so it is run once, then every
    notebook's own imports run after it, each in a namespace of its own."""
    notebooks = KINDS[kind]
    assert notebooks, f"no {kind} notebooks"
    setups = {code_cells(nb)[0] for nb in notebooks}
    assert len(setups) == 1, f"the {kind} notebooks do not share one setup cell"
    setup = setups.pop()
    assert "ATTNBOOK_SOURCE" in setup, "the first code cell is not the setup cell"
    imports = {}
    for nb in notebooks:
        lines = [line for cell in code_cells(nb) for line in top_level_imports(cell)]
        assert any("attnbook" in line for line in lines), f"{nb.name} never imports attnbook"
        imports[nb.name] = "\n".join(lines)

    start = time.monotonic()
    python = fresh_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env |= {"ATTNBOOK_SOURCE": source, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}

    before = run(python, textwrap.dedent("""
        import importlib.util
        assert importlib.util.find_spec("torch") is not None, "torch not visible through the .pth"
        assert importlib.util.find_spec("attnbook") is None, "attnbook is importable already"
        """), env)
    assert before.returncode == 0, before.stderr

    script = "\n".join([
        "exec(compile(SETUP, '<setup cell>', 'exec'), {})",
        "for name, code in IMPORTS.items():",
        "    exec(compile(code, f'<imports of {name}>', 'exec'), {})",
        "import sys, attnbook",
        "assert attnbook.__file__.startswith(sys.prefix), attnbook.__file__",
    ])
    program = f"SETUP = {setup!r}\nIMPORTS = {imports!r}\n{script}"
    after = run(python, program, env)
    elapsed = time.monotonic() - start
    assert after.returncode == 0, f"{kind} notebooks after the setup cell:\n{after.stdout}\n{after.stderr}"
    print(f"{kind}: setup cell + imports of {len(notebooks)} notebooks in {elapsed:.1f} s")
