"""One table of the grader's verdicts, end to end (issue 49, item 5): each row is a small
submission that breaks one rule (or, for the random generators, one that must keep its
points), graded by the engine as a notebook is, with the message it gets and the questions
that lose; every question no row of its grading expects to lose keeps its points.

Three gradings of one small exercise (one reference child for all):

* with the source rules on, isolated (a grade for credit): Python's `random` state moved
  (`session`), the grader's global generators following the child's (a caller that draws
  after a graded call gets what an in-process call would leave), a ruled-out routine spelled
  by ``hasattr`` or imported by the setup under another name (`source_rules`); code the
  allowlist refuses runs and is graded by what it does (the allowlist is a hint there): a
  harmless ``getattr`` with a computed name or ``operator.methodcaller`` keeps its points,
  an import of the course package (ruled out) fails in the child and loses (and, as root,
  the ``operator.methodcaller`` row once more at the chroot level);
* a practice grade (no isolation, ``ATTNBOOK_GRADE_UNSAFE=1``), where the allowlist stays
  the gate: refused code reached through part of a statement, through a name both imported
  and rebound, a trusted reference cell reading a name only refused code binds;
* with the source rules off, at the ``namespaces`` level (the isolation alone must hold,
  as in `test_grading_reach`): a connection to a port the grader listens on, the grader's
  network namespace, a file in a folder on the grader's command line (`jail`).

Each row is named after the one-line change of the engine it was written against
(`tools.mutations_grading`): that mutant makes the row fail.

Cost, measured on the shared 2-core machine at load ~10 (upper bounds): 3.8 s where an
earlier test has started the process servers (as in `make test`'s unit-package), 20 s
alone (their start), with two gradings; with the practice grading (issue 44) 13 s alone at
load ~7. Each grading runs one child.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from attnbook_grader import jail, source_rules
from attnbook_grader.engine import Exercise, grade_notebook, reference_session

TEST = """from otter.test_files import test_case

OK_FORMAT = False

name = "{q}"
points = 2

@test_case(points=2, hidden=False)
def test_it({fn}):
    import torch
    from attnbook.exercise_checks.grading import guarded
    x = torch.arange(3.0)
    got = guarded({fn}, {rule})(x)
    assert torch.allclose(got, {want}), got
"""
DOUBLE = "2 * x"
SOFTMAX = "torch.exp(x) / torch.exp(x).sum()"
NAMES = 'names=("softmax",)'
# the grader's global generators after two graded calls: what the same calls in this
# process leave (PyTorch's drawn where the rule allows it, then all three unguarded)
DRAWS = """from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2

@test_case(points=2, hidden=False)
def test_draws(draw):
    import random
    import numpy as np
    import torch
    from attnbook.exercise_checks.grading import guarded

    def seed():
        torch.manual_seed(3)
        np.random.seed(3)
        random.seed(3)

    def states():
        _, keys, pos, *_ = np.random.get_state()
        return torch.get_rng_state(), keys, pos, random.getstate()

    seed()
    checked = guarded(draw, global_torch_rng=True)
    first, second = checked(2), checked(2)
    every = draw(2, every=True)
    after = states()
    seed()
    local = [torch.rand(2), torch.rand(2)]
    mine = (torch.rand(2), np.random.rand(2), random.random())
    now = states()
    assert not torch.equal(first, second), "the grader's generator did not advance"
    assert torch.equal(first, local[0]) and torch.equal(second, local[1])
    assert torch.equal(every[0], mine[0]) and np.array_equal(every[1], mine[1])
    assert every[2] == mine[2]
    assert torch.equal(after[0], now[0]), "PyTorch's global state"
    assert np.array_equal(after[1], now[1]) and after[2] == now[2], "NumPy's"
    assert after[3] == now[3], "Python's random module's"
"""
TESTS = {
    "q1": TEST.format(q="q1", fn="double", rule="", want=DOUBLE),
    "q2": TEST.format(q="q2", fn="noisy", rule="", want=DOUBLE),
    "q3": DRAWS,
    "q4": TEST.format(q="q4", fn="scaled", rule="", want=DOUBLE),
    "q5": TEST.format(q="q5", fn="gather", rule="", want=DOUBLE),
    "q6": TEST.format(q="q6", fn="shifted", rule="", want=DOUBLE),
    "q7": TEST.format(q="q7", fn="guess", rule=NAMES, want=SOFTMAX),
    "q8": TEST.format(q="q8", fn="spread", rule=NAMES, want=SOFTMAX),
    "q9": TEST.format(q="q9", fn="fetch", rule="", want=DOUBLE),
    "q10": TEST.format(q="q10", fn="inside", rule="", want=DOUBLE),
    "q11": TEST.format(q="q11", fn="peek", rule="", want=DOUBLE),
    "q12": TEST.format(q="q12", fn="named", rule="", want=DOUBLE),
    "q13": TEST.format(q="q13", fn="times", rule="", want=DOUBLE),
    "q14": TEST.format(q="q14", fn="borrow", rule="", want=DOUBLE),
}
REFERENCE = [
    "import random\nimport numpy as np\nimport torch\n"
    "from torch.nn.functional import softmax as normalise",
    "def double(x):\n    return TWO * x",
    "TWO = round(2.0)",  # a reference cell: trusted, run as it is
    'grader.check("q1")',
    "def noisy(x):\n    return 2 * x",
    'grader.check("q2")',
    "def draw(n, every=False):\n    if not every:\n        return torch.rand(n)\n"
    "    return torch.rand(n), np.random.rand(n), random.random()",
    'grader.check("q3")',
    "def scaled(x):\n    return 2 * x",
    'grader.check("q4")',
    "def gather(x):\n    return 2 * x",
    'grader.check("q5")',
    "def shifted(x):\n    return 2 * x",
    'grader.check("q6")',
    f"def guess(x):\n    return {SOFTMAX}",
    'grader.check("q7")',
    f"def spread(x):\n    return {SOFTMAX}",
    'grader.check("q8")',
    "def fetch(x):\n    return 2 * x",
    'grader.check("q9")',
    "def inside(x):\n    return 2 * x",
    'grader.check("q10")',
    "def peek(x):\n    return 2 * x",
    'grader.check("q11")',
    "def named(x):\n    return 2 * x",
    'grader.check("q12")',
    "def times(x):\n    return 2 * x",
    'grader.check("q13")',
    "def borrow(x):\n    return 2 * x",
    'grader.check("q14")',
]
CELL = {
    REFERENCE[i].split("(")[0].removeprefix("def "): i
    for i in range(len(REFERENCE))
    if REFERENCE[i].startswith("def ")
}


@dataclass(frozen=True)
class Row:
    id: str  # the mutant of `tools.mutations_grading` it was written against first
    rule: str
    # "source" (the source rules on, isolated), "practice" (on, no isolation: the allowlist
    # is the gate) or "jail" (off: the isolation alone)
    grading: str
    cells: dict[str, str]  # the answer's function -> the cell that replaces its cell
    loses: tuple[str, ...] = ()
    says: tuple[str, ...] = ()  # in each losing question's reason or failed tests
    # the questions the row is about that keep their points (every question that no row
    # of its grading loses keeps them anyway)
    keeps: tuple[str, ...] = ()
    # in a losing question's messages where the machine cannot show the rule: skipped
    unseen: str | None = None


ROWS = [
    Row(
        "E1-random-state-moved",
        "Python's random global state moved",
        "source",
        {
            "noisy": "import random\ndef noisy(x):\n"
            "    return 2 * x + 0 * random.random()"
        },
        ("q2",),
        ("changed the global random state of Python's random module",),
    ),
    Row(
        "E4-caller-generators-follow",
        "the caller's generators advance as the child's did",
        "source",
        {},
        keeps=("q3",),
    ),
    Row(
        "G2-part-of-a-statement",
        "refused code reached through part of a statement",
        "practice",
        {
            "scaled": "cache = []\ndef scaled(x):\n    return 2 * x + 0 * len(cache)",
            "gather": "def gather(x):\n    cache.append(eval('x'))\n    return 2 * x",
        },
        ("q4", "q5"),
        ("dynamic code / tampering", "eval", "in gather"),
    ),
    Row(
        "G3-trusted-cell-reads-refused",
        "a trusted reference cell reads a name only refused code binds",
        "practice",
        # the reference's `TWO = round(2.0)` cell, trusted, reads `round`, which only the
        # refused statement binds (not an answer's name: those are always kept); run as it
        # is, it finds the builtin and binds the `TWO` that q1's function reads
        {"double": "round = eval('round')\ndef double(x):\n    return TWO * x"},
        keeps=("q1", "q3"),
    ),
    Row(
        "G1-imported-and-rebound",
        "a name both imported and rebound",
        "practice",
        {
            "shifted": "import numpy as store\nstore = {}\n"
            "def put(x):\n    store['k'] = eval('x')\n"
            "def shifted(x):\n    return 2 * x + 0 * len(store)"
        },
        ("q6",),
        ("dynamic code / tampering", "eval", "in put"),
    ),
    Row(
        "G5-hasattr-spells",
        "hasattr(x, name) spells a ruled-out routine",
        "source",
        {
            "guess": "def guess(x):\n    if hasattr(x, 'softmax'):\n"
            f"        return {SOFTMAX}\n    return x"
        },
        ("q7",),
        # read from the source (the child's profiler watcher would say it without where)
        ("shortcut: your function uses softmax", "read from your code"),
    ),
    Row(
        "G4-setup-alias",
        "a ruled-out routine the setup imported under another name",
        "source",
        {"spread": "def spread(x):\n    return normalise(x, dim=-1)"},
        ("q8",),
        (
            "shortcut: your function uses torch.nn.functional.softmax",
            "read from your code",
        ),
    ),
    Row(
        "H1-harmless-getattr-runs",
        "the allowlist refuses getattr with a computed name; isolated, it runs: a hint",
        "source",
        {
            "named": "class Twice:\n    def apply(self, x):\n        return 2 * x\n"
            "def named(x):\n    how = 'app' + 'ly'\n"
            "    return getattr(Twice(), how)(x)"
        },
        keeps=("q12",),
    ),
    Row(
        "H2-operator-runs",
        "the allowlist refuses operator.methodcaller; isolated, it runs: a hint",
        "source",
        {
            "times": "import operator\ndef times(x):\n"
            "    return operator.methodcaller('__mul__', 2)(x)"
        },
        keeps=("q13",),
    ),
    Row(
        "H3-ruled-out-import-fails-in-the-child",
        "a refused import of the course package (ruled out): it fails in the child",
        "source",
        {
            "borrow": "def borrow(x):\n"
            "    mod = __import__('attnbook.attention', fromlist=['_'])\n"
            "    return 2 * x"
        },
        ("q14",),
        ("No module named",),
    ),
    Row(
        "J4-connect",
        "network: a connection to a port the grader listens on",
        "jail",
        {
            "fetch": "import socket\ndef fetch(x):\n"
            "    socket.create_connection(('127.0.0.1', PORT), timeout=5).close()\n"
            "    return 2 * x"
        },
        ("q9",),
        ("Operation not permitted",),
    ),
    Row(
        "J4-network-namespace",
        "network: the grader's network namespace",
        "jail",
        {
            "inside": "import os\ndef inside(x):\n"
            "    here = os.readlink('/proc/self/ns/net')\n"
            "    assert here == NET, f'outside the grader network: {here}'\n"
            "    return 2 * x"
        },
        ("q10",),
        ("outside the grader network",),
        unseen="No such file or directory: '/proc/self/ns/net'",  # /proc masked
    ),
    Row(
        "J1-command-line-path",
        "a file in a folder on the grader's command line",
        "jail",
        {
            "peek": "def peek(x):\n    with open(SECRET) as f:\n"
            "        assert f.read() == 'the answers'\n    return 2 * x"
        },
        ("q11",),
        ("No such file",),
    ),
]


def _nb(cells: list[str]) -> dict:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    for cell in nb.cells:
        cell.metadata["tags"] = ["otter_assign_solution_cell"]
    return nb


def _sources(grading: str, fill: dict[str, str]) -> list[str]:
    """The reference notebook with the cells of every row of `grading` replaced."""
    sources = list(REFERENCE)
    for row in ROWS:
        if row.grading == grading:
            for function, text in row.cells.items():
                for name, value in fill.items():
                    text = text.replace(name, value)
                sources[CELL[function]] = text
    return sources


@pytest.fixture(scope="module")
def table():
    exercise = Exercise.load(TESTS, _nb(REFERENCE))
    session = reference_session(exercise)
    yield exercise, session
    session.close()


@pytest.fixture(scope="module")
def graded_source(table) -> dict:
    """The submission of every "source" row, graded with the source rules on."""
    exercise, session = table
    return grade_notebook(exercise, _sources("source", {}), session, 120)


@pytest.fixture(scope="module")
def graded_practice(table) -> dict:
    """The submission of every "practice" row, graded without isolation (a practice grade:
    ``ATTNBOOK_GRADE_UNSAFE=1``), where the allowlist is the gate."""
    exercise, session = table
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jail, "_level", [None])
        patch.setenv("ATTNBOOK_GRADE_UNSAFE", "1")
        return grade_notebook(exercise, _sources("practice", {}), session, 120)


def test_the_allowlist_notes_what_it_would_refuse_and_counts_none_of_it(graded_source):
    """Isolated, what the allowlist finds is noted beside the grade, not counted; in a
    practice grade it is not run and costs its question (`graded_practice`)."""
    notes = [why for _, why in graded_source["cell_errors"]]
    for what in (
        "getattr with a name computed at run time",
        "methodcaller",
        "__import__",
    ):
        assert any(
            n.startswith("dynamic code / tampering: the allowlist would refuse")
            and what in n
            and "not counted" in n
            for n in notes
        ), (what, notes)
    assert not any("house rules" in t["name"] for t in graded_source["tests"])


def test_a_practice_grade_keeps_the_allowlist_as_the_gate(graded_practice):
    assert graded_practice["isolation"]["level"] == "none"
    assert graded_practice["message"].startswith("PRACTICE GRADE, NOT FOR CREDIT")
    said = graded_practice["reasons"]["q5"]
    assert said.startswith("dynamic code / tampering: not allowed"), said
    assert "does not run this statement" in said, said


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="the chroot level needs root",
)
def test_at_the_chroot_level_too_the_allowlist_decides_no_grade(table):
    """The other isolation level: `operator.methodcaller` (H2) runs in the child and keeps
    q13."""
    exercise, session = table
    sources = list(REFERENCE)
    [row] = [r for r in ROWS if r.id == "H2-operator-runs"]
    sources[CELL["times"]] = row.cells["times"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jail, "_level", ["chroot"])
        result = grade_notebook(exercise, sources, session, 120)
    assert result["isolation"]["level"] == "chroot", result["isolation"]
    assert result["questions"]["q13"] == result["maxima"]["q13"], _said(result, "q13")
    assert any("would refuse" in why for _, why in result["cell_errors"]), result


@pytest.fixture(scope="module")
def graded_jail(table) -> dict:
    """The submission of every "jail" row, graded with the source rules off at the
    namespaces level (skipped where the machine has no namespaces)."""
    if jail.level() != "namespaces":
        pytest.skip(
            f"the jail's rows need the namespaces level (root, or unprivileged user "
            f"namespaces); this machine gives {jail.level()!r}"
        )
    exercise, session = table
    # a folder named on the grader's command line, inside what the view would show
    # (site-packages): the view must lack it
    folder = Path(tempfile.mkdtemp(prefix="_attnbook_argv_", dir=_site()))
    (folder / "secret.txt").write_text("the answers")
    listener = socket.create_server(("127.0.0.1", 0))
    fill = {
        "PORT": str(listener.getsockname()[1]),
        "NET": repr(os.readlink("/proc/self/ns/net")),
        "SECRET": repr(str(folder / "secret.txt")),
    }
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "argv", [*sys.argv, str(folder)])
            patch.setenv(source_rules.NO_ALLOWLIST, "1")
            sources = _sources("jail", fill)
            result = grade_notebook(exercise, sources, session, 120, False)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):  # nobody connected
            listener.accept()
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
    return result


def _site() -> str:
    return sysconfig.get_paths()["purelib"]


def _said(result: dict, question: str) -> str:
    """The reason a question lost its points and its failed tests' messages."""
    failed = [t["message"] for t in result["tests"] if t["question"] == question]
    return " | ".join([result["reasons"].get(question, ""), *failed])


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_each_broken_rule_costs_its_questions_only(row, request):
    result = request.getfixturevalue(f"graded_{row.grading}")  # graded once per module
    assert result["status"] == "ok", result
    lost = {q for r in ROWS if r.grading == row.grading for q in r.loses}
    keeps = set(row.keeps) | {q for q in TESTS if q not in lost}
    for question in row.loses:
        said = _said(result, question)
        if row.unseen and row.unseen in said:
            pytest.skip(f"this machine cannot show it: {row.unseen}")
        assert result["questions"][question] == 0.0, (row.rule, question, said)
        for words in row.says:
            assert words in said, (row.rule, question, said)
    for question in sorted(keeps):
        assert result["questions"][question] == result["maxima"][question], (
            row.rule,
            question,
            _said(result, question),
        )
