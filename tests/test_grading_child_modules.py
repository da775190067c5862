"""What the process that runs a submission holds before its first cell (issue 44, the cost
of a grading): the modules its answers may import, not the grader's.

* ``import otter`` in a notebook finds the engine's stand-in (`sandbox`), whose ``Notebook``
  does nothing (and a spec, so the setup cell's ``find_spec("otter")`` finds it): neither
  otter nor pandas is loaded in the child, whose cells run as before;
* matplotlib (an allowed module) is there before any cell, and closing figures still works;
* a cell in IPython's syntax (a magic, a shell escape) still runs, through IPython's
  transformer, and one that is not Python in either syntax is a SyntaxError of its cell.

Cost: one child of the usual process server (started once per test process).
"""

from __future__ import annotations

import pytest

from attnbook_grader import wire
from attnbook_grader.session import Session

CELLS = [
    "import importlib.util\n"
    "found = importlib.util.find_spec('otter') is not None  # the setup cell's test\n"
    "import otter\n"
    "import sys\n"
    'grader = otter.Notebook(tests_dir="nowhere")\n'
    'checked = grader.check("q1")\n'
    'kind = type(otter).__name__ + ":" + str(getattr(otter, "__file__", None))\n'
    "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
    "('otter', 'pandas', 'seaborn', 'matplotlib'))\n",
    "%matplotlib inline\nmagic = 1\n",
    "!echo nothing\nescaped = 2\n",
    "import matplotlib.pyplot as plt\nplt.plot([0, 1])\nplotted = len(plt.get_fignums())\n",
    "after_plot = len(plt.get_fignums())\n",
    "total = (1 +\n",
    "plain = [x * x for x in range(4)]\n",
]


@pytest.fixture(scope="module")
def child():
    session = Session(CELLS, {}, None, isolate=False)
    yield session
    session.close()


def _value(session: Session, name: str):
    described = session.describe(name)
    # a name a cell did not bind: say why the cell stopped (its error, as the child reports it)
    why = session.ready.get("cell_errors")
    assert described["kind"] == "data", (name, described, why)
    return wire.decode(described["value"])


def test_import_otter_finds_the_stand_in_and_loads_neither_otter_nor_pandas(child):
    assert _value(child, "checked") is None
    assert _value(child, "found") is True  # and no ValueError in the setup cell
    assert _value(child, "kind") == "module:None"  # not otter's package on disk
    loaded = _value(child, "loaded")
    assert "otter" in loaded and "matplotlib.pyplot" in loaded, loaded
    # the backend too (MPLBACKEND=Agg): no child imports it at its first plot; a child
    # beside a CPU hog once failed that import ("No module named ...backend_agg")
    assert "matplotlib.backends.backend_agg" in loaded, loaded
    assert not [m for m in loaded if m.startswith(("otter.", "pandas", "seaborn"))], (
        loaded
    )


def test_cells_in_ipython_syntax_still_run_and_figures_are_closed(child):
    assert _value(child, "magic") == 1 and _value(child, "escaped") == 2
    assert _value(child, "plotted") == 1 and _value(child, "after_plot") == 0
    assert _value(child, "plain") == [0, 1, 4, 9]
    errors = {index: why for index, why in child.ready["cell_errors"]}
    assert list(errors) == [5] and errors[5].startswith("SyntaxError"), errors
