"""The exercise pipeline: published student files are current, hidden tests never leak,
and grading always returns a grade (time limit, CSV for instructors).

The heavier proof (reference 100 %, untouched stub 0 hidden, classic wrong answers caught)
is `make exercises-prove`, part of `make test`.
"""
from __future__ import annotations

import ast
import csv
import importlib.util
import re
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("exercises_tool", ROOT / "tools" / "exercises.py")
ex = importlib.util.module_from_spec(spec)
sys.modules["exercises_tool"] = ex  # dataclasses look their module up here
spec.loader.exec_module(ex)

NAMES = ex.exercise_names()


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("exercises")
    return {name: ex.build(name, out / name) for name in NAMES}


def hidden_tests(zip_path: Path) -> dict[str, str]:
    """name -> source of every hidden test function in an autograder zip."""
    found = {}
    with zipfile.ZipFile(zip_path) as z:
        for member in z.namelist():
            if not re.fullmatch(r"tests/\w+\.py", member):
                continue
            tree = ast.parse(z.read(member).decode())
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and "hidden=True" in ast.unparse(node.decorator_list[0]):
                    found[node.name] = ast.unparse(node)
    return found


def student_artefacts() -> dict[Path, str]:
    """Everything a student sees in the repository: student notebooks, installed public checks,
    the book's sources. (The built site is scanned by tests/test_built_site.py, after the build.)"""
    paths = list((ROOT / "exercises" / "student").glob("*.ipynb"))
    paths += list((ROOT / "src" / "attnbook" / "exercise_checks").rglob("*.py"))
    paths += [p for p in (ROOT / "book").rglob("*") if p.suffix in {".ipynb", ".md"}]
    return {p: p.read_text(errors="replace") for p in paths}


def test_there_is_at_least_one_exercise():
    assert "ex01_attention" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_published_student_files_match_the_master(built, name):
    assert ex.stale_files(built[name]) == [], "run `make exercises` and commit the result"


@pytest.mark.parametrize("name", NAMES)
def test_hidden_tests_appear_in_no_student_artefact(built, name):
    hidden = hidden_tests(built[name].autograder_zip)
    assert hidden, f"{name} has no hidden tests"
    artefacts = student_artefacts()
    assert any("exercise_checks" in str(p) for p in artefacts)
    for fname, source in hidden.items():
        # the function name and its longest line are specific enough to spot a copy
        longest = max((line.strip() for line in source.splitlines()[1:]), key=len)
        definition = re.compile(rf"\bdef {fname}\(")
        for path, text in artefacts.items():
            assert not definition.search(text), f"hidden test {fname} leaked into {path}"
            assert longest not in text, f"a line of hidden test {fname} leaked into {path}"


@pytest.mark.parametrize("name", NAMES)
def test_solutions_are_not_in_the_student_notebook(built, name):
    master = nbformat.read(ROOT / "exercises" / "masters" / f"{name}.ipynb", as_version=4)
    student = (ROOT / "exercises" / "student" / f"{name}.ipynb").read_text()
    for cell in master.cells:
        body = re.findall(r"# BEGIN SOLUTION\n(.*?)# END SOLUTION", cell.source, flags=re.S)
        for block in body:
            for line in block.splitlines():
                if len(line.strip()) > 20:
                    assert line.strip() not in student, f"solution line leaked: {line.strip()}"
    answer_cells = ex.answer_cells(nbformat.read(ROOT / "exercises" / "student" / f"{name}.ipynb", as_version=4))
    assert answer_cells and all("..." in c.source for c in answer_cells)


@pytest.mark.slow
def test_grading_a_folder_gives_a_csv_and_a_grade_even_for_an_endless_loop(built, tmp_path, monkeypatch):
    b = built["ex01_attention"]
    folder = tmp_path / "submissions"
    folder.mkdir()
    nbformat.write(ex.make_submission(b, []), folder / "alice.ipynb")
    looping = ex.make_submission(b, [("    d_k = Q.shape[-1]\n", "    while True:\n        pass\n")])
    nbformat.write(looping, folder / "bob.ipynb")
    broken = ex.make_submission(b, [("def scores_to_weights(scores):", "def scores_to_weights(scores)")])
    nbformat.write(broken, folder / "carol.ipynb")
    start = time.monotonic()
    monkeypatch.setattr(ex, "BUILD", tmp_path / "build")  # keep this test's files out of _build
    (ex.BUILD / "autograder").mkdir(parents=True)
    (ex.BUILD / "autograder" / "ex01_attention.zip").write_bytes(b.autograder_zip.read_bytes())
    grades = ex.grade_folder("ex01_attention", folder, tmp_path / "grades.csv", timeout=25)
    assert time.monotonic() - start < 90
    rows = {r["submission"]: r for r in csv.DictReader(open(tmp_path / "grades.csv"))}
    assert set(rows) == {"alice.ipynb", "bob.ipynb", "carol.ipynb"}
    assert rows["alice.ipynb"]["status"] == "ok" and float(rows["alice.ipynb"]["percent"]) == 100.0
    assert rows["bob.ipynb"]["status"] == "timeout" and float(rows["bob.ipynb"]["score"]) == 0.0
    assert rows["carol.ipynb"]["status"] == "ok" and float(rows["carol.ipynb"]["percent"]) < 100.0
    assert {"q1", "q2"} <= set(rows["alice.ipynb"])
    assert len(grades) == 3
