"""What the wheel test and the setup-cell test share: the distributions built from a copy of
this checkout, and fresh virtual environments that see this interpreter's packages (torch,
otter, ...) through a `.pth` file but not `attnbook`, so nothing big is installed or downloaded.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300  # seconds per subprocess; each normally takes a few seconds


def checkout_copy(dest: Path) -> Path:
    """A copy of the repository's files as git would publish them (tracked + not ignored)."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listing.returncode == 0 and listing.stdout:
        for name in filter(None, listing.stdout.split("\0")):
            if (ROOT / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
    else:
        shutil.copytree(
            ROOT,
            dest,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(
                ".venv",
                "_build",
                ".git",
                ".cache",
                "*.egg-info",
                "__pycache__",
                ".pytest_cache",
                "dist",
            ),
        )
    return dest


def build_distributions(work: Path, folder: str = "") -> tuple[Path, Path]:
    """(sdist, wheel) as `python -m build` makes them from a copy of the checkout (no build
    isolation: setuptools comes from the pinned environment, so nothing is downloaded);
    `folder`: the project's folder in it ("grader": the grading engine's)."""
    source = checkout_copy(work / "checkout") / folder
    out = work / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--outdir",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    (sdist,), (wheel,) = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    return sdist, wheel


def host_site_packages() -> list[str]:
    """Where this interpreter's packages (torch, otter, ...) live."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def fresh_venv(where: Path, hide: tuple[str, ...] = ()) -> Path:
    """A new virtual environment that sees this interpreter's packages but not `attnbook`:
    its `.pth` file names a folder of links to every entry of this interpreter's
    site-packages except attnbook's own (the editable install and its metadata, which pip would
    otherwise take for an installed attnbook). It has no pip or setuptools of its own (Python
    3.11's would shadow the pinned ones, and torch needs a newer setuptools): `python -m pip`
    runs this interpreter's pip. `hide` names more prefixes of site-packages entries to leave
    out (an `otter` hides the package and `otter_grader-X.dist-info`)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        timeout=TIMEOUT,
    )
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    host = where / "host-packages"
    host.mkdir()
    for folder in host_site_packages():
        for entry in Path(folder).iterdir():
            name = entry.name.lower()
            if not (
                name.startswith(("attnbook", "_attnbook", "__editable__", *hide))
                or (host / entry.name).exists()
            ):
                (host / entry.name).symlink_to(entry)
    (Path(purelib) / "host-packages.pth").write_text(f"{host}\n")
    return python


def code_cells(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c["cell_type"] == "code"
    ]


def top_level_imports(source: str) -> list[str]:
    """The module-level `import`/`from … import` statements of a cell (IPython magics ignored)."""
    python = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line
        for line in source.splitlines()
    )
    tree = ast.parse(python)
    return [
        ast.get_source_segment(python, node) or ""
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
    ]
