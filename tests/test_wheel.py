"""The wheel readers install from PyPI, built and installed as the release workflow does.

`python -m build` makes the sdist and the wheel from a copy of this checkout; `twine check`
passes on both; the wheel installs (without dependencies, no index) into a fresh virtual
environment that sees this interpreter's torch & co. but not `attnbook`; there it reports the
pyproject version, carries its package data (every public exercise check, the stored grids
of chapter 7, the shipped corpus where the checkout has one) and a chapter's own imports work
from the installed wheel, not from src/. The grading engine (grader/, `attnbook-grader`) is
built the same way: its wheel holds the engine only, the course's wheel none of it, and the
two install together, the engine's pin of attnbook met by the course's wheel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest
from wheel_helpers import (
    ROOT,
    TIMEOUT,
    build_distributions,
    code_cells,
    fresh_venv,
    top_level_imports,
)

pytestmark = pytest.mark.slow

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
SRC = ROOT / "src"
ENGINE_SRC = ROOT / "grader" / "src"
# the files that are not Python modules and must travel in the wheel
DATA = sorted(
    str(p.relative_to(SRC))
    for pattern in (
        "attnbook/exercise_checks/*/*.py",
        "attnbook/cars/chapter_grid*.json",
        "attnbook/data/*",
    )
    for p in SRC.glob(pattern)
    if p.is_file()
)


@pytest.fixture(scope="module")
def distributions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_distributions(tmp_path_factory.mktemp("build"))


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_distributions(tmp_path_factory.mktemp("engine"), "grader")


def test_names_carry_the_version(distributions: tuple[Path, Path]) -> None:
    sdist, wheel = distributions
    assert sdist.name == f"attnbook-{VERSION}.tar.gz", sdist.name
    assert wheel.name == f"attnbook-{VERSION}-py3-none-any.whl", wheel.name


def test_twine_check_passes(
    distributions: tuple[Path, Path], engine: tuple[Path, Path]
) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "check",
            "--strict",
            *map(str, [*distributions, *engine]),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_wheel_holds_the_package_and_its_data_only(
    distributions: tuple[Path, Path],
) -> None:
    _, wheel = distributions
    names = zipfile.ZipFile(wheel).namelist()
    modules = sorted(
        str(p.relative_to(SRC))
        for p in (SRC / "attnbook").rglob("*.py")
        if "__pycache__" not in p.parts
    )
    assert set(modules) | set(DATA) <= set(names), sorted(
        set(modules) | set(DATA) - set(names)
    )
    assert any(n.startswith("attnbook/exercise_checks/ex01_") for n in names), (
        "no exercise checks"
    )
    assert any(n.startswith("attnbook/cars/chapter_grid") for n in names), (
        "no stored grids"
    )
    stray = [
        n
        for n in names
        if not n.startswith(("attnbook/", f"attnbook-{VERSION}.dist-info/"))
    ]
    assert not stray, f"files outside the package: {stray}"


def test_sdist_rebuilds_the_same_package(distributions: tuple[Path, Path]) -> None:
    sdist, wheel = distributions
    with tarfile.open(sdist) as tar:
        in_sdist = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md"} <= in_sdist
    package = {
        n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("attnbook/")
    }
    assert {f"src/{n}" for n in package} <= in_sdist, sorted(
        {f"src/{n}" for n in package} - in_sdist
    )


def offline_env() -> dict[str, str]:
    """This process's environment for a fresh virtual environment's pip: no inherited
    Python paths, pip's configuration ignored, no package index."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    return env | {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def test_installed_wheel_works(
    distributions: tuple[Path, Path], tmp_path: Path
) -> None:
    """Install the wheel alone, then check version, data and a chapter's imports from there."""
    _, wheel = distributions
    python = fresh_venv(tmp_path / "venv")
    env = offline_env()
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert install.returncode == 0, install.stderr

    chapters = sorted(ROOT.glob("book/[0-9]*.ipynb"))
    # the most imports, the corpus
    chapter = next(nb for nb in chapters if "06_" in nb.name)
    imports = "\n".join(
        line for cell in code_cells(chapter) for line in top_level_imports(cell)
    )
    check = textwrap.dedent(f"""
        import importlib.metadata, sys
        from importlib.resources import files
        import attnbook
        assert attnbook.__file__.startswith(sys.prefix), attnbook.__file__
        assert attnbook.__version__ == importlib.metadata.version("attnbook") == {VERSION!r}
        root = files("attnbook")
        missing = [p for p in {[p.removeprefix("attnbook/") for p in DATA]!r} if not root.joinpath(p).is_file()]
        assert not missing, missing
        from attnbook.exercise_checks import tests_dir
        assert tests_dir("ex01_attention").startswith(sys.prefix)
        exec(compile({imports!r}, "<imports of {chapter.name}>", "exec"), {{}})
        import json
        print(json.dumps([m.__file__ for m in list(sys.modules.values())
                          if m.__name__.startswith("attnbook") and getattr(m, "__file__", None)]))
        """)
    result = subprocess.run(
        [str(python), "-c", check],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(loaded) > 3 and all(str(SRC) not in f for f in loaded), loaded


def test_the_engine_is_a_wheel_of_its_own(
    distributions: tuple[Path, Path], engine: tuple[Path, Path]
) -> None:
    """The engine's wheel holds its modules only, at the course's version; the course's
    wheel holds none of them."""
    sdist, wheel = engine
    assert sdist.name == f"attnbook_grader-{VERSION}.tar.gz", sdist.name
    assert wheel.name == f"attnbook_grader-{VERSION}-py3-none-any.whl", wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {
        str(p.relative_to(ENGINE_SRC))
        for p in (ENGINE_SRC / "attnbook_grader").glob("*.py")
    }
    assert {"attnbook_grader/engine.py", "attnbook_grader/sandbox.py"} <= modules
    dist_info = f"attnbook_grader-{VERSION}.dist-info/"
    assert modules <= names and all(
        n in modules or n.startswith(dist_info) for n in names
    ), sorted(names ^ modules)
    course = zipfile.ZipFile(distributions[1]).namelist()
    stems = {Path(m).name for m in modules} - {"__init__.py"}
    leaked = [
        n
        for n in course
        if n.startswith("attnbook_grader/")
        or (n.startswith("attnbook/exercise_checks/") and Path(n).name in stems)
    ]
    assert not leaked, leaked


def test_the_course_and_its_engine_install_together(
    distributions: tuple[Path, Path], engine: tuple[Path, Path], tmp_path: Path
) -> None:
    """Both wheels in one pip command, dependencies resolved with no index (the rest is
    this interpreter's): what an autograder zip's environment does. The engine then
    imports from the installed wheels, at the course's version."""
    python = fresh_venv(tmp_path / "venv")
    env = offline_env()
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet"]
        + [str(distributions[1]), str(engine[1])],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    check = textwrap.dedent(f"""
        import importlib.metadata, sys
        import attnbook, attnbook_grader
        from attnbook_grader import autograder, engine, otter_plugin
        for module in (attnbook, attnbook_grader, autograder, engine):
            assert module.__file__.startswith(sys.prefix), module.__file__
        assert attnbook_grader.__version__ == attnbook.__version__ == {VERSION!r}
        assert "attnbook=={VERSION}" in importlib.metadata.requires("attnbook-grader")
        assert otter_plugin.PLUGIN == "attnbook_grader.otter_plugin.EngineOnly"
        """)
    result = subprocess.run(
        [str(python), "-c", check],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
