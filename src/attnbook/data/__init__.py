"""Data files shipped inside the package: Tiny Shakespeare (read by
`attnbook.text.load_tiny_shakespeare`, chapter 6) and the JSON records of the benchmarks that
chapters 2, 3 and 6-11 quote. README.md beside this file states their provenance and licence."""

from __future__ import annotations

import importlib.resources
import json
from typing import Any

__all__ = ["benchmark_record", "write_benchmark_record", "source_commit"]


def benchmark_record(name: str) -> dict[str, Any]:
    """The record `benchmark_<name>.json` written by a script in benchmarks/ (chapters 2 and
    6-11): a dict with at least "command", "seeds", "versions" and "results"."""
    if not isinstance(name, str) or not name.replace("_", "").isalnum():
        raise ValueError(f"name must be letters, digits and '_', got {name!r}")
    ref = importlib.resources.files(__name__).joinpath(f"benchmark_{name}.json")
    if not ref.is_file():
        known = sorted(
            p.name[len("benchmark_") : -len(".json")]
            for p in importlib.resources.files(__name__).iterdir()
            if p.name.startswith("benchmark_") and p.name.endswith(".json")
        )
        raise FileNotFoundError(
            f"no benchmark record {name!r}; the package has {known}"
        )
    record = json.loads(ref.read_text(encoding="utf-8"))
    missing = {"command", "seeds", "versions", "results"} - record.keys()
    if missing:
        raise ValueError(f"benchmark record {name!r} lacks {sorted(missing)}")
    return record


def write_benchmark_record(
    path: str, command: str, seeds: list[int], results: Any, **extra: Any
) -> None:
    """Write a benchmark record (the format `benchmark_record` reads) to `path`: the command,
    the seeds, the results, and the versions, commit and machine that produced them (the
    records of chapters 2, 3 and 6-11)."""
    import datetime
    import os
    import platform
    from pathlib import Path

    import numpy
    import torch

    import attnbook

    record = {
        "command": command,
        "seeds": seeds,
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "numpy": numpy.__version__,
            "attnbook": getattr(attnbook, "__version__", "?"),
        },
        "commit": source_commit(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores ({_processor_name()})",
        "date": datetime.date.today().isoformat(),
        **extra,
        "results": results,
    }
    Path(path).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def source_commit() -> str:
    """The git commit of the package's checkout, "+changes" added if its code (these
    records aside) differs from that commit; "unknown" outside a git checkout (the provenance
    of chapters 2, 3 and 6-11's records)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]  # src/attnbook/data -> the checkout
    if not (root / ".git").exists():
        return "unknown"

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False
        ).stdout.strip()

    try:
        head = git("rev-parse", "HEAD")
        changed = git(
            "status",
            "--porcelain",
            "src",
            ":(exclude,glob)src/attnbook/data/benchmark_*",
        )
    except OSError:  # no git
        return "unknown"
    return (head or "unknown") + ("+changes" if changed else "")


def _processor_name() -> str:
    """The processor's name: `platform.processor()`, else Linux's /proc/cpuinfo "model
    name", else "unknown"."""
    import platform
    from pathlib import Path

    if platform.processor():
        return platform.processor()
    try:
        lines = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return "unknown"
    names = [
        line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")
    ]
    return names[0] if names and names[0] else "unknown"
