"""The grader's memory on Gradescope's path (issue 44: one submission under 512 MiB).

* the grader imports of otter only its test-file classes (`autograder.light_otter`: not
  pandas, IPython, nbconvert), and PyTorch's ``assert_close`` no longer imports
  ``torch.distributed.tensor`` (and SymPy with it) to ask whether an input is a DTensor
  (`autograder.no_dtensor_import`); a test file still grades, its comparisons still fail;
* a child forked from a process server finds the server's objects frozen (`server_ready`),
  so its garbage collections leave the pages it shares with the server alone;
* and finds done what PyTorch does on first use (`first_use`), at both isolation levels.

The numbers are `benchmarks/grading_footprint.py`'s (`--by-process`: what each process
holds), not a test's. Cost: 16 s on an idle 2-core machine (three fresh Pythons, two of
them starting a process server, ~3-5 s each).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from attnbook_grader import jail, wire
from attnbook_grader.session import Session

_GRADER = '''
import sys
from attnbook_grader.autograder import light_otter, no_dtensor_import
assert light_otter() and no_dtensor_import()
assert not light_otter() and not no_dtensor_import()  # once is enough
from otter.test_files.exception_test import ExceptionTestFile
import torch
text = """
from attnbook.exercise_checks.case import test_case
OK_FORMAT = False
name = "q1"
points = [1, 2]

@test_case(points=None, hidden=False)
def test_ones(x):
    import torch
    torch.testing.assert_close(x, torch.ones(2))

@test_case(points=None, hidden=True)
def test_zeros(x):
    import torch
    torch.testing.assert_close(x, torch.zeros(2), msg="zeros expected")
"""
tests = ExceptionTestFile.from_string(text, path="tests/q1.py")
tests.run({"x": torch.ones(2)})
print([r.passed for r in tests.test_case_results], float(tests.score))
heavy = ("pandas", "IPython", "nbconvert", "ipywidgets", "torch.distributed.tensor", "sympy")
print(sorted(m for m in heavy if m in sys.modules))
'''


def test_the_grader_imports_of_otter_and_pytorch_only_what_grading_uses():
    done = subprocess.run(
        [sys.executable, "-c", _GRADER], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results, loaded = done.stdout.strip().splitlines()[-2:]
    assert results == "[True, False] 1.0", results  # a miss still fails
    assert loaded == "[]", f"imported though grading never uses it: {loaded}"


def test_a_child_finds_the_servers_objects_frozen():
    """Without `server_ready` in the preloads a child's freeze count is 0 (checked)."""
    session = Session(
        ["import gc\nfrozen = gc.get_freeze_count()"], {}, None, isolate=False
    )
    try:
        frozen = wire.decode(session.describe("frozen")["value"])
    finally:
        session.close()
    assert frozen > 100_000, f"{frozen} objects frozen in the process server"


_FIRST_USES = """
import json, sys
from attnbook_grader import jail, servers, wire
from attnbook_grader.session import Session
servers.want_meta({})  # as for an exercise whose tests never name the meta device
jail._level[:] = [sys.argv[1]]
source = (
    "import sys, torch\\n"
    "from attnbook.exercise_checks import tests_dir\\n"
    "from attnbook.exercise_checks.probes import gradient_call\\n"
    "before = set(sys.modules)\\n"
    "folder = tests_dir('ex10_induction')\\n"  # the public checks' cell
    "gradient_call(lambda t: t * 2, [torch.ones(3)], {}, [0], None, torch.ones(3))\\n"
    "shown = str(torch.ones(2))\\n"
    "half = torch.ones(3).to(torch.float16).mean().item()\\n"
    "new = sorted(set(sys.modules) - before)\\n"
)
session = Session([source], {}, None)  # a submission's process, at that level
found = session.describe("new")
errors = session.ready["cell_errors"]
print(json.dumps({"errors": errors, "new": [] if errors else wire.decode(found["value"])}))
session.close()
"""


@pytest.mark.parametrize("how", ["namespaces", "chroot"])
def test_what_pytorch_does_on_first_use_the_children_find_done(how):
    """A gradient given an upstream gradient (the gradient probe) imports PyTorch's symbolic
    shapes and SymPy (480 modules), printing a tensor imports a module, the first conversion
    to float16 reads the CPU's features: each child did that again (~0.3 s of CPU for the
    gradient) unless the process server did it once (`attnbook_grader.first_use`), and at the
    chroot level could not (an ImportError, "Failed to initialize cpuinfo!": exercise 10's
    reference scored 12.3 of 14 at a variant there). The public checks' cell runs too."""
    if how == "chroot" and os.geteuid() != 0:
        pytest.skip("the chroot level needs root")
    if how == "namespaces" and jail.level() != "namespaces":
        pytest.skip("no namespaces on this machine")
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_USES, how],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["errors"] == [], (
        f"the first uses failed in the child: {found['errors']}"
    )
    assert found["new"] == [], (
        f"imported by the child's first uses: {found['new'][:10]}"
    )
