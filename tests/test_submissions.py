"""One reader of submissions for both grading paths, and the feedback a student reads
(`attnbook_grader.submissions`, `feedback`, `autograder.results_json`; issue 36,
items 5 and 6). No grading runs here: well under a second.
"""

from __future__ import annotations

import json

import nbformat

from attnbook_grader import autograder, engine, feedback, submissions

SETUP = "import otter\nfrom attnbook.exercise_checks import tests_dir\n"


def _notebook(exercise: str = "ex01_attention") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Exercise"),
        nbformat.v4.new_code_cell(
            SETUP + f"grader = otter.Notebook(tests_dir('{exercise}'))"
        ),
        nbformat.v4.new_code_cell("def scores_to_weights(s):\n    return s"),
    ]
    return nb


def test_every_nbformat_jupyter_writes_reads_the_same(tmp_path):
    nb = _notebook()
    nbformat.write(nb, tmp_path / "v4.ipynb")
    nbformat.write(nb, tmp_path / "v3.ipynb", version=3)  # an old Jupyter
    assert "worksheets" in json.loads((tmp_path / "v3.ipynb").read_text())
    read = {
        v: submissions.read_notebook(tmp_path / f"{v}.ipynb", "ex01_attention")
        for v in ("v3", "v4")
    }
    assert all(problem == "" for _, problem in read.values()), read
    cells = {v: submissions.code_cells(nb) for v, (nb, _) in read.items()}
    assert cells["v3"] == cells["v4"] and len(cells["v4"]) == 2


def test_what_cannot_be_graded_is_named(tmp_path):
    (tmp_path / "text.ipynb").write_text("not JSON")
    (tmp_path / "binary.ipynb").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "json.ipynb").write_text('{"a": 1}')
    nbformat.write(_notebook("ex02_scaling"), tmp_path / "other.ipynb")
    empty = nbformat.v4.new_notebook()
    nbformat.write(empty, tmp_path / "empty.ipynb")
    why = {
        p.stem: submissions.read_notebook(p, "ex01_attention")[1]
        for p in tmp_path.iterdir()
    }
    assert why["text"].startswith("not a notebook: the file is not valid JSON")
    assert why["binary"] == "not a notebook: the file is not text (UTF-8)"
    assert why["json"].startswith("not a notebook: valid JSON but not a Jupyter")
    assert why["other"] == (
        "wrong exercise: this is a notebook of ex02_scaling, not of ex01_attention"
    )
    assert why["empty"] == "the notebook has no code cells"


def test_an_upload_is_searched_recursively_and_several_notebooks_are_refused(tmp_path):
    upload = tmp_path / "submission"
    (upload / "work" / ".ipynb_checkpoints").mkdir(parents=True)
    nbformat.write(_notebook(), upload / "work" / "ex01.ipynb")
    nbformat.write(_notebook(), upload / "work" / ".ipynb_checkpoints" / "ex01.ipynb")
    found, problem = submissions.find_submission(upload)
    assert found == upload / "work" / "ex01.ipynb" and problem == ""
    nbformat.write(_notebook(), upload / "Untitled.ipynb")
    found, problem = submissions.find_submission(upload)
    assert found is None and problem.startswith("2 notebooks were submitted"), problem
    assert "Untitled.ipynb" in problem and "work/ex01.ipynb" in problem
    assert submissions.find_submission(tmp_path / "nothing")[1] == (
        "no .ipynb file was submitted"
    )


def test_a_class_folder_is_walked_with_what_was_skipped(tmp_path):
    (tmp_path / "student_17").mkdir()
    (tmp_path / ".git").mkdir()
    nbformat.write(_notebook(), tmp_path / "bob.ipynb")
    nbformat.write(_notebook(), tmp_path / "student_17" / "submission.ipynb")
    (tmp_path / "student_17" / "notes.txt").write_text("hi")
    (tmp_path / ".git" / "HEAD").write_text("ref")
    notebooks, skipped = submissions.walk_folder(tmp_path)
    assert [str(p.relative_to(tmp_path)) for p in notebooks] == [
        "bob.ipynb",
        "student_17/submission.ipynb",
    ]
    assert dict(skipped) == {
        ".git/HEAD": "a hidden or checkpoint file",
        "student_17/notes.txt": "not a notebook (.txt)",
    }


ALLCLOSE_FAILURE = """Traceback (most recent call last):
  File "tests/q2.py", line 40, in test_scaled
    np.testing.assert_allclose(got, want, atol=1e-4, err_msg=HINT)
AssertionError:
Not equal to tolerance rtol=1e-07, atol=0.0001
did you divide the scores by sqrt(d_k), with d_k the width of the queries and keys?
Mismatched elements: 6 / 6 (100%)
Max absolute difference among violations: 0.2
 x: array([[0.1, 0.2]])
 y: array([[0.3, 0.4]])"""


def test_the_hint_of_a_failed_test_is_kept_without_the_arrays():
    found = feedback.hint(ALLCLOSE_FAILURE)
    assert found.startswith("AssertionError: Not equal to tolerance")
    assert "did you divide the scores by sqrt(d_k)" in found
    assert "array" not in found and "Mismatched" not in found and "File" not in found
    assert feedback.hint("AssertionError: plain") == "AssertionError: plain"


def test_a_long_hint_is_cut_at_a_word_with_an_ellipsis():
    words = "AssertionError: " + " ".join(f"word{i}" for i in range(200))
    cut = feedback.hint(words, 100)
    assert len(cut) <= 100 and cut.endswith("…")
    assert cut[:-1] in words and words[len(cut) - 1] == " "  # the last word kept whole
    short = words[:95].strip()
    assert feedback.hint(short, 100) == short  # a short one is kept whole


RESULT = {
    "status": "ok",
    "score": 5.0,
    "message": "",
    "questions": {"q1": 4.0, "q2": 1.0, "q3": 0.0},
    "tests": [
        {
            "name": "test_rows",
            "question": "q1",
            "hidden": False,
            "passed": True,
            "points": 4.0,
            "message": "",
        },
        {
            "name": "test_scaled",
            "question": "q2",
            "hidden": True,
            "passed": False,
            "points": 5.0,
            "message": ALLCLOSE_FAILURE,
        },
        {
            "name": "test_shape",
            "question": "q2",
            "hidden": False,
            "passed": True,
            "points": 1.0,
            "message": "",
        },
    ],
}
POINTS = {"q1": 4.0, "q2": 6.0, "q3": 3.0}


def test_feedback_names_each_lost_question_its_verdict_and_hint():
    text = feedback.feedback_text("alice.ipynb", RESULT, POINTS)
    assert "Score: 5 / 13" in text and "## q1" not in text
    assert "## q2: 1 / 6" in text
    assert "- test_scaled (hidden test): AssertionError: Not equal" in text
    assert "did you divide the scores by sqrt(d_k)" in text
    assert "## q3: 0 / 3" in text and "no test of this question ran" in text


def test_gradescope_shows_the_same_hints_and_keeps_each_maximum():
    out = autograder.results_json(RESULT, POINTS)
    by_name = {t["name"]: t for t in out["tests"]}
    assert [t["max_score"] for t in out["tests"]] == [4.0, 6.0, 3.0]
    assert by_name["q2"]["output"] == (
        "test_scaled (hidden test): "
        + feedback.hint(ALLCLOSE_FAILURE, feedback.HIDDEN_LIMIT)
    )
    assert by_name["q3"]["output"].startswith("not graded")
    timeout = {"score": 0.0, "questions": {}, "tests": [], "message": "timeout: 30 s"}
    out = autograder.results_json(timeout, POINTS)
    assert [t["max_score"] for t in out["tests"]] == [4.0, 6.0, 3.0]
    assert all(t["output"] == "not graded: timeout: 30 s" for t in out["tests"])


def test_gradescope_says_no_answer_yet_once_per_question():
    """An untouched question: one line, as in `make grade`'s feedback, not one per test."""
    stub = "AssertionError: No answer yet: attention still has its stub body (...)"
    tests = [
        {"name": f"test_{i}", "question": "q1", "hidden": i > 1, "passed": False,
         "points": 1.0, "message": stub}
        for i in range(4)
    ]  # fmt: skip
    result = {"score": 0.0, "questions": {"q1": 0.0}, "tests": tests, "message": ""}
    (q1,) = autograder.results_json(result, {"q1": 4.0})["tests"]
    assert q1["output"] == feedback.failed_lines(tests)[0]
    assert q1["output"].startswith("No answer yet") and "(4 tests" in q1["output"]


def test_cells_tagged_otter_ignore_run_empty_and_keep_the_indexes():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("a = 1"),
        nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell("draw()", metadata={"tags": ["otter_ignore"]}),
        nbformat.v4.new_code_cell("b = 2"),
        nbformat.v4.new_code_cell("c = 3", metadata={"tags": ["nbval-ignore-output"]}),
    ]
    nb.cells[3].metadata["tags"] = "otter_ignore"  # not a list: not the tag
    assert submissions.code_cells(nb) == ["a = 1", "", "b = 2", "c = 3"]
    as_dict = json.loads(
        json.dumps(nb)
    )  # a plain dict, as the engine reads the reference
    assert engine.code_sources(as_dict) == submissions.code_cells(nb)


def test_a_house_rule_comes_first_and_an_unused_refusal_is_a_note():
    rule = "dynamic code / tampering: not allowed in an answer cell: imports os"
    result = {
        **RESULT,
        "tests": RESULT["tests"]
        + [
            {
                "name": "q2 - house rules",
                "question": "q2",
                "hidden": True,
                "passed": False,
                "points": 0.0,
                "message": rule,
            }
        ],
        "cell_errors": [[3, rule + " ...; no question's functions use it"]],
    }
    text = feedback.feedback_text("bob.ipynb", result, POINTS)
    q2 = text.split("## q2")[1].splitlines()
    assert q2[1].startswith("- q2 - house rules (hidden test): dynamic code"), q2
    assert "Note: dynamic code / tampering" in text.split("## q2")[0]
