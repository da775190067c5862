#!/usr/bin/env python3
"""Execution time of every chapter and exercise master notebook (the course's speed budget:
about a minute per chapter on a 2-core laptop CPU).

    python benchmarks/notebook_times.py [NOTEBOOK ...]

Each notebook runs top to bottom in a fresh kernel (nothing is written back). Not a test:
run it on an otherwise idle machine and put the numbers in the issue note.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def run(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    return time.perf_counter() - start


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or (
        sorted(ROOT.glob("book/*.ipynb"))
        + sorted(ROOT.glob("exercises/masters/*.ipynb"))
    )
    total = 0.0
    for path in paths:
        seconds = run(path)
        total += seconds
        print(
            f"{path.relative_to(ROOT) if path.is_absolute() else path}: {seconds:6.1f} s",
            flush=True,
        )
    print(f"total: {total:.1f} s")


if __name__ == "__main__":
    main()
