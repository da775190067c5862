"""tools.run_chapters (the check that runs the book as a reader would) on tiny synthetic
notebooks: a clean one passes; one that writes to stderr, one that raises and one whose
grader check did not pass fail."""

import nbformat
import pytest

from tools import ToolError
from tools.run_chapters import (
    STUDENT,
    answered_notebook,
    problems_in,
    run_notebook,
    targets,
)


def notebook(tmp_path, name, *sources):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def test_clean_notebook_passes_and_stderr_fails(tmp_path):
    clean = run_notebook(
        notebook(tmp_path, "clean", "x = 6 * 7", "print(x)"), timeout=60
    )
    assert clean.passed, clean.problems
    noisy = run_notebook(
        notebook(
            tmp_path, "noisy", "import warnings", "warnings.warn('IProgress not found')"
        ),
        timeout=60,
    )
    assert not noisy.passed and "wrote to stderr" in noisy.problems[0]
    assert "IProgress not found" in noisy.problems[0]


def test_unexecuted_notebook_has_no_problems():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")])
    assert not problems_in(nb)  # nothing executed yet: nothing seen


def test_raising_cell_fails(tmp_path):
    verdict = run_notebook(notebook(tmp_path, "raises", "1 / 0"), timeout=60)
    assert not verdict.passed and "ZeroDivisionError" in verdict.problems[0]


def test_grader_check_that_did_not_pass_fails():
    cell = nbformat.v4.new_code_cell('grader.check("q1")')
    cell.outputs = [
        nbformat.v4.new_output(
            "execute_result",
            {
                "text/plain": "q1 results:\n    q1 - 1 result:\n"
                "        ❌ Test case failed"
            },
            execution_count=1,
        )
    ]
    good = nbformat.v4.new_code_cell('grader.check("q2")')
    good.outputs = [
        nbformat.v4.new_output(
            "execute_result",
            {"text/plain": "q2 results: All test cases passed!"},
            execution_count=2,
        )
    ]
    problems = problems_in(nbformat.v4.new_notebook(cells=[cell, good]))
    assert len(problems) == 1 and "q1" in problems[0]


def test_subset_by_exact_name():
    names = [name for name, _ in targets(["06", "ex06"])]
    assert names == ["06_tiny_gpt", "ex06_sampling"]
    assert [name for name, _ in targets(["01_attention"])] == ["01_attention"]
    assert [name for name, _ in targets(["ex01_attention"])] == ["ex01_attention"]
    for wrong in (["no-such-notebook"], ["1"], ["attention"]):
        with pytest.raises(ToolError, match="no notebook is named"):
            targets(wrong)


def test_exercises_run_as_answered_student_notebooks(tmp_path):
    """Every exercise: the student notebook (its setup cell first) with each `...` answer
    replaced by the worked solution of the same name; no answer left out, no otter assign."""
    for name, path in targets([]):
        if path is not None:
            continue
        answered = nbformat.read(answered_notebook(name, tmp_path), as_version=4)
        student = nbformat.read(STUDENT / f"{name}.ipynb", as_version=4)
        sources = [c.source for c in answered.cells if c.cell_type == "code"]
        assert (
            sources[0] == [c for c in student.cells if c.cell_type == "code"][0].source
        )
        assert not [s for s in sources if s.rstrip().endswith("...")], name
        assert len(answered.cells) == len(student.cells)
