"""The worked-solutions pages and the private masters (issue: "honest about what is public").

The masters are public, so the book has a page of worked solutions per exercise, made from its
master: the questions' text and the reference solutions, folded, and no test. An instructor
who grades for credit builds, grades and proves from a private copy (`MASTERS=path`): the
last test builds and grades from one through `make exercises` and the tool's `--masters`.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
import tools.exercises as ex  # noqa: E402 - after ROOT, as in test_exercises.py
from tools.exercise_solutions import solutions_notebook  # noqa: E402

NAMES = ex.exercise_names()
SITE = ROOT / "_build" / "html"


def master_tests(name: str) -> tuple[list[str], list[str]]:
    """(public, hidden) test cells of a master, read from its `# BEGIN/END TESTS` blocks."""
    public, hidden, inside = [], [], False
    for cell in nbformat.read(ex.PUBLIC_MASTERS / f"{name}.ipynb", 4).cells:
        first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
        if cell.cell_type == "raw":
            inside = {"# BEGIN TESTS": True, "# END TESTS": False}.get(first, inside)
        elif inside and cell.cell_type == "code":
            (hidden if first == "# HIDDEN" else public).append(cell.source)
    return public, hidden


@pytest.mark.parametrize("name", NAMES)
def test_the_solutions_page_is_current(name: str) -> None:
    """exercises/solutions/NAME.ipynb is what the master makes today (`make exercises-publish`)."""
    path = ex.SOLUTIONS / f"{name}.ipynb"
    assert path.is_file(), (
        f"{path.relative_to(ROOT)} is missing: make exercises-publish"
    )
    want = solutions_notebook(
        name, ex.PUBLIC_MASTERS / f"{name}.ipynb", ex.link_to_book
    )
    have = nbformat.read(path, 4)
    assert [(c.cell_type, c.source) for c in have.cells] == [
        (c.cell_type, c.source) for c in want.cells
    ], f"{path.relative_to(ROOT)} differs from its master: make exercises-publish"


@pytest.mark.parametrize("name", NAMES)
def test_the_solutions_page_shows_solutions_folded_and_no_test(name: str) -> None:
    nb = nbformat.read(ex.SOLUTIONS / f"{name}.ipynb", 4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    master = nbformat.read(ex.PUBLIC_MASTERS / f"{name}.ipynb", 4)
    questions = sum(c.source.startswith("# BEGIN QUESTION") for c in master.cells)
    assert len(code) >= questions, (
        f"{len(code)} solution cells for {questions} questions"
    )
    for cell in code:
        assert "hide-input" in cell.metadata.get("tags", []), cell.source[:80]
        assert "def test_" not in cell.source and "grader.check" not in cell.source
        assert "BEGIN SOLUTION" not in cell.source and "END SOLUTION" not in cell.source
    text = "\n".join(c.source for c in nb.cells)
    public, hidden = master_tests(name)
    assert hidden, f"{name}: no hidden test read from the master"
    for test in public + hidden:
        longest = max((line.strip() for line in test.splitlines()[1:]), key=len)
        assert longest not in text, f"a test line reached the solutions page: {longest}"
    assert "{{ book_url }}" not in text


@pytest.mark.parametrize("name", NAMES)
def test_the_exercise_page_links_its_solutions(name: str) -> None:
    student = nbformat.read(ex.STUDENT / f"{name}.ipynb", 4)
    first = next(c for c in student.cells if c.cell_type == "markdown")
    assert f"{ex.book_url()}exercises/solutions/{name}.html" in first.source
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [e["file"] for part in toc["parts"] for e in part["chapters"]]
    assert f"exercises/solutions/{name}" in files, "_toc.yml lists no solutions page"


@pytest.mark.site
def test_the_built_solutions_pages_fold_the_code() -> None:
    """After `make book`: every solutions page is built, its code cells behind a toggle."""
    if not (SITE / "index.html").is_file():
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
            pytest.fail("no built site; CI is set, so the site tests are mandatory")
        pytest.skip("no built site at _build/html (run `make book` first)")
    for name in NAMES:
        page = SITE / "exercises" / "solutions" / f"{name}.html"
        assert page.is_file(), f"{page.relative_to(ROOT)} was not built"
        html = page.read_text()
        assert "tag_hide-input" in html, f"{page.name}: the solutions are not folded"


def test_a_private_copy_of_the_masters(tmp_path: Path) -> None:
    """`make exercises MASTERS=path` builds from the copy (its own hidden test in the zip, no
    solutions page, nothing written into the repository), a zip so built is never used to
    grade with the public masters, and `--masters path grade` grades with the private hidden
    tests: the public reference, right by the public masters, loses question 4 there."""
    name = "ex01_attention"
    private = tmp_path / "private" / "masters"
    private.mkdir(parents=True)
    master = nbformat.read(ex.PUBLIC_MASTERS / f"{name}.ipynb", 4)
    edited = 0
    for cell in master.cells:  # q4's answer becomes "b" in the private copy
        if 'return "a"' in cell.source or '== "a", "not this one' in cell.source:
            cell.source = cell.source.replace('return "a"', 'return "b"').replace(
                '== "a", "not this one', '== "b", "PRIVATE: not this one'
            )
            edited += 1
    assert edited == 2, "exercise 1's question 4 is not where this test expects it"
    nbformat.write(master, private / f"{name}.ipynb")
    requirements = ROOT / "exercises" / "autograder-requirements.txt"
    shutil.copy(
        requirements, private.parent
    )  # the masters name ../autograder-requirements.txt
    status = ["git", "status", "--porcelain", "--untracked-files=all"]
    before = subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout
    env = {k: v for k, v in os.environ.items() if k != "ATTNBOOK_MASTERS"}
    # make's own recipe, with the environment's interpreter and no set-up step
    made = subprocess.run(
        ["make", "--no-print-directory", "exercises", f"MASTERS={private}"]
        + [f"PY={sys.executable}", "STAMP="],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"masters from {private}" in made.stdout, made.stdout
    zip_path = ex.BUILD / "autograder" / f"{name}.zip"
    with zipfile.ZipFile(zip_path) as z:
        tests = "".join(
            z.read(m).decode() for m in z.namelist() if m.startswith("tests/")
        )
    assert "PRIVATE: not this one" in tests, (
        "the zip was not built from the private copy"
    )
    assert (ex.BUILD / "autograder" / f"{name}.masters").read_text().strip() == str(
        private
    )
    assert ex.built_zip(name) is None, (
        "the public masters would grade with a private zip"
    )

    # to submit: the private reference (otter's solution notebook of the build above) with
    # q4 answered "a", as the public reference answers it
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    reference = nbformat.read(ex.BUILD / name / "autograder" / f"{name}.ipynb", 4)
    for cell in reference.cells:
        cell.source = cell.source.replace('return "b"', 'return "a"')
    nbformat.write(reference, submissions / "alice.ipynb")

    graded = subprocess.run(
        [sys.executable, "-m", "tools.exercises", "--masters", str(private), "grade"]
        + [name, str(submissions), "--out", str(tmp_path / "grades.csv")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert graded.returncode == 0, graded.stdout + graded.stderr
    after = subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout
    assert after == before, (
        "building or grading from a private copy wrote into the repository"
    )
    row = next(iter(csv.DictReader(open(tmp_path / "grades.csv"))))
    assert row["status"] == "ok", row
    # q4 is worth 1: its hidden test 0.9, lost here, and its public check 0.1, kept
    assert float(row["score"]) == pytest.approx(float(row["possible"]) - 0.9), row
    assert not (ex.SOLUTIONS / "private").exists()


def test_masters_must_name_a_folder_of_masters(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.exercises", "--masters", str(tmp_path), "build"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "no folder of master notebooks" in done.stderr, done


def test_the_proofs_of_a_private_copy_take_its_wrong_answers(tmp_path: Path) -> None:
    """With MASTERS set, the proofs read `wrong_answers/` beside the masters if it exists,
    else the public ones; the public masters are not private."""
    (tmp_path / "masters").mkdir()
    shown = "from tools import exercise_build as b; print(b.WRONG_ANSWERS, b.PRIVATE)"

    def wrong_answers(masters: Path | None) -> str:
        env = {k: v for k, v in os.environ.items() if k != "ATTNBOOK_MASTERS"}
        env |= {"ATTNBOOK_MASTERS": str(masters)} if masters else {}
        done = subprocess.run(
            [sys.executable, "-c", shown],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    public = ROOT / "exercises" / "wrong_answers"
    assert wrong_answers(None) == f"{public} False"
    assert wrong_answers(tmp_path / "masters") == f"{public} True"
    (tmp_path / "wrong_answers").mkdir()
    assert wrong_answers(tmp_path / "masters") == f"{tmp_path / 'wrong_answers'} True"


def _master_copy(tmp_path: Path, explanation: str | None) -> Path:
    """A copy of exercise 1's master in tmp_path/masters, with `explanation` (if given) as
    tmp_path/explanations/ex01_attention.md."""
    masters = tmp_path / "masters"
    masters.mkdir()
    master = masters / "ex01_attention.ipynb"
    shutil.copy(ex.PUBLIC_MASTERS / "ex01_attention.ipynb", master)
    if explanation is not None:
        (tmp_path / "explanations").mkdir()
        (tmp_path / "explanations" / "ex01_attention.md").write_text(explanation)
    return master


def test_explanations_follow_their_questions_solution(tmp_path: Path) -> None:
    """Each `## qN` section of exercises/explanations/NAME.md comes right after question N's
    folded solution, under its own heading; a question without a section gets none."""
    from tools.exercise_solutions import EXPLAINED

    master = _master_copy(
        tmp_path,
        "## q2\n\nWhy the mask goes before the softmax.\n\n## q1\n\nRow maxima.\n",
    )
    page = solutions_notebook("ex01_attention", master, ex.link_to_book)
    sources = [c.source for c in page.cells]
    explained = [i for i, s in enumerate(sources) if s.startswith(EXPLAINED)]
    assert [sources[i].split("\n\n", 1)[1] for i in explained] == [
        "Row maxima.",
        "Why the mask goes before the softmax.",
    ]
    for i in explained:  # right after a folded solution
        assert page.cells[i - 1].cell_type == "code"
        assert "hide-input" in page.cells[i - 1].metadata.get("tags", [])
    assert "def scores_to_weights" in sources[explained[0] - 1]
    assert "def attention" in sources[explained[1] - 1]


def test_explanations_must_fit_the_master(tmp_path: Path) -> None:
    """A section for a question the master lacks, a question explained twice, an empty
    section or text outside a section is an error naming the file; no file is allowed."""
    from tools.exercise_solutions import ExplanationError

    bad = {
        "## q9\n\ntext\n": "a section for q9",
        "## q1\n\none\n\n## q1\n\ntwo\n": "explained twice",
        "## q1\n\n\n## q2\n\ntext\n": "section q1 is empty",
        "intro\n\n## q1\n\ntext\n": "text before the first",
    }
    for i, (text, expected) in enumerate(bad.items()):
        (tmp_path / str(i)).mkdir()
        master = _master_copy(tmp_path / str(i), text)
        with pytest.raises(ExplanationError, match=expected):
            solutions_notebook("ex01_attention", master, ex.link_to_book)
    (tmp_path / "none").mkdir()
    master = _master_copy(tmp_path / "none", None)
    page = solutions_notebook("ex01_attention", master, ex.link_to_book)
    assert len(page.cells) > 4
