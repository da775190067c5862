"""The grader's memory on Gradescope's path (issue 44: one submission under 512 MiB).

* the grader imports of otter only its test-file classes (`autograder.light_otter`: not
  pandas, IPython, nbconvert), and PyTorch's ``assert_close`` no longer imports
  ``torch.distributed.tensor`` (and SymPy with it) to ask whether an input is a DTensor
  (`autograder.no_dtensor_import`); a test file still grades, its comparisons still fail;
* a child forked from a process server finds the server's objects frozen (`server_ready`),
  so its garbage collections leave the pages it shares with the server alone.

The numbers are `benchmarks/grading_footprint.py`'s (`--by-process`: what each process
holds), not a test's. Cost: 9.6 s on the shared 2-core machine at load ~3 (a fresh Python
3.2 s; the usual process server's start 6.2 s, less where an earlier test started it).
"""

from __future__ import annotations

import subprocess
import sys

from attnbook_grader import wire
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


_FIRST_GRADIENT = """
from attnbook_grader import servers, wire
from attnbook_grader.session import Session
servers.want_meta({})  # as for an exercise whose tests never name the meta device
source = (
    "import sys, torch\\n"
    "from attnbook.exercise_checks.probes import gradient_call\\n"
    "before = set(sys.modules)\\n"
    "gradient_call(lambda t: t * 2, [torch.ones(3)], {}, [0], None, torch.ones(3))\\n"
    "new = sorted(set(sys.modules) - before)\\n"
)
session = Session([source], {}, None, isolate=False)
found = session.describe("new")
print(session.ready["cell_errors"] or wire.decode(found["value"])[:10])
session.close()
"""


def test_a_childs_first_gradient_imports_nothing_more():
    """The gradient probe's first `torch.autograd.grad` with an upstream gradient imports
    PyTorch's symbolic shapes and SymPy (480 modules) unless the process server loaded them
    (`servers._PRELOAD`): ~0.3 s of CPU in every child that took a gradient, and as root
    an import by the sandbox user, who may not read a Python under /root (the child's
    ImportError, checked; at the "chroot" level the reference of exercise 3 scored 13.65 of
    14)."""
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_GRADIENT],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    new = done.stdout.strip().splitlines()[-1]
    assert new == "[]", f"imported by the child's first gradient: {new}"
