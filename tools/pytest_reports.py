"""A pytest plugin for CI: each pytest run writes a JUnit XML report of its own into the folder
named by the environment variable PYTEST_REPORTS, so that the workflow can upload every report
of `make test` (whose lanes run pytest several times, two at once) when something fails.

    PYTEST_ADDOPTS="-p tools.pytest_reports" PYTEST_REPORTS=_build/reports/pytest make test

Without PYTEST_REPORTS, or when a run names its own --junitxml, it does nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest


def report_name(args: list[str], pid: int) -> str:
    """`<first thing tested>[+N more]-<pid>.xml`, e.g. `book_01_attention.ipynb+15-4242.xml`."""
    targets = [
        a
        for a in args
        if not a.startswith("-")
        and ("/" in a or a.endswith((".py", ".ipynb")) or a == "tests")
    ]
    first = re.sub(r"[^A-Za-z0-9_.]+", "_", targets[0] if targets else "pytest").strip(
        "_"
    )[:60]
    more = f"+{len(targets) - 1}" if len(targets) > 1 else ""
    return f"{first}{more}-{pid}.xml"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    folder = os.environ.get("PYTEST_REPORTS")
    if not folder or config.option.xmlpath:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    config.option.xmlpath = str(
        Path(folder) / report_name(list(config.invocation_params.args), os.getpid())
    )
