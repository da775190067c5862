"""Grading one submission, two ways, for tools/exercises.py (exercises 1-7).

* otter's own pipeline (`OtterRun`): a kernel per notebook, as `otter run` grades;
* the fast path (`fast_grade`): this process, warmed up once (`preload`), forks a child per
  submission that runs the notebook's cells in a fresh namespace and then the autograder's
  own test files with otter's own test classes, each `grader.check("qN")` running test file
  qN at that point as otter's grading mode does. Same tests, same verdicts (the proof of
  tools/exercises.py compares them), a fraction of the time.

Plus what instructors read: one-line diagnoses of a submission and the class report.
Run as a script, `python tools/exercise_grading.py ZIP OUT_JSON NOTEBOOK...` is otter's
pipeline on the notebooks (the worker of `OtterRun`).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

DEFAULT_TIMEOUT = 300.0


@dataclass
class Grade:
    submission: str
    status: str  # "ok", "timeout" or "error"
    score: float = 0.0
    possible: float = 0.0
    questions: dict[str, float] = field(default_factory=dict)
    # {"name", "question", "hidden", "passed", "points", "message"}
    tests: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    message: str = ""
    cell_errors: list[list] = field(default_factory=list)  # [cell index, "Type: message"]

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.possible if self.possible else 0.0

    def passed(self, hidden: bool) -> tuple[int, int]:
        chosen = [t for t in self.tests if t["hidden"] == hidden]
        return sum(t["passed"] for t in chosen), len(chosen)

    def first_failure(self, hidden: bool) -> str:
        for t in self.tests:
            if t["hidden"] == hidden and not t["passed"]:
                return f"{t['name']}: {t['message']}"
        return ""


def short_message(message: str) -> str:
    """The exception line of an otter failure message (no code, no paths), at most 200 chars."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b:?", line):
            return " ".join(lines[i:i + 2] if line.endswith(":") else [line])[:200]
    return (lines[-1] if lines else "")[:200]


def _test_rows(test_files: dict) -> tuple[dict[str, float], list[dict]]:
    questions, tests = {}, []
    for qname, test_file in test_files.items():
        questions[qname] = float(test_file.score)
        for r in test_file.test_case_results:
            tests.append({"name": r.test_case.name, "question": qname, "hidden": bool(r.test_case.hidden),
                          "passed": bool(r.passed), "points": float(r.test_case.points or 0),
                          "message": "" if r.passed else short_message(r.message)})
    return questions, tests


def _grade_in_this_process(zip_path: str, out_json: str, *submissions: str) -> None:
    """Worker: grade submissions one after the other with otter; write per-test results as JSON."""
    import otter.api

    graded = []
    for submission in submissions:
        results = otter.api.grade_submission(submission, zip_path, quiet=True)
        questions, tests = _test_rows(results.results)
        graded.append({"score": float(results.total), "possible": float(results.possible),
                       "questions": questions, "tests": tests})
    Path(out_json).write_text(json.dumps(graded))


class OtterRun:
    """otter's real pipeline on .ipynb files, one after the other, in a process group of its own
    (started at once, collected with `result`, which kills it after `timeout` seconds)."""

    def __init__(self, submissions: list[Path], zip_path: Path, timeout: float = DEFAULT_TIMEOUT):
        self.submissions, self.timeout, self.start = list(submissions), timeout, time.monotonic()
        self.tmp = tempfile.TemporaryDirectory(prefix="attnbook-grade-")
        self.out_json = Path(self.tmp.name) / "result.json"
        self.log = open(Path(self.tmp.name) / "log.txt", "w+")
        cmd = [sys.executable, str(Path(__file__).resolve()), str(Path(zip_path).resolve()),
               str(self.out_json), *(str(Path(s).resolve()) for s in self.submissions)]
        self.proc = subprocess.Popen(cmd, cwd=self.tmp.name, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def result(self) -> list[Grade]:
        left = self.timeout - (time.monotonic() - self.start)
        try:
            self.proc.wait(timeout=max(left, 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the kernel otter started dies with it
            self.proc.wait()
            return self._all("timeout", f"timeout: grading took longer than {self.timeout:.0f} s "
                                        "(an endless loop?): scored 0")
        seconds = time.monotonic() - self.start
        try:
            if self.proc.returncode != 0 or not self.out_json.is_file():
                self.log.seek(0)
                return self._all("error", f"the grader failed: {short_message(self.log.read())}")
            data = json.loads(self.out_json.read_text())
        finally:
            self.log.close()
            self.tmp.cleanup()
        return [Grade(str(s), "ok", d["score"], d["possible"], d["questions"], d["tests"],
                      seconds / len(data)) for s, d in zip(self.submissions, data)]

    def _all(self, status: str, message: str) -> list[Grade]:
        self.log.close()
        self.tmp.cleanup()
        return [Grade(str(s), status, seconds=time.monotonic() - self.start, message=message)
                for s in self.submissions]


def grade(submission: Path, zip_path: Path, timeout: float = DEFAULT_TIMEOUT) -> Grade:
    """Grade one .ipynb with otter (the real pipeline), killed after `timeout` seconds."""
    return OtterRun([submission], zip_path, timeout).result()[0]


# ----------------------------------------------------------------------------- the fast path
def zip_test_files(zip_path: Path, dest: Path) -> dict[str, Path]:
    """Extract the test files (tests/qN.py) of an autograder zip: question name -> path."""
    dest.mkdir(parents=True, exist_ok=True)
    found = {}
    with zipfile.ZipFile(zip_path) as z:
        for member in sorted(z.namelist()):
            if re.fullmatch(r"tests/\w+\.py", member):
                path = dest / Path(member).name
                path.write_bytes(z.read(member))
                found[path.stem] = path
    return dict(sorted(found.items()))


def function_names(test_files: dict[str, Path]) -> dict[str, str]:
    """otter's test names ("q1 - 3") -> the test functions' names, from the test files."""
    import ast

    names = {}
    for question, path in test_files.items():
        tests = [node.name for node in ast.parse(path.read_text()).body
                 if isinstance(node, ast.FunctionDef) and node.decorator_list]
        names.update({f"{question} - {i}": fn for i, fn in enumerate(tests, start=1)})
    return names


def rename_tests(g: Grade, names: dict[str, str]) -> Grade:
    for t in g.tests:
        t["name"] = names.get(t["name"], t["name"])
    return g


def exercise_total(test_files: dict[str, Path]) -> float:
    """The points of the whole exercise, from its test files."""
    return float(sum(_test_file(p).possible for p in test_files.values()))


def _test_file(path: Path):
    """otter's own object for one test file, as its grading mode creates it."""
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file

    return create_test_file(str(path), NBMetadataConfig())


def preload(warm_up: nbformat.NotebookNode | None = None, test_files: dict[str, Path] | None = None) -> None:
    """Import once, before forking, what every submission imports (the forks share it); with a
    trusted notebook (the reference), run it once here so that the forks start warm."""
    import matplotlib

    matplotlib.use("Agg")  # this process only: nothing is exported to other processes
    import matplotlib.pyplot  # noqa: F401
    import numpy  # noqa: F401
    import otter  # noqa: F401
    import otter.test_files  # noqa: F401
    import torch  # noqa: F401
    from IPython.core.inputtransformer2 import TransformerManager  # noqa: F401

    import attnbook.exercise_checks.grading  # noqa: F401
    import attnbook.plot  # noqa: F401

    # Warm up what every child would otherwise set up again: PyTorch's first operations (on one
    # thread, so no thread pool exists when this process forks) and matplotlib's fonts.
    torch.set_num_threads(1)
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    weights = torch.softmax((x @ x.T).masked_fill(torch.ones(4, 4, dtype=torch.bool).tril() == 0, -1e9), -1)
    torch.multinomial(weights.float(), 1, generator=torch.Generator().manual_seed(0))
    torch.topk(x, 2).values.sum().item()
    fig, ax = matplotlib.pyplot.subplots()
    fig.colorbar(ax.imshow(numpy.eye(3)), ax=ax)
    ax.set_title("warm-up")
    fig.canvas.draw()
    matplotlib.pyplot.close(fig)
    if warm_up is not None:
        notebook_class = otter.Notebook
        try:
            with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
                _run_submission(warm_up, test_files or {})
        finally:
            otter.Notebook = notebook_class
            matplotlib.pyplot.close("all")


class _NoShell:
    """Stands in for get_ipython() in the fast path: magics and shell escapes do nothing."""

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: None


def _run_submission(nb: nbformat.NotebookNode, test_files: dict[str, Path]) -> dict:
    """Child of the fast path: run the notebook's code cells in a fresh namespace; each
    `grader.check("qN")` runs test file qN at that point, as otter's grading mode does, and
    every test file not run yet runs at the end. Returns the results as plain data."""
    import builtins

    import otter
    from IPython.core.inputtransformer2 import TransformerManager
    ran: dict = {}
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins, "get_ipython": _NoShell}

    def run(question: str) -> None:
        if question in test_files and question not in ran:
            test_file = _test_file(test_files[question])
            test_file.run(namespace)
            ran[question] = test_file

    class GradingNotebook:  # what `otter.Notebook` is while grading
        def __init__(self, *args, **kwargs):
            pass

        def check(self, question, *args, **kwargs):
            run(question)

        def check_all(self, *args, **kwargs):
            for question in test_files:
                run(question)

        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    otter.Notebook = GradingNotebook
    errors = []
    transform = TransformerManager().transform_cell
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            code = compile(transform(cell.source), f"<cell {index}>", "exec")
        except SyntaxError as err:
            errors.append([index, f"SyntaxError: {err.msg} (line {err.lineno})"])
            continue
        try:
            exec(code, namespace)  # noqa: S102 - running the submission is the point
        except BaseException as err:  # noqa: BLE001 - otter carries on after a failing cell too
            errors.append([index, f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"])
    for question in test_files:
        run(question)
    questions, tests = _test_rows({q: ran[q] for q in test_files})
    return {"questions": questions, "tests": tests, "cell_errors": errors,
            "score": sum(questions.values()), "possible": float(sum(t.possible for t in ran.values()))}


def fast_grade(nb: nbformat.NotebookNode, test_files: dict[str, Path], label: str,
               timeout: float = DEFAULT_TIMEOUT) -> Grade:
    """Grade one notebook in a forked child of this process (call `preload()` first):
    the same test files and test classes as otter's grading, without a kernel per submission."""
    start = time.monotonic()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.setpgid(0, 0)
            payload = json.dumps(_run_submission(nb, test_files)).encode()
        except BaseException as err:  # noqa: BLE001
            payload = json.dumps({"crash": f"{type(err).__name__}: {err}"}).encode()
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(0)
    os.close(write_end)
    chunks, deadline = [], start + timeout
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([pipe], [], [], max(0.0, left))
            if not ready:
                for target in (-pid, pid):
                    try:
                        os.kill(target, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                os.waitpid(pid, 0)
                return Grade(label, "timeout", seconds=time.monotonic() - start,
                             message=f"timeout: grading took longer than {timeout:.0f} s (an endless loop?): scored 0")
            chunk = os.read(pipe.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    seconds = time.monotonic() - start
    try:
        data = json.loads(b"".join(chunks))
    except ValueError:
        return Grade(label, "error", seconds=seconds, message="the submission ended the grading process")
    if "crash" in data:
        return Grade(label, "error", seconds=seconds, message=f"the grader failed: {data['crash']}")
    return Grade(label, "ok", data["score"], data["possible"], data["questions"], data["tests"],
                 seconds, cell_errors=data["cell_errors"])


# ----------------------------------------------------------------------------- instructors
def question_of_cell(nb: nbformat.NotebookNode, index: int) -> str | None:
    """The question a cell belongs to: the next `grader.check("qN")` after it."""
    for cell in nb.cells[index:]:
        found = re.search(r"grader\.check\(\s*[\"'](\w+)[\"']", cell.source) if cell.cell_type == "code" else None
        if found:
            return found.group(1)
    return None


def read_submission(path: Path, name: str) -> tuple[nbformat.NotebookNode | None, str]:
    """The notebook, or None and a one-line reason why it cannot be graded as exercise `name`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None, "not a notebook: the file is not text (UTF-8)"
    try:
        json.loads(text)
    except ValueError as err:
        return None, f"not a notebook: the file is not valid JSON ({str(err).split(':')[0]})"
    try:
        nb = nbformat.reads(text, as_version=4)
        if not isinstance(nb.get("cells"), list):
            raise ValueError("no cells")
    except Exception as err:  # noqa: BLE001 - any unreadable notebook
        return None, f"not a notebook: valid JSON but not a Jupyter notebook ({type(err).__name__})"
    named = {m for c in nb.cells if c.cell_type == "code"
             for m in re.findall(r"tests_dir\(\s*[\"'](\w+)[\"']", c.source)}
    if named and name not in named:
        return None, f"wrong exercise: this is a notebook of {sorted(named)[0]}, not of {name}"
    return nb, ""


def diagnosis(nb: nbformat.NotebookNode, fast: Grade) -> str:
    """One line for the instructor: syntax errors and cells that raised, by question."""
    notes = []
    for index, error in fast.cell_errors:
        question = question_of_cell(nb, index)
        where = f"question {question}" if question else f"cell {index}"
        if error.startswith("SyntaxError"):
            notes.append(f"syntax error in {where} ({error.removeprefix('SyntaxError: ')})")
        else:
            notes.append(f"a cell of {where} raised {error}")
    return "; ".join(notes)


if __name__ == "__main__":
    _grade_in_this_process(*sys.argv[1:])
