"""What a failed check of the exercises says (issue 45, item 1): the course's `test_case`
(`attnbook.exercise_checks.case`) and the proof's reading of the masters' assertions
(`tools.exercise_messages`), on small made-up test files; the masters themselves are
proven by `make exercises-prove`."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
from otter.test_files.exception_test import ExceptionTestFile

from attnbook.exercise_checks.case import NO_ANSWER, is_stub_source
from attnbook.exercise_checks.probes import Remote
from attnbook_grader.feedback import failed_lines
from tools.exercise_messages import COURSE_IMPORT, course_test_files, message_problems

Q1 = f"""{COURSE_IMPORT}

name = "q1"
points = [1, 2]

@test_case(points=None, hidden=False)
def test_values(double):
    import numpy as np
    got = double(np.array([1.0, 2.0]))
    assert np.shape(got) == (2,), f"expected shape (2,), got {{np.shape(got)}}"
    np.testing.assert_allclose(got, [2.0, 4.0], err_msg="double each entry")

@test_case(points=None, hidden=True)
def test_hidden_values(double):
    import numpy as np
    got = double(np.array([3.0]))
    np.testing.assert_allclose(got, [6.0], err_msg="three doubled is six")
"""
Q2 = f"""{COURSE_IMPORT}

name = "q2"
points = [1]

@test_case(points=None, hidden=False)
def test_quadruple(quadruple):
    import numpy as np
    np.testing.assert_allclose(quadruple(np.array([1.0])), [4.0], err_msg="four times one is four")
"""


def run_file(path: Path, env: dict[str, Any]) -> list[tuple[str, bool, str]]:
    test_file = ExceptionTestFile.from_file(str(path))
    test_file.run(env)
    return [
        (r.test_case.name, r.passed, r.message) for r in test_file.test_case_results
    ]


def write(folder: Path) -> tuple[Path, Path]:
    (folder / "q1.py").write_text(Q1)
    (folder / "q2.py").write_text(Q2)
    return folder / "q1.py", folder / "q2.py"


def test_a_stub_is_told_no_answer_yet_and_tests_carry_their_names(tmp_path):
    """A function still the notebook's stub gets "No answer yet" from every check (not the
    TypeError of its None), and each check is named after its function."""
    q1, _ = write(tmp_path)
    namespace: dict[str, Any] = {}
    exec(
        compile('def double(x):\n    """Twice x."""\n    ...\n', "<cell>", "exec"),
        namespace,
    )
    # a cell's source, as IPython keeps it for inspect
    import linecache

    linecache.cache["<cell>"] = (
        0,
        None,
        ["def double(x):\n", '    """Twice x."""\n', "    ...\n"],
        "<cell>",
    )
    results = run_file(q1, namespace)
    assert [name for name, _, _ in results] == ["test_values", "test_hidden_values"]
    assert all(not ok and NO_ANSWER in message for _, ok, message in results), results
    assert "TypeError" not in " ".join(m for _, _, m in results)
    lines = failed_lines(
        [{"name": n, "hidden": False, "message": m} for n, _, m in results]
    )
    assert len(lines) == 1 and lines[0].startswith(NO_ANSWER)
    namespace["double"] = lambda x: 2 * x
    assert all(ok for _, ok, _ in run_file(q1, namespace))


def test_stub_sources():
    assert is_stub_source('def f(x):\n    """doc"""\n    ...\n', "f")
    assert is_stub_source("def f(x):\n    raise NotImplementedError('write me')\n", "f")
    assert is_stub_source("def f(x):\n    pass\n", "f")
    assert not is_stub_source("def f(x):\n    return x\n", "f")
    assert is_stub_source("def g(x):\n    ...\n", "f") is None


def test_a_check_says_which_earlier_answer_failed(tmp_path):
    """A check of q2 whose function calls the student's q1 answer, which fails q1's own
    public checks, says so first (grading uses the course's q1 there)."""
    _, q2 = write(tmp_path)
    namespace: dict[str, Any] = {}
    source = "def double(x):\n    return x + 1\n\ndef quadruple(x):\n    return double(double(x))\n"
    exec(compile(source, "<cells>", "exec"), namespace)
    ((_, ok, message),) = run_file(q2, namespace)
    assert not ok
    assert "calls your `double` (q1), which fails q1's own public checks" in message
    assert "four times one is four" in message
    namespace["double"] = lambda x: (
        2 * x
    )  # q1 right: the check passes, nothing to blame
    exec(
        compile("def quadruple(x):\n    return double(x) + 1\n", "<cells>", "exec"),
        namespace,
    )
    ((_, ok, message),) = run_file(q2, namespace)
    assert not ok and "(q1)" not in message


class FakeRemote(Remote):
    """A function of the submission's process, as the grader holds it."""

    def __init__(self, fn: Any):
        self.fn, self.name = fn, "double"

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


def test_a_hidden_test_shows_no_data_the_submission_sent(tmp_path):
    """While grading, a hidden test's failure keeps its own message but names what the
    submission raised by its type only; a public check keeps the full message."""
    q1, _ = write(tmp_path)

    def leaky(x: np.ndarray) -> np.ndarray:
        raise ValueError(f"the hidden input was {x.tolist()}")

    results = {n: m for n, _, m in run_file(q1, {"double": FakeRemote(leaky)})}
    assert "hidden input was" in results["test_values"]  # public: in full
    assert "hidden input was" not in results["test_hidden_values"]
    assert "ValueError" in results["test_hidden_values"]
    wrong = {n: m for n, _, m in run_file(q1, {"double": FakeRemote(lambda x: x)})}
    assert "three doubled is six" in wrong["test_hidden_values"]
    assert "Mismatched" not in wrong["test_hidden_values"]


MASTER_CELLS = [
    ("raw", "# BEGIN QUESTION\nname: q1\npoints: [1, 1]"),
    ("raw", "# BEGIN TESTS"),
    ("code", "def test_a(f):\n    assert f(1) == 2\n\ntest_a(f)"),
    (
        "code",
        "# HIDDEN\ndef test_b(f):\n    import numpy as np\n    got = f(np.ones(2))\n"
        "    assert got.shape == (2,), f'expected (2,), got {got.shape}'\n"
        "    assert got[0] == 2, f'got {got.tolist()}'\n"
        "    np.testing.assert_allclose(got, [2.0, 2.0])\n\ntest_b(f)",
    ),
    ("raw", "# END TESTS"),
    ("raw", "# END QUESTION"),
]


def test_the_proof_reads_every_assertion_for_a_message(tmp_path):
    """An assert without a message, a testing call without err_msg, and a hidden test's
    message that shows a returned value are each named with the test and the line; a shape
    in a hidden message is fine."""
    nb = nbformat.v4.new_notebook()
    for kind, source in MASTER_CELLS:
        cell = (
            nbformat.v4.new_raw_cell(source)
            if kind == "raw"
            else nbformat.v4.new_code_cell(source)
        )
        nb.cells.append(cell)
    path = tmp_path / "ex99_demo.ipynb"
    nbformat.write(nb, path)
    problems = message_problems("ex99_demo", path)
    assert len(problems) == 3, problems
    assert problems[0].startswith(
        "ex99_demo q1 test_a (cell 2, line 2): an assert without a message"
    )
    assert any(
        "test_b" in p and "assert_allclose without err_msg" in p for p in problems
    )
    assert any("shows {got.tolist()}" in p for p in problems)
    assert not any("got.shape" in p for p in problems)


def test_otter_writes_test_files_with_the_course_test_case(tmp_path):
    """Inside `course_test_files`, otter's template imports the course's test_case; after
    it, otter's own again."""
    from otter.assign import tests_manager

    before = tests_manager.EXCEPTION_BASED_TEST_FILE_TEMPLATE
    with course_test_files():
        text = tests_manager.EXCEPTION_BASED_TEST_FILE_TEMPLATE.render(
            OK_FORMAT_VARNAME="OK_FORMAT", name="q1", points=None, test_cases=[]
        )
    assert text.startswith(COURSE_IMPORT)
    assert tests_manager.EXCEPTION_BASED_TEST_FILE_TEMPLATE is before
    textwrap.dedent(text)


LEAKY_CELLS = [
    ("raw", "# BEGIN QUESTION\nname: q1\npoints: [1, 1, 1]"),
    ("raw", "# BEGIN TESTS"),
    (
        "code",
        "# HIDDEN\ndef test_close(f):\n    import torch\n    got = f(torch.ones(2))\n"
        "    torch.testing.assert_close(got, torch.ones(2),\n"
        "        msg=lambda m: f\"expected ones: {' '.join(m.split())}\")\n"
        "    torch.testing.assert_close(got, torch.ones(2),\n"
        "        msg=lambda m: f'expected ones ({m.splitlines()[0]})')\n\ntest_close(f)",
    ),
    (
        "code",
        "# HIDDEN\ndef test_raises(f):\n    try:\n        f(-1)\n"
        "    except ValueError as err:\n"
        "        assert 'negative' in str(err), f'name the sign, got {err}'\n"
        "        assert 'x' in str(err), f'name x ({type(err).__name__})'\n"
        "        return\n    raise AssertionError('expected a ValueError')\n\ntest_raises(f)",
    ),
    ("raw", "# END TESTS"),
    ("raw", "# END QUESTION"),
]


def test_library_messages_and_raised_text_count_as_returned_data(tmp_path):
    """In a hidden test, torch's whole message (a `msg=lambda m:` that interpolates m: it
    prints the values compared) and the text of what the submission raised are its data;
    the first line of torch's message and the raised exception's type are not."""
    nb = nbformat.v4.new_notebook()
    for kind, source in LEAKY_CELLS:
        new = nbformat.v4.new_raw_cell if kind == "raw" else nbformat.v4.new_code_cell
        nb.cells.append(new(source))
    path = tmp_path / "ex98_leaks.ipynb"
    nbformat.write(nb, path)
    problems = message_problems("ex98_leaks", path)
    assert len(problems) == 2, problems
    assert "test_close" in problems[0] and "m.split()" in problems[0], problems
    assert "test_raises" in problems[1] and "shows {err}" in problems[1], problems


def test_raise_assertion_error_is_read_and_a_choice_of_constants_shows_nothing(
    tmp_path,
):
    test = textwrap.dedent(
        """\
        # HIDDEN
        def test_device(f):
            try:
                f(1)
            except RuntimeError as err:
                where = "cpu" if "cpu" in str(err) else "another device"
                raise AssertionError(f"a tensor made on {where}") from None
            try:
                f(2)
            except RuntimeError as err:
                raise AssertionError(f"failed with {err}") from None

        test_device(f)"""
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q1\npoints: 1"),
        nbformat.v4.new_raw_cell("# BEGIN TESTS"),
        nbformat.v4.new_code_cell(test),
        nbformat.v4.new_raw_cell("# END TESTS"),
        nbformat.v4.new_raw_cell("# END QUESTION"),
    ]
    path = tmp_path / "ex97_raise.ipynb"
    nbformat.write(nb, path)
    problems = message_problems("ex97_raise", path)
    assert len(problems) == 1 and "shows {err}" in problems[0], problems


Q3 = f"""{COURSE_IMPORT}

name = "q3"
points = [1, 1]

@test_case(points=None, hidden=False)
def test_public_shape(double):
    assert double(2.0).shape == (), "expected a 0-d result"

@test_case(points=None, hidden=True)
def test_hidden_shape(double):
    assert double(3.0).shape == (), "expected a 0-d result"
"""


def test_quotes_and_the_loop_verdict_survive_otter(tmp_path):
    """Otter strips quotes off both ends of a failing test's message: an AttributeError on a
    tuple keeps its quotes, public or hidden; and the grader's no-loop verdict reaches a
    hidden test's feedback as the rule it is, not as "your function raised"."""
    q3 = tmp_path / "q3.py"
    q3.write_text(Q3)
    pair = {n: m for n, _, m in run_file(q3, {"double": FakeRemote(lambda x: (x, x))})}
    for name in ("test_public_shape", "test_hidden_shape"):
        assert "'tuple' object has no attribute 'shape'" in pair[name], pair[name]

    def looping(x: float) -> float:
        raise AssertionError(
            "loop: your function uses a Python for loop (read from your code)"
        )

    verdicts = {n: m for n, _, m in run_file(q3, {"double": FakeRemote(looping)})}
    assert "AssertionError: loop: your function uses" in verdicts["test_hidden_shape"]
    assert "your function raised" not in verdicts["test_hidden_shape"]


def test_the_gradebook_cuts_a_message_at_a_word():
    from tools.exercise_grading import _cut

    assert _cut("short enough", 40) == "short enough"
    assert _cut("expected another tensor here", 14) == "expected\u2026"
    assert len(_cut("x" * 50, 10)) == 10
