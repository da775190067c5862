"""The grading engine's trust boundary (issue 28): every verdict is decided where no student
code runs, whatever path grades, and nothing a submission starts outlives it.

* the grading package imports in one direction, each module one job, none over 400 lines;
* the allowlist's findings are read from the source (`source_rules`): each kind of dynamic
  code is found (a note under isolation, the gate of a practice grade), honest code is not;
* the new-object rules are decided from the memory facts the child sends (`verdicts`);
* a submission that forks, asks for 20 GB and starts a detached watcher meant to rewrite
  ../results/results.json scores 0 on those three questions and full marks on the others,
  through `autograder.main` as root and as a normal user (`nobody`, where the tests run as
  root), and through `make grade`, where the next submission then scores 100 %; `otter run`
  refuses; and `processes.end_submission` ends a detached process that did escape.

Cost: four gradings of exercise 3 (two of them in fresh Python processes) and one refusal;
about 75 s measured on the shared 2-core machine (3 minutes at a load of ~17).
"""

from __future__ import annotations

import ast
import copy
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "attnbook" / "exercise_checks"  # the student's side
ENGINE = ROOT / "grader" / "src" / "attnbook_grader"  # the grader's
import tools.exercises as ex  # noqa: E402 - after ROOT

from attnbook_grader import source_rules, verdicts  # noqa: E402


# --------------------------------------------------------------------------- import graph
def _imports(path: Path) -> set[str]:
    """The modules of the grading code (the public checks' side and the engine) that
    `path` imports, anywhere in it."""
    found = set()
    packages = ("attnbook.exercise_checks", "attnbook_grader")
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module in packages:
                found |= {a.name for a in node.names}
            elif node.module.startswith(tuple(f"{p}." for p in packages)):
                found.add(node.module.rsplit(".", 1)[1])
        elif isinstance(node, ast.Import):
            found |= {
                a.name.rsplit(".", 1)[1]
                for a in node.names
                if a.name.startswith(tuple(f"{p}." for p in packages))
            }
    return found - {path.stem}


def _modules() -> list[Path]:
    return [
        p for d in (PACKAGE, ENGINE) for p in d.glob("*.py") if p.stem != "__init__"
    ]


def _graph() -> dict[str, set[str]]:
    return {p.stem: _imports(p) for p in _modules()}


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), set()) - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def test_the_grading_package_imports_in_one_direction():
    graph = _graph()
    for module in graph:
        assert module not in _reach(graph, module), (
            f"{module} imports itself in a circle"
        )
    # the modules students and the child use never reach the grader's side
    for module in ("grading", "probes", "watch", "sandbox"):
        assert not _reach(graph, module) & {
            "session",
            "engine",
            "verdicts",
            "source_rules",
        }
    assert _reach(graph, "probes") == set()
    assert {"rng", "child", "verdicts"} <= graph["session"]
    assert "source_rules" in graph["engine"]
    # the student's side imports nothing of the engine's
    engine = {p.stem for p in ENGINE.glob("*.py")}
    for path in PACKAGE.glob("*.py"):
        assert not graph.get(path.stem, set()) & engine, path.name
    for path in [*PACKAGE.glob("*.py"), *ENGINE.glob("*.py")]:
        lines = len(path.read_text().splitlines())
        assert lines <= 400, f"{path.name} has {lines} lines"


# --------------------------------------------------------------------------- the source
TAMPERING = {
    "a default argument rebinding guarded": (
        "def f(x, _=setattr(__import__('attnbook.exercise_checks.grading', fromlist=['g']),"
        " 'guarded', lambda fn, **kw: fn)):\n    return x"
    ),
    "sys.modules surgery": "import sys\nsys.modules['attnbook.exercise_checks.grading'] = None",
    "sys.modules read": "import sys\ng = sys.modules['attnbook.exercise_checks.grading']",
    "the profiler": "import sys\ndef f(x):\n    sys.setprofile(None)\n    return x",
    "import hooks": "import sys\nsys.meta_path.clear()",
    "a module attribute written": "import torch\ntorch.allclose = lambda *a, **k: True",
    "an attribute reached through a call": "import numpy as np\nnp.testing.__dict__['x'] = 1",
    "eval": "def f(x):\n    return eval('x')",
    "exec": "exec('import os')",
    "a computed getattr": "import numpy as np\ndef f(x):\n    return getattr(np, 'e' + 'xp')(x)",
    "importlib": "import importlib\nm = importlib.import_module('attnbook.kvquant')",
    "builtins": "import builtins\nbuiltins.len = lambda x: 0",
    "otter's internals": "import otter.test_files.abstract_test as a",
    "globals()": "globals()['f'] = print",
    "a frame": "import sys\nframe = sys._getframe()",
    "ctypes": "import ctypes",
    "a module reached through a value": (
        "import attnbook\nm = [attnbook][0]\nm.exercise_checks.grading.guarded = dict"
    ),
}
HONEST = [
    "import importlib.util, os, subprocess, sys\n"
    "if None in (importlib.util.find_spec('attnbook'), importlib.util.find_spec('otter')):\n"
    "    subprocess.run([sys.executable, '-m', 'pip', 'install', 'x'], check=True)\n"
    "    importlib.invalidate_caches()",
    "import sys\nON_COLAB = 'google.colab' in sys.modules",
    "import otter\nfrom attnbook.exercise_checks import tests_dir\n"
    "grader = otter.Notebook(tests_dir=tests_dir('ex01_attention'))",
    "import matplotlib.pyplot as plt\nplt.rcParams['figure.figsize'] = (4, 3)",
    "import numpy as np\ndef f(x, seed):\n    rng = np.random.default_rng(seed)\n"
    "    shape = getattr(x, 'shape')\n    return rng.permutation(len(x)), shape",
    "class Box:\n    def __init__(self, x):\n        self.x = x",
    "%matplotlib inline\nimport numpy as np",
]


@pytest.mark.parametrize("kind", sorted(TAMPERING))
def test_dynamic_code_is_found_and_in_a_practice_grade_costs_whoever_uses_it(kind):
    """Every kind is found; where the allowlist is the gate (a practice grade, no
    isolation) it is never run and costs the questions that use it; under isolation it is
    a note only (`Reading.hints`), and nothing is blanked."""
    cell = TAMPERING[kind]
    reading = source_rules.scan([cell])
    lost, notes = reading.refusals({"q1": {"f"}, "q2": {"g"}})
    messages = [*lost.values(), *(note for _, note in notes)]
    assert messages and all(m.startswith("dynamic code / tampering:") for m in messages)
    if "def f" in cell:  # in f: f's question, no other
        assert lost.keys() == {"q1"}, lost
    elif "\ng = " in cell:  # binds g, q2's function: q2's
        assert lost.keys() == {"q2"}, lost
    else:  # used by no question: noted, at no cost
        assert lost == {} and notes, (lost, notes)
    runnable = reading.runnable([cell])[0].split("\n")
    for _, line, _, _ in reading.findings:  # never run: blanked before the child starts
        assert runnable[line - 1].strip() in ("pass", ""), (kind, runnable)
    hinted = source_rules.scan([cell], hint_only=True).hints()
    assert 0 < len(hinted) <= len(reading.findings), (kind, hinted)  # no dependents
    assert all("would refuse" in n and "not counted" in n for _, n in hinted), hinted


@pytest.mark.parametrize("index", range(len(HONEST)))
def test_honest_notebook_code_is_no_tampering(index):
    # the first two are the notebook's own set-up cells: trusted as they are, refused in
    # an answer cell (they reach os, subprocess and sys)
    trusted = HONEST[:2] if index < 2 else ()
    assert source_rules.scan([HONEST[index]], trusted).findings == []


def test_shortcuts_are_read_through_names_helpers_and_getattr():
    cells = [
        "import torch\nimport torch.nn.functional as F\nfrom attnbook.kvquant import quantize as q\n"
        "sdpa = F.scaled_dot_product_attention",
        "def helper(a):\n    return sdpa(a, a, a)\n"
        "def mine(a):\n    return helper(a)\n"
        "def packaged(a):\n    return q(a)\n"
        "def imported(a):\n    return getattr(__import__('attnbook.attention'), 'attention').attend(a)\n"
        "def numpy_only(a):\n    import numpy as np\n    return np.exp(a)\n"
        "def other_question(a):\n    return packaged(a)",
    ]
    reading = source_rules.scan(cells)
    names = {"names": ["scaled_dot_product_attention"]}
    assert "scaled_dot_product_attention" in reading.shortcut("mine", names)
    assert "this question rules out torch" in reading.shortcut(
        "mine", {"libraries": ["torch"]}
    )
    assert "attnbook.kvquant.quantize" in reading.shortcut("packaged", {})
    assert reading.shortcut("packaged", {"allow_attnbook": True}) is None
    assert any("__import__" in f[3] for f in reading.findings)  # refused outright
    assert reading.shortcut("numpy_only", {"libraries": ["torch", "scipy"]}) is None
    # another question's function is the reference's while this one runs
    assert reading.shortcut("other_question", {}, {"packaged"}) is None
    assert reading.shortcut("other_question", {}) is not None


# --------------------------------------------------------------------------- the data
def test_new_object_rules_are_decided_from_the_memory_facts():
    import numpy as np
    import torch

    from attnbook_grader.sandbox import memory_facts

    x, a = torch.randn(2, 3), np.ones((2, 3))
    rules = {"new_object": True, "no_views": False}
    views = {"no_views": True, "new_object": True}
    assert verdicts.returned_inputs(memory_facts({"x": x}, x), rules)
    assert verdicts.returned_inputs(memory_facts({"x": x}, x[:]), rules)
    assert verdicts.returned_inputs(memory_facts({"a": a}, (1, a[:])), rules)
    assert verdicts.returned_inputs(memory_facts({"x": x}, x[:, :2]), rules) is None
    assert verdicts.returned_inputs(memory_facts({"x": x}, x[:, :2]), views)
    assert verdicts.returned_inputs(memory_facts({"a": a}, a[1:]), views)
    assert verdicts.returned_inputs(memory_facts({"x": x}, x.clone()), views) is None
    assert (
        verdicts.returned_inputs(memory_facts({"x": x}, x), {"new_object": False})
        is None
    )


# --------------------------------------------------------------------------- processes
WATCHER = """import json as _json, os as _os, time as _time
try:  # a watcher in a session of its own, meant to outlive the grading
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            for _ in range(100):
                open("HEARTBEAT", "a").close()
                _os.utime("HEARTBEAT")
                _time.sleep(0.1)
            for _path in ("../results/results.json", "RESULTS"):
                with open(_path, "w") as _f:
                    _json.dump({"score": 100.0, "tests": []}, _f)
        _os._exit(0)
except OSError:
    pass
"""


@pytest.fixture(scope="module")
def ex03():
    """Exercise 3 built, and a submission that forks in q1, asks for 20 GB in q2 and starts a
    detached watcher in q3's cell (heartbeat and results paths in a folder all may write)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="attnbook-processes-"))
    folder.chmod(0o777)
    built = ex.build("ex03_multihead", folder / "build")
    wrong = ex.load_wrong_answers("ex03_multihead")
    edits = [
        *next(e for label, e in wrong.items() if "forks a process" in label),
        *next(e for label, e in wrong.items() if "asks for 20 GB" in label),
    ]
    watcher = WATCHER.replace("HEARTBEAT", str(folder / "heartbeat")).replace(
        "RESULTS", str(folder / "rewritten.json")
    )
    first = "def multihead_attention(x, W_q, W_k, W_v, W_o, n_head):"
    edits.append((first, watcher + first))
    nb = ex.make_submission(built, edits)
    yield {"built": built, "nb": nb, "folder": folder}
    shutil.rmtree(folder, ignore_errors=True)


def _expect_three_lost(questions: dict[str, float], possible: dict[str, float]) -> None:
    assert questions["q1"] == questions["q2"] == questions["q3"] == 0.0, questions
    assert questions["q4"] == possible["q4"] and questions["q5"] == possible["q5"], (
        questions
    )


def _possible(built) -> dict[str, float]:
    from otter.test_files.exception_test import ExceptionTestFile

    with zipfile.ZipFile(built.autograder_zip) as z:
        return {
            Path(m).stem: float(
                ExceptionTestFile.from_string(z.read(m).decode(), path=m).possible
            )
            for m in z.namelist()
            if m.startswith("tests/") and m.endswith(".py")
        }


def _nothing_runs_on(folder: Path) -> None:
    beat = folder / "heartbeat"
    before = beat.stat().st_mtime if beat.exists() else None
    time.sleep(1.0)
    after = beat.stat().st_mtime if beat.exists() else None
    assert before == after, "a process of the submission still runs"
    assert not (folder / "rewritten.json").exists()


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _python_for_nobody() -> tuple[str, dict] | None:
    """An interpreter `nobody` can run, and start again (multiprocessing does), with this
    checkout's packages: this one, or the system's Python of the same version with the
    virtual environment on PYTHONPATH (a virtual environment under /root is out of reach)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    here = Path(__file__).resolve().parents[1]
    site = (
        Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    )
    path = os.pathsep.join(
        [str(here / "src"), str(here / "grader" / "src"), str(site / "site-packages")]
    )
    system = shutil.which(
        f"python{sys.version_info[0]}.{sys.version_info[1]}", path="/usr/bin"
    )
    for exe, env in ((sys.executable, {}), (system, {"PYTHONPATH": path})):
        if exe is None:
            continue
        probe = "import subprocess, sys, attnbook_grader.engine\n"
        probe += "subprocess.run([sys.executable, '-c', '1'], check=True)"
        done = subprocess.run(
            [*NOBODY, exe, "-c", probe],
            env={**os.environ, **env},
            cwd="/",
            capture_output=True,
        )
        if done.returncode == 0:
            return exe, env
    return None


@pytest.mark.parametrize("user", ["grader", "nobody"])
def test_gradescope_entry_point_zeroes_the_questions_and_ends_the_processes(ex03, user):
    """`autograder.main`, as the tests' user (root on Gradescope) and as `nobody`."""
    python, env = sys.executable, {}
    if user == "nobody":
        found = _python_for_nobody()
        if found is None:
            pytest.skip(
                "grading as a normal user needs root (to become nobody), setpriv and a "
                "Python that nobody may run"
            )
        python, env = found
    root = ex03["folder"] / f"autograder-{user}"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    zipfile.ZipFile(ex03["built"].autograder_zip).extractall(root / "source")
    nbformat.write(ex03["nb"], root / "submission" / "sub.ipynb")
    command = [
        python,
        "-c",
        f"from attnbook_grader.autograder import main; main({str(root)!r})",
    ]
    if user == "nobody":
        subprocess.run(["chmod", "-R", "a+rwX", str(root)], check=True)
        command = [*NOBODY, *command]
    env = {**os.environ, **env, "HOME": str(ex03["folder"]), "MPLCONFIGDIR": str(root)}
    env[source_rules.NO_ALLOWLIST] = "1"  # the allowlist would refuse the fork unrun
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    _nothing_runs_on(ex03["folder"])
    results = json.loads((root / "results" / "results.json").read_text())
    questions = {t["name"]: t["score"] for t in results["tests"]}
    _expect_three_lost(questions, _possible(ex03["built"]))
    messages = {t["name"]: t["output"] for t in results["tests"]}
    assert "processes:" in messages["q1"] and "memory:" in messages["q2"]
    assert "processes:" in messages["q3"]


def test_make_grade_zeroes_the_questions_and_the_next_submission_grades_normally(
    ex03, tmp_path, monkeypatch
):
    monkeypatch.setenv(source_rules.NO_ALLOWLIST, "1")  # the limits, not the allowlist
    with ex.Grader(ex03["built"].autograder_zip) as grader:
        bad = grader.grade(ex03["nb"], "bad", timeout=300)
        _nothing_runs_on(ex03["folder"])
        good = grader.grade(ex.make_submission(ex03["built"], []), "good", timeout=300)
    _expect_three_lost(bad.questions, _possible(ex03["built"]))
    assert good.status == "ok" and good.score == good.possible > 0, good.tests


def test_otter_run_refuses_and_names_the_two_ways_to_grade(ex03, tmp_path):
    otter = Path(sys.executable).with_name("otter")
    nbformat.write(ex03["nb"], tmp_path / "sub.ipynb")
    done = subprocess.run(
        [
            str(otter),
            "run",
            "-a",
            str(ex03["built"].autograder_zip),
            "-o",
            str(tmp_path),
        ]
        + [str(tmp_path / "sub.ipynb")],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "make grade" in done.stderr and "Gradescope" in done.stderr, done.stderr[
        -800:
    ]
    assert not (tmp_path / "results.json").exists()
    assert not (ex03["folder"] / "heartbeat").exists(), "the submission ran"


def test_a_detached_process_that_escaped_is_ended(tmp_path):
    """Without the child's limits, a double fork with setsid escapes the process group; the
    grader, a child subreaper, adopts it and `end_submission` ends it."""
    beat = tmp_path / "beat"
    script = textwrap.dedent(
        f"""
        import os, subprocess, sys, time
        from attnbook_grader import processes
        assert processes.become_subreaper()
        before = processes.grader_children()
        child = subprocess.Popen([sys.executable, "-c", '''
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                while True:
                    open({str(beat)!r}, "a").close(); os.utime({str(beat)!r}); time.sleep(0.05)
            os._exit(0)
        os.wait()
        time.sleep(60)
        '''])
        while not os.path.exists({str(beat)!r}):
            time.sleep(0.05)
        left = processes.end_submission(child.pid, set(), before, None)
        child.wait()
        print(len(left))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) >= 1, "the detached process was not found"
    stamp = beat.stat().st_mtime
    time.sleep(0.5)
    assert beat.stat().st_mtime == stamp, "the detached process still runs"


def test_a_cell_tagged_otter_ignore_is_not_run_when_grading(ex03, monkeypatch):
    """The closing "look at your result" cells carry otter-grader's `otter_ignore` tag: the
    grader runs them as empty cells on both paths (`submissions.cell_sources`), so what they
    draw or train costs no grading time. A cell that breaks an answer counts only untagged."""
    monkeypatch.setenv(source_rules.NO_ALLOWLIST, "1")
    nb = ex.make_submission(ex03["built"], [])  # the reference's answers
    tagged = [
        c for c in nb.cells if "otter_ignore" in c.get("metadata", {}).get("tags", [])
    ]
    assert len(tagged) == 1 and "attention_heatmaps" in tagged[0].source
    tagged[0].source = "multihead_attention = None\n" + tagged[0].source
    untagged = copy.deepcopy(nb)
    for cell in untagged.cells:
        cell.get("metadata", {}).get("tags", []).clear()
    with ex.Grader(ex03["built"].autograder_zip) as grader:
        skipped = grader.grade(nb, "tagged", timeout=300)
        run = grader.grade(untagged, "untagged", timeout=300)
    assert skipped.status == "ok" and skipped.score == skipped.possible > 0, (
        skipped.tests
    )
    assert run.score < run.possible, run.tests
