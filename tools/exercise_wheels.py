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
import functools
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


# ----------------------------------------------------------------------------- the zip's environment
# Gradescope's image (Ubuntu 22.04 unless the assignment chooses another) runs setup.sh once
# when the zip is uploaded: Miniforge (pinned) brings the Python the lock was proved with,
# and the environment installs the grader's dependency closure at the lock's versions. No
# browser, no TeX, no compilers, no Jupyter server: the engine needs none of them.
SETUP_SCRIPT = """#!/usr/bin/env bash
# The course's autograder: Python from Miniforge (pinned), then the grading engine's own
# dependencies at the versions of the course's hashed lock (environment.yml). Nothing else.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends wget ca-certificates
arch=$(uname -m)
wget -nv "https://github.com/conda-forge/miniforge/releases/download/25.3.1-0/Miniforge3-Linux-${arch}.sh" \\
    -O /autograder/source/miniforge.sh
bash /autograder/source/miniforge.sh -b -p /root/miniforge3
rm /autograder/source/miniforge.sh
/root/miniforge3/bin/mamba env create -y -f /autograder/source/environment.yml
/root/miniforge3/bin/mamba shell init --shell bash
"""
TARGET_MARKERS = {  # the machine the zip installs on: Gradescope's Linux, the zip's Python
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "python_version": "3.13",
    "python_full_version": "3.13.0",
}


def grader_closure(root: str = "attnbook-grader") -> list[str]:
    """The distributions the grading engine imports, all the way down (their declared
    requirements, extras and markers evaluated for `TARGET_MARKERS`), from the installed
    metadata: canonical names, sorted, `root` and the course package included. Read once
    per process (0.19 s: every build of an exercise asks)."""
    return list(_closure_of(root))


@functools.cache
def _closure_of(root: str) -> tuple[str, ...]:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        found.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: pinned from the lock, its own needs unread
        for text in requires:
            req = Requirement(text)
            wanted = [{**TARGET_MARKERS, "extra": e} for e in sorted(extras) or [""]]
            if req.marker is None or any(req.marker.evaluate(m) for m in wanted):
                todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return tuple(sorted(found))


def lock_pins(lock: Path = ROOT / "requirements" / "lock.txt") -> dict[str, list[str]]:
    """canonical name -> its lines of the lock ("name==version ; marker", no hashes)."""
    from packaging.utils import canonicalize_name

    pins: dict[str, list[str]] = {}
    for line in lock.read_text().splitlines():
        if line and not line.startswith((" ", "#")) and "==" in line:
            pin = line.rstrip(" \\")
            name = canonicalize_name(pin.split("==")[0])
            pins.setdefault(name, []).append(pin)
    return pins


def closure_pins(skip: tuple[str, ...] = ()) -> list[str]:
    """The lock's line of each distribution of `grader_closure` (but `skip`); raises
    WheelError naming those the lock does not pin."""
    pins = lock_pins()
    wanted = [n for n in grader_closure() if n not in skip]
    missing = [n for n in wanted if n not in pins]
    if missing:
        raise WheelError(f"the lock pins no {missing}: run `make lock`")
    return [pin for n in wanted for pin in pins[n]]
