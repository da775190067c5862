"""The profiler watcher behind the shortcut rules: while a function runs it
records the first call into the course package `attnbook`, into a library the question rules
out, or into a routine the question asks the student to write (``sys.setprofile``).

It runs where the function runs. On a student's machine (`grading.guarded`, public checks)
its finding is the verdict; in the process that runs a submission (the grading engine's
`sandbox`, attnbook-grader) it is only a second opinion sent back as data, which can take
points away and never give any: the grader decides the shortcut rules from the submitted
source (the engine's `source_rules`). Imports nothing else of the grading code, and not
PyTorch: it also runs in a process that must never hold it (the engine's `reach`).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.util import find_spec
from pathlib import Path

import numpy as np

__all__ = ["Watcher", "library_dir"]
_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])  # .../attnbook
_CHECKS_DIR = str(Path(__file__).resolve().parent)  # .../attnbook/exercise_checks
_NUMPY_DIR = str(Path(np.__file__).resolve().parent)


def library_dir(name: str) -> str | None:
    """Folder of an installed top-level package, without importing it (None if absent)."""
    try:
        spec = find_spec(name.split(".")[0])
    except (ImportError, ValueError):  # a module without a spec (e.g. a stand-in)
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(Path(list(spec.submodule_search_locations)[0]).resolve())


class Watcher:
    """A profile function that records calls the question rules out."""

    def __init__(
        self, libraries: Iterable[str], names: Iterable[str], allow_attnbook: bool
    ):
        self.names = set(names)
        self.libraries = [lib for lib in libraries]
        self.library_dirs = [
            d for d in (library_dir(lib) for lib in self.libraries) if d
        ]
        self.allow_attnbook = allow_attnbook
        self.found: list[str] = []
        self.watched_dirs = [
            d for d in (library_dir("torch"), _NUMPY_DIR, library_dir("scipy")) if d
        ]

    def __call__(self, frame, event, arg):  # noqa: ANN001 - the profile protocol
        if self.found:
            return
        if event == "call":
            file = frame.f_code.co_filename
            name = frame.f_code.co_name
            if (
                not self.allow_attnbook
                and file.startswith(_PACKAGE_DIR)
                and not file.startswith(_CHECKS_DIR)
            ):
                module = frame.f_globals.get("__name__", "attnbook")
                what = (
                    f"{module} (imported inside it)"
                    if name == "<module>"
                    else f"{module}.{name}"
                )
                self.found.append(f"{what} from the course package attnbook")
            elif any(file.startswith(d) for d in self.library_dirs):
                module = frame.f_globals.get("__name__", "?")
                self.found.append(
                    f"{module}.{name}, and this question rules out "
                    f"{' and '.join(self.libraries)}"
                )
            elif name in self.names and any(
                file.startswith(d) for d in self.watched_dirs
            ):
                module = frame.f_globals.get("__name__", "?")
                self.found.append(
                    f"{module}.{name}, the routine this question asks you to write"
                )
        elif event == "c_call":
            name = getattr(arg, "__name__", "")
            owner = getattr(arg, "__self__", None)
            module = getattr(arg, "__module__", None) or type(owner).__module__ or ""
            if name in self.names:
                self.found.append(
                    f"{module}.{name}, the routine this question asks you to write"
                )
            elif any(
                module == lib or module.startswith(lib + ".") for lib in self.libraries
            ):
                self.found.append(
                    f"{module}.{name}, and this question rules out "
                    f"{' and '.join(self.libraries)}"
                )
