"""The two wheels every autograder zip carries (`tools/exercise_build.py`, `seal_zip`): the
course package `attnbook` (the public checks the hidden tests import) and the grading engine
`attnbook-grader` (grader/), built from this checkout, so that Gradescope grades with exactly
the code that built and proved the zip, at the course's version, with no package registry
involved. Built once into `_build/exercises/wheels/` and again only when a source changed
(a hash of the files both wheels are built from); concurrent builds (`prove --jobs 2`) wait
for each other. Each is built from a copy of its sources, so the checkout gets no `build/` or
`*.egg-info` folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

__all__ = [
    "WHEELS",
    "IN_ZIP",
    "WheelError",
    "versions",
    "course_wheels",
    "installed_engine_problem",
]

ROOT = Path(__file__).resolve().parents[1]
WHEELS = ROOT / "_build" / "exercises" / "wheels"
IN_ZIP = "wheels"  # the folder of the zip that holds them (/autograder/source/wheels)
# each distribution: its folder and the files (or folders) it is built from
SOURCES = {
    "attnbook": (ROOT, ("pyproject.toml", "README.md", "LICENSE", "src/attnbook")),
    "attnbook-grader": (
        ROOT / "grader",
        ("pyproject.toml", "README.md", "LICENSE", "src/attnbook_grader"),
    ),
}
_SKIP = ("__pycache__", "*.pyc", "*.egg-info")


class WheelError(Exception):
    """The wheels cannot be built (`seal_zip` reports it as an ExerciseError)."""


def versions() -> dict[str, str]:
    """Distribution name -> the version its pyproject.toml gives."""
    return {
        name: tomllib.loads((folder / "pyproject.toml").read_text())["project"][
            "version"
        ]
        for name, (folder, _) in SOURCES.items()
    }


def wheel_name(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


def _files(folder: Path, parts: tuple[str, ...]) -> list[Path]:
    found = []
    for part in parts:
        path = folder / part
        found += sorted(
            p
            for p in ([path] if path.is_file() else path.rglob("*"))
            if p.is_file()
            and "__pycache__" not in p.parts
            and p.suffix != ".pyc"
            and not any(q.endswith(".egg-info") for q in p.parts)
        )
    return found


def sources_hash() -> str:
    """sha256 over the relative names and contents of every file the wheels are built from."""
    digest = hashlib.sha256()
    for name, (folder, parts) in SOURCES.items():
        for path in _files(folder, parts):
            digest.update(f"{name}:{path.relative_to(folder)}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _build(name: str, work: Path, out: Path) -> None:
    folder, parts = SOURCES[name]
    copy = work / name
    for part in parts:
        source = folder / part
        if source.is_dir():
            shutil.copytree(source, copy / part, ignore=shutil.ignore_patterns(*_SKIP))
        else:
            (copy / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / part)
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation"]
        + ["--outdir", str(out), str(copy)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise WheelError(
            f"building the wheel of {name} failed:\n{done.stdout[-2000:]}"
            f"{done.stderr[-2000:]}"
        )


def course_wheels(out: Path = WHEELS) -> dict[str, Path]:
    """Distribution name -> its wheel built from this checkout (built again only when a
    source changed). The two versions must agree: the engine is the course's release."""
    found = versions()
    if len(set(found.values())) != 1:
        raise WheelError(
            f"the course and the grading engine differ in version ({found}): "
            "run `make release-files` (tools/release_files.py) to make them agree"
        )
    wheels = {name: out / wheel_name(name, v) for name, v in found.items()}
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        stamp, digest = out / "sources.sha256", sources_hash()
        fresh = stamp.is_file() and stamp.read_text().strip() == digest
        if fresh and all(w.is_file() for w in wheels.values()):
            return wheels
        stamp.unlink(missing_ok=True)
        for old in out.glob("*.whl"):
            old.unlink()
        with tempfile.TemporaryDirectory() as tmp:
            for name in SOURCES:
                _build(name, Path(tmp), out)
        missing = [str(w) for w in wheels.values() if not w.is_file()]
        if missing:
            raise WheelError(f"the wheel build made no {missing}")
        stamp.write_text(digest + "\n")
    return wheels


def installed_engine_problem() -> str | None:
    """Why the installed grading engine (what `make grade` grades with) is not this
    checkout's release, or None: it must be installed (`make setup`) at the course's version."""
    course = versions()["attnbook"]
    try:
        installed = importlib.metadata.version("attnbook-grader")
    except importlib.metadata.PackageNotFoundError:
        return (
            "the grading engine attnbook-grader (grader/) is not installed: make setup"
        )
    if installed != course:
        return (
            f"the installed grading engine is attnbook-grader {installed}, the course is "
            f"{course}: make setup (installs grader/ of this checkout)"
        )
    return None
