"""The notebooks' setup cell really installs `attnbook` where it is missing (Colab, fresh Binder),
before and after a release: from the first of three places that has the book's version.

1. the package registry (`attnbook==<version>`): here a PEP 503 index served on 127.0.0.1
   holding the wheel built from this checkout;
2. the wheel the published book serves (`<book>/dist/attnbook-<version>-py3-none-any.whl`):
   here the same wheel on 127.0.0.1, the index answering 404;
3. the repository at the book's commit (`git+<repo>@<commit>`): here a local git repository of
   this checkout, the index and the book answering 404 (built without build isolation: the
   stand-in index holds no setuptools).

pip's configuration is ignored, so nothing can come from anywhere else; the cell is generated
with the book's and the repository's URLs replaced by the local ones (tools.setup_cell), and
the notebooks hold the same cell with the published URLs (tests/test_config.py). In a fresh
virtual environment without `attnbook` (torch, otter etc. come from this interpreter's
site-packages through a `.pth` file) the first code cell runs, then, for the registry, every
notebook's top-level imports, in one process, as a kernel would run them. Where no place has
it, the cell fails with a message naming the three. The last test runs the exercise cell where
Colab's ipywidgets 7.7.1 is installed and checks that it is still there after (its wheels come
from .cache/colab-widgets/, fetched once).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response
from werkzeug.utils import send_from_directory
from wheel_helpers import (
    ROOT,
    TIMEOUT,
    checkout_copy,
    code_cells,
    fresh_venv,
    host_site_packages,
    top_level_imports,
)

from tools import setup_cell

pytestmark = pytest.mark.slow

NOTEBOOKS = sorted(ROOT.glob("book/*.ipynb")) + sorted(
    ROOT.glob("exercises/student/*.ipynb")
)
KINDS = {
    "chapter": sorted(ROOT.glob("book/*.ipynb")),
    "exercise": sorted(ROOT.glob("exercises/student/*.ipynb")),
}
CELLS = {
    "chapter": setup_cell.chapter_setup_cell,
    "exercise": setup_cell.exercise_setup_cell,
}


def run(
    python: Path, code: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without pip's settings or any virtual environment."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        and not k.startswith("PIP_")
    }
    return env | {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        **extra,
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of this checkout as `make book` builds the one the site
    serves (`python -m build --wheel --no-isolation`: no sdist first), alone in a folder: the
    local stand-in for PyPI."""
    work = tmp_path_factory.mktemp("build")
    source, out = checkout_copy(work / "checkout"), work / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    (built,) = sorted(out.glob("*.whl"))
    return built


@pytest.fixture(scope="module")
def places(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder served on 127.0.0.1 (yielded; the server's URL is in its `url` file):
    `registry/` and `book/` are filled by each test as the case needs."""
    root = tmp_path_factory.mktemp("served")

    def static(request: Request) -> Response:
        path = request.path.lstrip("/")
        path += "index.html" if path.endswith("/") else ""
        return send_from_directory(root, path, request.environ)

    httpd = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    httpd.expect_request(re.compile("/.*")).respond_with_handler(static)
    httpd.start()
    (root / "url").write_text(httpd.url_for("").rstrip("/"))
    try:
        yield root
    finally:
        httpd.clear()
        httpd.stop()


def serve(root: Path, wheel: Path, place: str) -> None:
    """Put the wheel where `place` ("registry", "book" or "nowhere") says, and only there."""
    for folder in ("registry", "book"):
        shutil.rmtree(root / folder, ignore_errors=True)
    if place == "registry":
        project = root / "registry" / "attnbook"
        project.mkdir(parents=True)
        shutil.copy(wheel, project / wheel.name)
        (project / "index.html").write_text(
            f'<!DOCTYPE html><html><body><a href="{wheel.name}">{wheel.name}</a>'
            "</body></html>"
        )
    elif place == "book":
        folder = root / "book" / setup_cell.SITE_WHEEL_FOLDER
        folder.mkdir(parents=True)
        shutil.copy(wheel, folder / wheel.name)


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(a local git repository of this checkout as a file:// URL, its commit)."""
    repo = checkout_copy(tmp_path_factory.mktemp("repo"))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@127.0.0.1"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the book"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return repo.as_uri(), commit


def test_there_are_notebooks() -> None:
    assert KINDS["chapter"], "no chapter notebook in book/"
    assert KINDS["exercise"], "no exercises/student notebook"


@pytest.mark.parametrize(
    "kind, place",
    [
        ("chapter", "registry"),
        ("exercise", "registry"),
        ("chapter", "book"),
        ("chapter", "repository"),
        ("chapter", "nowhere"),
    ],
)
def test_setup_cell_installs_attnbook(
    kind: str,
    place: str,
    wheel: Path,
    places: Path,
    repository: tuple[str, str],
    tmp_path: Path,
) -> None:
    """One fresh environment per case. For the registry, every notebook of the kind's own
    imports run after the cell (they share one setup cell), each in a namespace of its own."""
    url = (places / "url").read_text()
    repo, commit = repository
    serve(places, wheel, place)
    gone = f"{url}/no-such-repository" if place != "repository" else repo
    setup = CELLS[kind](book=f"{url}/book", repo=gone, ref=commit)
    env = clean_env(PIP_INDEX_URL=f"{url}/registry/", PIP_NO_BUILD_ISOLATION="0")
    imports = {}
    if place == "registry":
        for nb in KINDS[kind]:
            lines = [
                line for cell in code_cells(nb) for line in top_level_imports(cell)
            ]
            assert any("attnbook" in line for line in lines), (
                f"{nb.name} never imports attnbook"
            )
            imports[nb.name] = "\n".join(lines)

    start = time.monotonic()
    python = fresh_venv(tmp_path / "venv")
    before = run(
        python,
        textwrap.dedent("""
        import importlib.util
        assert importlib.util.find_spec("torch") is not None, "torch not visible through the .pth"
        assert importlib.util.find_spec("attnbook") is None, "attnbook is importable already"
        """),
        env,
    )
    assert before.returncode == 0, before.stderr

    script = "\n".join(
        [
            "exec(compile(SETUP, '<setup cell>', 'exec'), {})",
            "for name, code in IMPORTS.items():",
            "    exec(compile(code, f'<imports of {name}>', 'exec'), {})",
            "import sys, attnbook, importlib.metadata",
            "assert attnbook.__file__.startswith(sys.prefix), attnbook.__file__",
            "print(importlib.metadata.version('attnbook'))",
        ]
    )
    program = f"SETUP = {setup!r}\nIMPORTS = {imports!r}\n{script}"
    after = run(python, program, env)
    elapsed = time.monotonic() - start
    if place == "nowhere":
        assert after.returncode != 0
        message = after.stderr[after.stderr.index("RuntimeError") :]
        assert "could not install attnbook; tried" in message, after.stderr
        for tried in (
            f"attnbook=={setup_cell.version()}: ",
            f"{url}/book/dist/{wheel.name}: ",
            f"git+{gone}@{commit}: ",
        ):
            assert tried in message, message
        # each place with its real reason: git's own `fatal:` line, not pip's closing note
        git_line = next(ln for ln in message.splitlines() if ln.startswith("git+"))
        assert ": fatal: " in git_line, message
        assert "originates from a subprocess" not in message, message
        assert "set ATTNBOOK_SOURCE" in message.splitlines()[-1], message
        return
    assert after.returncode == 0, (
        f"{kind} notebooks after the setup cell:\n{after.stdout}\n{after.stderr}"
    )
    expected = {
        "registry": f"attnbook=={setup_cell.version()}",
        "book": f"{url}/book/dist/{wheel.name}",
        "repository": f"git+{repo}@{commit}",
    }[place]
    assert f"installed attnbook from {expected}" in after.stdout, after.stdout
    assert after.stdout.split()[-1] == wheel.name.split("-")[1], after.stdout
    print(
        f"{kind} ({place}): setup cell + {len(imports)} notebooks' imports: {elapsed:.1f} s"
    )


def test_attnbook_source_replaces_the_places(wheel: Path, tmp_path: Path) -> None:
    """ATTNBOOK_SOURCE (what CI's Colab check and a reader with a checkout use) is the only
    place tried when set: here the wheel's path, with no index at all."""
    python = fresh_venv(tmp_path / "venv")
    env = clean_env(PIP_NO_INDEX="1", ATTNBOOK_SOURCE=str(wheel))
    after = run(python, setup_cell.chapter_setup_cell(), env)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == f"installed attnbook from {wheel}", after.stdout


def test_a_failure_names_each_reason_and_what_to_do(tmp_path: Path) -> None:
    """Every place fails (a git URL of no repository, a wheel that is not there): the cell's
    error names git's cause and pip's error for each, cut to 200 characters, then says what
    the reader can do next."""
    python = fresh_venv(tmp_path / "venv")
    missing = tmp_path / "nowhere" / setup_cell.wheel_name()
    sources = f"git+{(tmp_path / 'no-repository').as_uri()}@main {missing}"
    env = clean_env(PIP_NO_INDEX="1", ATTNBOOK_SOURCE=sources)
    after = run(python, setup_cell.chapter_setup_cell(), env)
    assert after.returncode != 0
    lines = after.stderr[after.stderr.index("RuntimeError") :].splitlines()
    assert lines[0] == "RuntimeError: could not install attnbook; tried", lines
    git, wheel, advice = lines[1:4]
    assert git.startswith("git+file://") and ": fatal: " in git, git
    assert "does not appear to be a git repository" in git, git
    assert (
        wheel.startswith(f"{missing}: ERROR: ")
        and len(wheel) <= len(f"{missing}: ") + 200
    )
    assert advice.startswith("Check that this runtime can reach the internet"), advice
    assert (
        "ATTNBOOK_SOURCE" in advice
        and "originates from a subprocess" not in after.stderr
    )


# --- Colab's widgets: the exercise setup cell leaves ipywidgets 7.7.1 in place ----------------

# Colab's widget front end is 7.x: its ipywidgets 7.7.1, and its classic notebook server,
# through which 7.7.1's widgetsnbextension 3.6 depends on jupyter-client 7 (as on Colab)
COLAB_STACK = ["ipywidgets==7.7.1", "notebook==6.5.7"]
# hidden from the environment's view of this interpreter's packages: the grader, the needs
# Colab lacks and the widgets, so that the cell must install them (from CACHE/wheels)
HIDDEN = ("otter", "fica", "ipylab", "frontmatter", "python_frontmatter")
HIDDEN += ("ipywidgets", "widgetsnbextension")
CACHE = ROOT / ".cache" / "colab-widgets"


def _pip(python: Path, *args: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        [str(python), "-m", "pip", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    if done.returncode != 0:
        shutil.rmtree(CACHE, ignore_errors=True)
        pytest.skip(
            "cannot make the Colab-like environment: `pip "
            + " ".join(args)
            + "` failed (it needs the package index once; then .cache/colab-widgets/ "
            f"is reused offline):\n{done.stderr[-2000:]}"
        )


def colab_like() -> tuple[Path, Path]:
    """(a virtual environment with COLAB_STACK, a folder of wheels), made once from the package
    index (pip's own configuration) into .cache/colab-widgets/ and reused offline. The
    environment sees this interpreter's packages, less HIDDEN, through a `.pth` file; pip
    resolved COLAB_STACK against them (so ipykernel 6 and jupyter-client 7 shadow the
    interpreter's). The wheels: what HIDDEN hides that the cell installs (the grader, fica,
    ipylab, python-frontmatter) and, at the versions the lock pins, ipywidgets 8 and its
    widgetsnbextension, which a cell that let pip upgrade the widgets would get."""
    groups = [  # one pip call each: a call resolves its names together, one version each
        [setup_cell.grader_requirement()]
        + [setup_cell.locked(n) for n in ("fica", "ipylab", "python-frontmatter")],
        [setup_cell.locked(n) for n in ("ipywidgets", "widgetsnbextension")],
    ]
    wanted = COLAB_STACK + [name for group in groups for name in group]
    # the environment links this interpreter's packages: made again when they change
    wanted += sorted(p.name for f in host_site_packages() for p in Path(f).iterdir())
    stamp = CACHE / "wanted.txt"
    base, wheels = CACHE / "venv", CACHE / "wheels"
    if stamp.is_file() and stamp.read_text().split() == wanted:
        return base, wheels
    shutil.rmtree(CACHE, ignore_errors=True)
    CACHE.mkdir(parents=True)
    python = fresh_venv(base, hide=HIDDEN)
    _pip(python, "install", "--quiet", *COLAB_STACK)
    for group in groups:
        _pip(
            python,
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
            str(wheels),
            *group,
        )
    stamp.write_text("\n".join(wanted) + "\n")
    return base, wheels


CHECK_AFTER_THE_CELL = """
import importlib.metadata, sys
import ipywidgets, otter
assert otter.__file__.startswith(sys.prefix), f"otter not installed by the cell: {otter.__file__}"
print("ipywidgets", importlib.metadata.version("ipywidgets"), ipywidgets.__version__)
import numpy as np
from attnbook.exercise_checks import tests_dir
grader = otter.Notebook(tests_dir=tests_dir("ex01_attention"))
def scores_to_weights(scores):
    scores = np.asarray(scores, dtype=float)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
right = grader.check("q1")
def scores_to_weights(scores):  # no shift and the wrong axis
    e = np.exp(np.asarray(scores, dtype=float))
    return e / e.sum(axis=0, keepdims=True)
wrong = grader.check("q1")
print("check", right.passed_all, wrong.passed_all)
"""


def test_the_exercise_cell_keeps_colab_widgets(wheel: Path, tmp_path: Path) -> None:
    """In a copy of the Colab-like environment (ipywidgets 7.7.1, neither otter nor attnbook),
    the exercise setup cell installs both, ipywidgets is still 7.7.1 after it, and
    `grader.check` works there: it passes a right answer to exercise 1's q1 and fails a wrong
    one. The control: pip, asked for otter-grader as the cell asked before, would install
    ipywidgets 8 from the same wheels. Python, torch and NumPy are this interpreter's, not
    Colab's."""
    base, wheels = colab_like()
    start = time.monotonic()
    shutil.copytree(base, tmp_path / "venv", symlinks=True)
    python = tmp_path / "venv" / "bin" / "python"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        and not k.startswith("PIP_")
    }
    env |= {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": f"{wheel.parent} {wheels}",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
    }
    versions = run(
        python,
        "import sys, importlib.util, ipywidgets; print(ipywidgets.__version__, "
        "importlib.util.find_spec('otter'), importlib.util.find_spec('attnbook'), "
        "ipywidgets.__file__.startswith(sys.prefix))",
        env,
    )
    assert versions.stdout.split() == ["7.7.1", "None", "None", "True"], versions

    report = subprocess.run(
        [str(python), "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-"]
        + [setup_cell.grader_requirement()],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert report.returncode == 0, report.stderr
    would = {
        item["metadata"]["name"]: item["metadata"]["version"]
        for item in json.loads(report.stdout)["install"]
    }
    assert would.get("ipywidgets", "").startswith("8."), (
        f"the control failed: otter with its dependencies would install {would}"
    )

    setup = code_cells(KINDS["exercise"][0])[0]
    assert setup == setup_cell.exercise_setup_cell(), "the exercise setup cell is stale"
    after = run(python, f"exec({setup!r})\n{CHECK_AFTER_THE_CELL}", env)
    elapsed = time.monotonic() - start
    assert after.returncode == 0, f"{after.stdout}\n{after.stderr}"
    assert "ERROR" not in after.stderr, after.stderr
    lines = after.stdout.splitlines()
    assert "ipywidgets 7.7.1 7.7.1" in lines, after.stdout
    assert "check True False" in lines, after.stdout
    print(
        f"Colab widgets: copy of the environment, setup cell, two checks: {elapsed:.1f} s"
    )
