"""The exercise pipeline: published student files are current, hidden tests never leak,
and grading always returns a grade (time limit, CSV for instructors).

The heavier proof (reference 100 %, untouched notebook 0, every wrong answer below 100 %, a
public check flagging a mistake in each question) is `make exercises-prove`, part of `make test`.
No test here asserts how fast grading is: time limits are generous, the point is that every
submission gets a grade.
"""

from __future__ import annotations

import ast
import csv
import io
import re
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
import tools.exercise_gradebook as gradebook  # noqa: E402
import tools.exercises as ex  # noqa: E402 - after ROOT, which the tests use too

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
                if isinstance(node, ast.FunctionDef) and "hidden=True" in ast.unparse(
                    node.decorator_list[0]
                ):
                    found[node.name] = ast.unparse(node)
    return found


def public_lines(zip_path: Path) -> set[str]:
    """The stripped lines of every public test in an autograder zip. A hidden test may share
    such a line by design (a task's description, a call every test makes): it is public
    already, so it spots no copy of the hidden test."""
    found: set[str] = set()
    with zipfile.ZipFile(zip_path) as z:
        for member in z.namelist():
            if not re.fullmatch(r"tests/\w+\.py", member):
                continue
            for node in ast.parse(z.read(member).decode()).body:
                if isinstance(
                    node, ast.FunctionDef
                ) and "hidden=True" not in ast.unparse(node.decorator_list[0]):
                    found |= {line.strip() for line in ast.unparse(node).splitlines()}
    return found


def spotting_line(source: str, shared: set[str]) -> str:
    """A hidden test's longest line that no public test holds: specific enough to spot a
    copy of it."""
    own = [line.strip() for line in source.splitlines()[1:]]
    return max((line for line in own if line not in shared), key=len)


@pytest.fixture(scope="module")
def student_artefacts() -> dict[Path, str]:
    """Everything a student sees in the repository: student notebooks, installed public checks,
    the book's sources. (The built site is scanned by tests/test_built_site.py, after the build.)"""
    paths = list((ROOT / "exercises" / "student").glob("*.ipynb"))
    paths += list((ROOT / "src" / "attnbook" / "exercise_checks").rglob("*.py"))
    paths += [p for p in (ROOT / "book").rglob("*") if p.suffix in {".ipynb", ".md"}]
    return {p: p.read_text(errors="replace") for p in paths}


@pytest.mark.parametrize("name", NAMES)
def test_the_built_student_notebook_is_the_one_to_hand_out(built, name):
    # review 64 (F24): the copy in _build/exercises/NAME/student/ is the published one, its book
    # link filled in, not otter's raw output with a "{{ book_url }}" placeholder
    path = built[name].reference_nb.parent.parent / "student" / f"{name}.ipynb"
    text = path.read_text()
    assert "{{ book_url }}" not in text, f"{path}: the book link is still a placeholder"
    assert nbformat.reads(text, as_version=4) == built[name].student_nb


def test_there_is_at_least_one_exercise():
    assert "ex01_attention" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_published_student_files_match_the_master(built, name):
    assert ex.stale_files(built[name]) == [], (
        "run `make exercises-publish` and commit the result"
    )


def test_build_writes_only_into_the_build_folder(capsys, monkeypatch):
    """`make exercises` leaves the working tree as it was, even when a committed copy is
    stale; only `publish` writes the committed student notebook and checks."""
    import tools.exercise_build as exercise_build

    def no_publishing(*args: object, **kwargs: object) -> None:
        pytest.fail("`build` published (publish writes the committed copies)")

    # publishing up-to-date copies would leave git status unchanged: forbid it outright
    monkeypatch.setattr(exercise_build, "publish", no_publishing)
    if hasattr(ex, "publish"):
        monkeypatch.setattr(ex, "publish", no_publishing)
    status = ["git", "status", "--porcelain", "--untracked-files=all"]
    before = subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout
    assert ex.main(["build", "ex01_attention"]) == 0
    after = subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout
    assert after == before, "`build` wrote outside _build/"
    assert "_build/exercises/autograder/ex01_attention.zip" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_hidden_tests_appear_in_no_student_artefact(built, name, student_artefacts):
    hidden = hidden_tests(built[name].autograder_zip)
    assert hidden, f"{name} has no hidden tests"
    shared = public_lines(built[name].autograder_zip)
    artefacts = student_artefacts
    assert any("exercise_checks" in str(p) for p in artefacts)
    for fname, source in hidden.items():
        # the function name and its longest line of its own are specific enough to spot a copy
        longest = spotting_line(source, shared)
        definition = re.compile(rf"\bdef {fname}\(")
        for path, text in artefacts.items():
            # the regular expression only where the plain text occurs (a substring search
            # is a hundred times faster than the regex on megabytes of notebook outputs)
            assert f"def {fname}(" not in text or not definition.search(text), (
                f"hidden test {fname} leaked into {path}"
            )
            assert longest not in text, (
                f"a line of hidden test {fname} leaked into {path}"
            )


@pytest.mark.parametrize("name", NAMES)
def test_solutions_are_not_in_the_student_notebook(built, name):
    master = nbformat.read(
        ROOT / "exercises" / "masters" / f"{name}.ipynb", as_version=4
    )
    student = (ROOT / "exercises" / "student" / f"{name}.ipynb").read_text()
    for cell in master.cells:
        body = re.findall(
            r"# BEGIN SOLUTION\n(.*?)# END SOLUTION", cell.source, flags=re.S
        )
        for block in body:
            for line in block.splitlines():
                if len(line.strip()) > 20:
                    assert line.strip() not in student, (
                        f"solution line leaked: {line.strip()}"
                    )
    answer_cells = ex.answer_cells(
        nbformat.read(ROOT / "exercises" / "student" / f"{name}.ipynb", as_version=4)
    )
    assert answer_cells and all("..." in c.source for c in answer_cells)


def test_student_notebooks_link_to_the_published_book():
    url = ex.book_url()
    assert url.startswith("https://") and url.endswith("/")
    for path in sorted((ROOT / "exercises" / "student").glob("*.ipynb")):
        text = "\n".join(
            c.source
            for c in nbformat.read(path, as_version=4).cells
            if c.cell_type == "markdown"
        )
        links = re.findall(r"\]\(([^)]+)\)", text)
        chapters = [link for link in links if "book/" in link]
        assert chapters, f"{path.name} links to no chapter"
        for link in chapters:
            assert link.startswith(url + "book/") and link.endswith(".html"), (
                f"{path.name}: {link}"
            )
            assert (
                ROOT
                / "book"
                / link.removeprefix(url + "book/").replace(".html", ".ipynb")
            ).is_file(), link


# --------------------------------------------------------------------------- grading helpers
grading = pytest.importorskip("attnbook.exercise_checks.grading")


def test_guard_passes_an_honest_function_and_lets_a_generator_advance():
    import numpy as np
    import torch

    def honest(x, generator=None):
        return torch.softmax(x, dim=-1), torch.rand(1, generator=generator)

    x = torch.randn(3, 4)
    g = torch.Generator().manual_seed(0)
    out, _ = grading.guarded(honest)(x, generator=g)
    assert out.shape == (3, 4)
    assert grading.guarded(lambda a: np.sort(a))(np.array([3.0, 1.0])).tolist() == [
        1.0,
        3.0,
    ]


@pytest.mark.parametrize(
    "kind",
    [
        "mutation",
        "numpy-rng",
        "torch-rng",
        "python-rng",
        "same-object",
        "alias",
        "numpy-alias",
        "attnbook",
        "library",
        "routine",
    ],
)
def test_guard_rejects_what_students_really_write(kind):
    import random

    import numpy as np
    import torch

    def mutation(x):
        x.mul_(2)
        return x.clone()

    def numpy_rng(x):
        np.random.seed(0)
        return x + np.random.rand()

    def torch_rng(x):
        return x + torch.rand(1)

    def python_rng(x):
        return x + random.random()

    def same_object(x):
        return x

    import attnbook.attention

    def through_attnbook(x):
        # any name of any attnbook module is caught by where it runs
        module = attnbook.attention
        return module.scaled_dot_product_attention(x, x, x)[0]

    def library(x):
        return torch.as_tensor(np.asarray(x))

    def routine(x):
        return x.softmax(-1)

    fn, opts, words = {
        "mutation": (mutation, {}, "changed its input `x` in place"),
        "numpy-rng": (numpy_rng, {}, "NumPy's global generator"),
        "torch-rng": (torch_rng, {}, "PyTorch's global generator"),
        "python-rng": (python_rng, {}, "Python's random module"),
        "same-object": (same_object, {}, "returned its input `x` itself"),
        "alias": (
            lambda x: x[:],
            {},
            "returned its input `x` itself (or a view of all",
        ),
        "numpy-alias": (
            lambda x: x.view(),
            {},
            "returned its input `x` itself (or a view of all",
        ),
        "attnbook": (
            through_attnbook,
            {},
            "uses attnbook.attention",  # refused before the watcher sees the call
        ),
        "library": (library, {"libraries": ("torch",)}, "rules out torch"),
        "routine": (routine, {"names": ("softmax",)}, "softmax, the routine"),
    }[kind]
    x = (
        torch.randn(2, 3)
        if kind not in ("numpy-rng", "python-rng", "library", "numpy-alias")
        else np.ones(3)
    )
    with pytest.raises(AssertionError, match=re.escape(words)):
        grading.guarded(fn, **opts)(x)


def test_guard_rejects_a_view_of_the_input():
    import torch

    # a view of a part, or reshaped, is a new object unless the question asks for a copy
    x = torch.randn(2, 3)
    assert grading.guarded(lambda x: x.view(3, 2))(x).shape == (3, 2)
    assert grading.guarded(lambda x: x.T)(torch.randn(3, 3)).shape == (3, 3)

    with pytest.raises(AssertionError, match="a view of its input"):
        grading.guarded(lambda x: x[:, :2], no_views=True)(torch.randn(2, 3))


def test_grad_of_gives_the_gradients_of_a_local_function():
    import torch

    x = torch.tensor([1.0, -2.0, 3.0])
    out, (grad,) = grading.grad_of(lambda t: (t * t).sum(), x)
    assert float(out) == 14.0 and grad.tolist() == [2.0, -4.0, 6.0]


# --------------------------------------------------------------------------- the isolated engine
wire = pytest.importorskip("attnbook_grader.wire")


def test_wire_carries_data_and_refuses_anything_else():
    import numpy as np
    import torch

    g = torch.Generator().manual_seed(3)
    value = {
        "t": torch.arange(6.0).reshape(2, 3),
        "a": np.array([1, 2], dtype=np.int32),
        "n": (1, 2.5, None),
        "s": {"x"},
        "f": float("inf"),
        "g": g,
        "np": np.float32(1.5),
        "d": torch.float64,
    }
    back = wire.loads(wire.dumps({"v": wire.encode(value)}))
    out = wire.decode(back["v"])
    assert (
        torch.equal(out["t"], value["t"])
        and out["a"].dtype == np.int32
        and out["n"] == (1, 2.5, None)
    )
    assert (
        out["g"].get_state().tolist() == g.get_state().tolist()
        and out["d"] is torch.float64
    )
    assert (
        type(out["np"]) is np.float32 and out["s"] == {"x"} and out["f"] == float("inf")
    )
    # a function never crosses
    assert isinstance(wire.decode(wire.encode(lambda: 1)), wire.Opaque)
    for bad in (
        {"$np": "|O", "shape": [1], "data": ""},
        {"$pickle": "x"},
        {"$torch": "torch.foo"},
    ):
        with pytest.raises(wire.WireError):
            wire.decode(bad)


def _grader(built, name):
    return ex.Grader(built[name].autograder_zip)


def test_student_code_runs_in_another_process_and_only_data_comes_back(
    built, monkeypatch
):
    """A submission that patches the grading module, the comparison helpers, otter's results
    and the profiler in its own process: the allowlist's findings are a note for the
    instructor, not counted, and the patches run in the isolated child, where they gain
    nothing: the child only sends data, so the tests its wrong q1 fails still fail, and the
    others keep points; were the source not read at all, the same."""
    import os

    from attnbook_grader import engine, source_rules
    from attnbook_grader.session import Session

    b = built["ex01_attention"]
    prelude = "".join(text for kind, text in ex.TAMPERS.items() if kind != "builtins")
    spy = ("def scores_to_weights(scores):", prelude + "def scores_to_weights(scores):")
    wrong = (
        "    return exps / exps.sum(axis=-1, keepdims=True)",
        "    return np.zeros_like(scores)",
    )
    submission = ex.make_submission(b, [spy, wrong])
    with _grader(built, "ex01_attention") as grader:
        g = grader.grade(submission, "spy", timeout=300)
        assert g.status == "ok", g.message
        assert g.questions["q1"] == 0.0, g.questions
        assert all(v > 0 for q, v in g.questions.items() if q != "q1"), g.questions
        notes = [why for _, why in g.cell_errors if why.startswith("dynamic code")]
        assert len(notes) >= 3 and all("not counted" in n for n in notes), notes
        # the second line: the source not read, only data comes back from the child
        monkeypatch.setattr(
            engine.source_rules, "scan", lambda *a: source_rules.Reading()
        )
        g = grader.grade(submission, "spy, unread", timeout=300)
        assert g.status == "ok", g.message
        # q1 is wrong; the child's watcher, a second opinion, sees its profiler replaced
        # and takes the guarded tests' points; unguarded tests still pass
        assert g.questions["q1"] == 0.0 and 0 < g.score < g.possible, g.questions
        # the reference runs in a child too
        assert grader.reference.describe("Q")["kind"] == "data"
        session = Session(["import os\nGRADER_PID = os.getpid()"], {}, 120)
        try:
            assert session.describe("GRADER_PID")["value"] != os.getpid()
        finally:
            session.close()


def test_a_wrong_first_answer_does_not_cost_the_later_questions(built):
    b = built["ex01_attention"]
    wrong = (
        "    return exps / exps.sum(axis=-1, keepdims=True)",
        "    return np.zeros_like(scores)",
    )
    with _grader(built, "ex01_attention") as grader:
        g = grader.grade(ex.make_submission(b, [wrong]), "wrong q1", timeout=300)
    assert g.questions["q1"] == 0.0
    # (the points of a question's tests are summed in floating point: 6.000000000000001)
    assert g.questions["q2"] == pytest.approx(6.0) and g.questions[
        "q3"
    ] == pytest.approx(3.0), "q2 and q3 use the reference's softmax"


def test_grading_a_folder_gives_one_clear_line_per_submission(
    built, tmp_path, monkeypatch
):
    """Whatever arrives, every submission gets a grade, `possible` is the exercise's total and the
    message says in one line what went wrong; nothing is written into the repository."""
    b = built["ex01_attention"]
    folder = tmp_path / "submissions"
    folder.mkdir()
    nbformat.write(ex.make_submission(b, []), folder / "alice.ipynb")
    looping = ex.make_submission(
        b, [("    d_k = Q.shape[-1]\n", "    while True:\n        pass\n")]
    )
    nbformat.write(looping, folder / "bob.ipynb")
    broken = ex.make_submission(
        b, [("def scores_to_weights(scores):", "def scores_to_weights(scores)")]
    )
    nbformat.write(broken, folder / "carol.ipynb")
    (folder / "dave.ipynb").write_text("this is not a notebook")
    nbformat.write(built["ex02_scaling"].student_nb, folder / "erin.ipynb")
    # an LMS export: a folder per student; an old Jupyter's nbformat 3; a stray file
    (folder / "frank").mkdir()
    nbformat.write(
        ex.make_submission(b, []), folder / "frank" / "ex01.ipynb", version=3
    )
    (folder / "frank" / "notes.txt").write_text("not graded")
    (folder / "gina" / "v2").mkdir(parents=True)  # two notebooks: which one counts?
    nbformat.write(ex.make_submission(b, []), folder / "gina" / "a.ipynb")
    nbformat.write(ex.make_submission(b, []), folder / "gina" / "v2" / "b.ipynb")
    before = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    # no zip there: it is built in a temp folder
    monkeypatch.setattr(gradebook, "BUILD", tmp_path / "build")
    # An endless loop must get a grade (a timeout). The limit is per submission: each of the
    # others takes about 0.3 s on an idle 2-core machine (and the test passed in every run
    # beside a CPU hog), so 8 s leaves each a wide margin, while the loop keeps a core busy
    # for those 8 s, not a minute.
    grades = ex.grade_folder(
        "ex01_attention", folder, tmp_path / "grades.csv", timeout=8
    )
    after = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    assert after == before, "grading wrote into the repository"
    rows = {r["submission"]: r for r in csv.DictReader(open(tmp_path / "grades.csv"))}
    assert set(rows) == {
        "alice.ipynb",
        "bob.ipynb",
        "carol.ipynb",
        "dave.ipynb",
        "erin.ipynb",
        "frank/ex01.ipynb",
        "gina/a.ipynb",
        "gina/v2/b.ipynb",
    }
    assert rows["gina/a.ipynb"]["message"].startswith("2 notebooks in this student's")
    assert float(rows["frank/ex01.ipynb"]["percent"]) == 100.0
    total = ex.exercise_total(ex.zip_test_files(b.autograder_zip, tmp_path / "tests"))
    assert total > 0 and {float(r["possible"]) for r in rows.values()} == {total}
    assert (
        rows["alice.ipynb"]["status"] == "ok"
        and float(rows["alice.ipynb"]["percent"]) == 100.0
    )
    assert rows["alice.ipynb"]["message"] == ""
    # no course secret: graded at the reserved variant, which the CSV calls "book"
    assert rows["alice.ipynb"]["variant"] == "book"
    # each row names the isolation its children ran at; a file never graded, none
    from attnbook_grader import jail

    assert rows["alice.ipynb"]["isolation"] == jail.require() != ""
    assert rows["dave.ipynb"]["isolation"] == ""
    # the loop is in q2's `attention`: the questions graded before the limit keep their
    # points (q1), the one that loops and those after it score 0
    assert (
        rows["bob.ipynb"]["status"] == "timeout"
        and float(rows["bob.ipynb"]["q2"]) == 0.0
        and float(rows["bob.ipynb"]["score"]) < total
    ), rows["bob.ipynb"]
    assert rows["bob.ipynb"]["message"].startswith("timeout:")
    assert (
        rows["carol.ipynb"]["status"] == "ok"
        and float(rows["carol.ipynb"]["percent"]) < 100.0
    )
    assert rows["carol.ipynb"]["message"].startswith("syntax error in question q1"), (
        rows["carol.ipynb"]
    )
    # then q1's first failed test (the closing cells that used q1 are not run: otter_ignore)
    assert "; q1: test_" in rows["carol.ipynb"]["message"], rows["carol.ipynb"]
    assert rows["dave.ipynb"]["status"] == "error" and rows["dave.ipynb"][
        "message"
    ].startswith("not a notebook")
    assert (
        rows["erin.ipynb"]["message"]
        == "wrong exercise: this is a notebook of ex02_scaling, not of ex01_attention"
    )
    for row in rows.values():
        assert "\n" not in row["message"] and "/tmp" not in row["message"], row[
            "message"
        ]
    assert {"q1", "q2"} <= set(rows["alice.ipynb"])
    report = (tmp_path / "grades-report.txt").read_text()
    assert "test_huge_scores_are_stable" in report and "% pass" in report
    # the public checks carry points: the report lists them too (review 64, F25)
    assert " (public) " in report
    assert "frank/notes.txt: not a notebook (.txt)" in report
    assert len(grades) == 8
    # a lost question names its first failed test and hint, in the CSV and the feedback
    assert re.search(r"q1: test_\w+: ", rows["carol.ipynb"]["message"]), rows[
        "carol.ipynb"
    ]
    feedback = tmp_path / "grades-feedback"
    assert "Every question has full marks." in (feedback / "alice.ipynb.md").read_text()
    carol = (feedback / "carol.ipynb.md").read_text()
    assert "## q1: 0 / " in carol and "(hidden test): " in carol, carol
    assert (feedback / "frank" / "ex01.ipynb.md").is_file()


def test_calls_of_sees_each_block_a_function_feeds_its_step():
    """Locally (the master notebook), `calls_of` watches the named function of the caller's
    namespace and puts it back; the shapes come in the order of its parameters."""
    import numpy as np

    namespace: dict = {"np": np}
    exec(  # noqa: S102 - two small functions, as a notebook defines them
        "def step(state, block):\n    return state + float(block.sum())\n"
        "def run(x, size):\n    state = 0.0\n"
        "    for i in range(0, len(x), size):\n"
        "        state = step(block=x[i:i + size], state=state)\n    return state\n",
        namespace,
    )
    total, calls = grading.calls_of(namespace["run"], "step", np.arange(5.0), 2)
    assert total == 10.0
    assert calls == [[None, (2,)], [None, (2,)], [None, (1,)]]
    assert namespace["step"].__name__ == "step"


def test_a_zip_built_from_other_masters_is_refused(built, tmp_path, monkeypatch):
    """`make grade` grades with the zip `make exercises` built only while the masters are
    the ones it was built from (the stamp beside it records their hash)."""
    build_dir = tmp_path / "build"
    (build_dir / "autograder").mkdir(parents=True)
    zip_path = build_dir / "autograder" / "ex01_attention.zip"
    zip_path.write_bytes(built["ex01_attention"].autograder_zip.read_bytes())
    zip_path.with_suffix(".masters").write_text(f"{ex.MASTERS}\n")
    monkeypatch.setattr(gradebook, "BUILD", build_dir)
    current = ex.masters_hash("ex01_attention", ex.MASTERS)
    zip_path.with_suffix(".sha256").write_text(current + "\n")
    assert gradebook.graded_zip("ex01_attention", tmp_path) == zip_path
    zip_path.with_suffix(".sha256").write_text(
        "0" * 64 + "\n"
    )  # a master changed since
    with pytest.raises(
        ex.ExerciseError, match="is stale: it was built from other masters"
    ):
        gradebook.graded_zip("ex01_attention", tmp_path)


def test_gradescope_reads_an_old_notebook_as_make_grade_does(built, tmp_path):
    """The nbformat-3 notebook that scored 0 on Gradescope ("no code cells") and 14/14 under
    `make grade`: the same reader now, the same score."""
    import json
    import zipfile

    from attnbook_grader.autograder import main

    b = built["ex01_attention"]
    root = tmp_path / "autograder"
    zipfile.ZipFile(b.autograder_zip).extractall(root / "source")
    (root / "submission" / "folder").mkdir(parents=True)
    nb = ex.make_submission(b, [])
    nbformat.write(nb, root / "submission" / "folder" / "old.ipynb", version=3)
    main(str(root), timeout=120)
    results = json.loads((root / "results" / "results.json").read_text())
    total = sum(t["max_score"] for t in results["tests"])
    assert results["score"] == total > 0, results
    assert results["extra_data"]["variant"] == "book"  # as make grade's CSV names it


def test_grading_without_isolation_is_refused_with_one_line(
    tmp_path, monkeypatch, capsys
):
    """Where the kernel isolates nothing, `grade` refuses before any submission runs and
    says why in one line (no traceback); `--unsafe` is the labelled practice mode."""
    from attnbook_grader import jail
    from tools import exercises

    monkeypatch.setenv("ATTNBOOK_GRADE_ISOLATION", "none")
    monkeypatch.delenv("ATTNBOOK_GRADE_UNSAFE", raising=False)
    monkeypatch.setattr(jail, "_level", [])
    (tmp_path / "subs").mkdir()
    out = tmp_path / "grades.csv"
    code = exercises.main(
        ["grade", "ex01_attention", str(tmp_path / "subs"), "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 2 and not out.exists(), err
    assert (
        err.startswith("exercises grade: not graded.")
        and "ATTNBOOK_GRADE_UNSAFE" in err
    )
    assert "Traceback" not in err


def test_the_gradebook_goes_into_a_folder_that_does_not_exist_yet(tmp_path):
    """OUT=new/folder/grades.csv: the folder is made, not a FileNotFoundError after grading."""
    from tools.exercise_grading import Grade
    from tools.exercises import write_gradebook

    out = tmp_path / "term" / "week1" / "grades.csv"
    write_gradebook(out, [Grade("a.ipynb", "ok", score=1.0, possible=2.0)], {"q1": 2.0})
    assert out.read_text().splitlines()[0].startswith("submission,status,q1,")


def test_the_zip_installs_the_course_and_engine_of_this_checkout(built):
    """The autograder zip carries the wheels of `attnbook` and `attnbook-grader` built from
    this checkout at the course's version, and its environment installs those files, not a
    release from a registry; the course's wheel holds no module of the engine."""
    import tomllib
    import yaml

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    wheels = {
        "attnbook": f"wheels/attnbook-{version}-py3-none-any.whl",
        "attnbook-grader": f"wheels/attnbook_grader-{version}-py3-none-any.whl",
    }
    with zipfile.ZipFile(built["ex01_attention"].autograder_zip) as z:
        assert set(wheels.values()) <= set(z.namelist()), z.namelist()
        env = yaml.safe_load(z.read("environment.yml"))
        config = z.read("otter_config.json").decode()
        course = zipfile.ZipFile(io.BytesIO(z.read(wheels["attnbook"])))
        engine = zipfile.ZipFile(io.BytesIO(z.read(wheels["attnbook-grader"])))
    (pip,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    assert [f"/autograder/source/{w}" for w in wheels.values()] == [
        p for p in pip if p.startswith("/")
    ], pip
    assert not [p for p in pip if p.split("==")[0] in wheels], pip
    assert "attnbook_grader.otter_plugin.EngineOnly" in config
    meta = engine.read(f"attnbook_grader-{version}.dist-info/METADATA").decode()
    assert f"Requires-Dist: attnbook=={version}" in meta.splitlines(), meta
    engine_modules = {n.split("/")[-1] for n in engine.namelist() if n.endswith(".py")}
    assert {"engine.py", "sandbox.py", "wire.py", "autograder.py"} <= engine_modules
    in_course = {
        n for n in course.namelist() if n.startswith("attnbook/exercise_checks/")
    }
    assert "attnbook/exercise_checks/grading.py" in in_course
    leaked = {n.split("/")[-1] for n in in_course} & (engine_modules - {"__init__.py"})
    assert not leaked, leaked
    assert not [n for n in course.namelist() if n.startswith("attnbook_grader/")]


def test_a_zip_pin_of_another_release_is_refused():
    """Requirements that pin another release than this checkout's are refused by name."""
    from tools.exercise_build import ExerciseError, pinned_environment

    wheels = {"attnbook": "/w/attnbook-0.1.0-py3-none-any.whl"}
    text = "dependencies:\n  - pip:\n      - attnbook==0.0.1\n"
    with pytest.raises(ExerciseError, match="pin attnbook==0.0.1, this checkout is"):
        pinned_environment(text, wheels)
    with pytest.raises(ExerciseError, match="name no attnbook"):
        pinned_environment("dependencies:\n  - pip:\n      - numpy\n", wheels)
    ok = pinned_environment(text.replace("0.0.1", "0.1.0"), wheels)
    assert "      - /w/attnbook-0.1.0-py3-none-any.whl" in ok.splitlines(), ok


def test_grading_refuses_an_engine_of_another_release(monkeypatch, capsys):
    """`grade` grades with the installed engine, which must be this checkout's release."""
    import importlib.metadata

    from tools import exercise_wheels

    assert exercise_wheels.installed_engine_problem() is None
    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata,
        "version",
        lambda name: "0.0.1" if name == "attnbook-grader" else real(name),
    )
    problem = exercise_wheels.installed_engine_problem()
    assert problem and "attnbook-grader 0.0.1" in problem and "make setup" in problem
    code = ex.main(["grade", "ex01_attention", "/nonexistent"])
    assert code == 1 and capsys.readouterr().err == f"exercises: {problem}\n"


def _public_check(name: str, question: str, test: str):
    """The function of one published public check (src/attnbook/exercise_checks/NAME/qN.py)."""
    import runpy

    path = ROOT / "src" / "attnbook" / "exercise_checks" / name / f"{question}.py"
    return runpy.run_path(str(path))[test].test_func


def _linear_attention(q, k, v):
    """Causal linear attention (B, T, d) written out for these tests: phi = elu + 1, EPS 1e-6."""
    import torch.nn.functional as F

    fq, fk = F.elu(q) + 1, F.elu(k) + 1
    a = (fq @ fk.transpose(-2, -1)).tril()  # (B, T, T): key j <= query i
    return (a @ v) / (a.sum(-1, keepdim=True) + 1e-6)


@pytest.mark.parametrize(
    ("question", "test"),
    [("q1", "test_recurrent_shape"), ("q2", "test_parallel_shape_and_no_loop")],
)
def test_ex11_shape_checks_also_compare_values(question, test):
    """ex11's first public check of q1 and q2 fails zeros of the right shape (the non-solving
    answer) with the written-out example, and passes a correct answer."""
    import torch

    check = _public_check("ex11_linear_attention", question, test)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 5, 4, generator=g), torch.randn(2, 5, 4, generator=g)
    v = torch.randn(2, 5, 3, generator=g)
    book = {"exercise": "ex11_linear_attention", "task": "plain", "T": 5, "seed": 0}
    with pytest.raises(AssertionError, match=r"expected \[1, 3\]"):
        check(lambda q, k, v: torch.zeros_like(v), q, k, v, book)
    check(_linear_attention, q, k, v, book)


def _view_pack(codes, bits):
    """pack_codes that flattens with .view: right on contiguous codes only."""
    per = 8 // bits
    runs = codes.view(-1, per)
    packed = runs[:, 0].clone()
    for i in range(1, per):
        packed |= runs[:, i] << (i * bits)
    return packed.view(*codes.shape[:-1], codes.shape[-1] // per)


def _view_zero_head(z, head, d_head):
    """zero_head that flattens its copy with .view: right on contiguous z only."""
    out = z.clone()
    out.view(-1, out.shape[-1])[:, head * d_head : (head + 1) * d_head] = 0.0
    return out


@pytest.mark.parametrize(
    ("name", "question", "test", "wrong", "right", "variant"),
    [
        (
            "ex09_kv_quant",
            "q2",
            "test_pack_small_example",
            _view_pack,
            lambda codes, bits: _view_pack(codes.contiguous(), bits),
            (),
        ),
        (
            "ex10_induction",
            "q4",
            "test_zero_head_any_leading_shape",
            _view_zero_head,
            lambda z, head, d_head: _view_zero_head(z.contiguous(), head, d_head),
            ({"exercise": "ex10_induction", "task": "zero", "d_head": 2, "seed": 0},),
        ),
    ],
)
def test_ex09_ex10_public_checks_name_view_on_a_transposed_input(
    name, question, test, wrong, right, variant
):
    """A .view that works only on contiguous tensors fails a public check of ex09 q2 and ex10
    q4 with a hint naming .view; the same answer on a .contiguous() copy passes (ex10's
    check at the book's variant)."""
    check = _public_check(name, question, test)
    with pytest.raises(AssertionError, match=r"not \.view"):
        check(wrong, *variant)
    check(right, *variant)
