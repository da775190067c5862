"""Fast consistency checks of the configuration (no browser, no build, no kernel).

The repository URL lives in one place, `_config.yml` repository.url; everything that needs it
(launch buttons, setup cells, package metadata, README, autograder) must agree with it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def load_tool(name: str) -> ModuleType:
    """Import `tools/<name>.py` from this checkout (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"_tools_{name}", ROOT / "tools" / f"{name}.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


setup_cell = load_tool("setup_cell")
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
URL: str = CONFIG["repository"]["url"]


def first_code_cell(notebook: Path) -> str:
    cells = json.loads(notebook.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code, f"{notebook} has no code cell"
    source = code[0]["source"]
    return "".join(source) if isinstance(source, list) else source


def notebooks(folder: str) -> list[Path]:
    return sorted((ROOT / folder).glob("*.ipynb"))


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# --- the repository URL ----------------------------------------------------------------------


def test_repository_url_is_a_github_repository() -> None:
    assert URL.startswith("https://github.com/") and URL.count("/") == 4, URL
    assert not URL.endswith((".git", "/")), URL
    assert setup_cell.repository_url() == URL  # the setup cells read the same value


def test_launch_buttons() -> None:
    buttons = CONFIG["launch_buttons"]
    assert buttons["colab_url"] == "https://colab.research.google.com"
    assert buttons["binderhub_url"] == "https://mybinder.org"
    assert CONFIG["repository"]["branch"] == "launch"  # the launch copies' branch
    assert CONFIG["repository"]["path_to_book"] == ""


def test_pyproject_homepage() -> None:
    assert PYPROJECT["project"]["urls"]["Homepage"] == URL


def test_readme_mentions_url() -> None:
    assert URL in (ROOT / "README.md").read_text(), f"README.md should link to {URL}"


BOOK_URL: str = CONFIG["html"]["baseurl"]


def test_book_url_lives_in_config_and_is_used() -> None:
    """The published book's URL: one place (html.baseurl), quoted by the README and, through
    the myst substitution, by the intro page."""
    assert BOOK_URL.startswith("https://") and BOOK_URL.endswith("/"), BOOK_URL
    assert CONFIG["sphinx"]["config"]["myst_substitutions"]["book_url"] == BOOK_URL
    assert BOOK_URL in (ROOT / "README.md").read_text()
    # PyPI's link to the book
    assert PYPROJECT["project"]["urls"]["Documentation"] == BOOK_URL
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "{{ book_url }}" in intro and BOOK_URL not in intro


def locked_pins() -> dict[str, list[str]]:
    """{name: [version ; marker, ...]} of requirements/lock.txt (one line per pin)."""
    pins: dict[str, list[str]] = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        if line[:1].isalnum():
            name, _, rest = line.rstrip(" \\").partition("==")
            pins.setdefault(canonicalize_name(name), []).append(rest)
    return pins


def test_theme_is_pinned_below_the_broken_phone_menu() -> None:
    """sphinx-book-theme 1.3.0 + pydata-sphinx-theme 0.17.1: the phone menu does nothing."""
    pins = locked_pins()
    assert pins["sphinx-book-theme"] == ["1.2.0"] and pins["pydata-sphinx-theme"] == [
        "0.16.1"
    ], pins


def test_the_lock_is_installed_whole_but_for_the_iri_grammar() -> None:
    """`make setup` installs the lock without resolving it again (--no-deps), less
    rfc3987-syntax and lark (the Makefile's LOCK_LEFT_OUT: 3.2 s of import in every process
    that imports nbformat). So the lock must hold everything else: this environment, made
    from it, has every installed package's requirements met (`uv pip check`), and jsonschema
    and nbformat still validate a notebook without the grammar."""
    import subprocess

    import nbformat

    pins = locked_pins()
    left_out = re.search(
        r"^LOCK_LEFT_OUT := (.*)$", (ROOT / "Makefile").read_text(), re.M
    )
    assert left_out and left_out.group(1).split() == ["rfc3987-syntax", "lark"]
    assert not {"rfc3987-syntax", "lark"} & set(pins), "make lock must leave them out"
    uv = Path(sys.executable).with_name("uv")
    if not uv.is_file():
        pytest.skip(
            "not run from the environment `make setup` builds (no uv beside python)"
        )
    check = subprocess.run(
        [str(uv), "pip", "check", "--python", sys.executable],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    nbformat.validate(nbformat.read(ROOT / "book" / "01_attention.ipynb", as_version=4))


def test_lock_pins_the_cpu_build_of_torch_and_hashes_everything() -> None:
    """Linux gets torch's `+cpu` wheel (no CUDA libraries), the other platforms PyPI's; every
    pin carries hashes, and the Linux torch entry one per Python the Makefile accepts."""
    pins = locked_pins()
    assert sorted(pins["torch"]) == [
        "2.13.0 ; sys_platform != 'linux'",
        "2.13.0+cpu ; sys_platform == 'linux'",
    ], pins["torch"]
    assert not [name for name in pins if name.startswith("nvidia-") or name == "triton"]
    assert "attnbook" not in pins, "the lock must not pin the checkout itself"
    text = (ROOT / "requirements" / "lock.txt").read_text()
    entries = re.split(
        r"\n(?=[a-z0-9])", text[text.index("\n", text.index("make lock")) :].strip()
    )
    unhashed = [e.splitlines()[0] for e in entries if "--hash=sha256:" not in e]
    assert not unhashed, f"pins without hashes: {unhashed}"
    linux = next(e for e in entries if e.startswith("torch==2.13.0+cpu"))
    listing = (ROOT / "requirements" / "torch-cpu.sha256").read_text()
    for python in ("cp311", "cp312", "cp313"):
        digest = re.search(
            rf"(?m)^([0-9a-f]{{64}})  torch-2\.13\.0\+cpu-{python}-{python}-manylinux_2_28_x86_64",
            listing,
        )
        assert digest and f"--hash=sha256:{digest[1]}" in linux, python


def test_autograder_installs_this_release_and_its_engine() -> None:
    """The zip's requirements pin the course and its grading engine at this release (the
    zip swaps both pins for the wheels built from the checkout: tests/test_exercises.py)."""
    lines = (
        (ROOT / "exercises" / "autograder-requirements.txt").read_text().splitlines()
    )
    version = PYPROJECT["project"]["version"]
    assert (
        f"attnbook=={version}" in lines
        and f"attnbook-grader=={version}" in lines
        and setup_cell.grader_requirement() in lines
    ), lines
    assert setup_cell.release_requirement() == f"attnbook=={version}"
    assert setup_cell.engine_requirement() == f"attnbook-grader=={version}"


def test_the_grading_engine_is_released_with_the_course() -> None:
    """grader/pyproject.toml: the course's version, the course package of that version, and
    otter as the course's `exercises` extra pins it (tools/release_files.py writes it)."""
    engine = tomllib.loads((ROOT / "grader" / "pyproject.toml").read_text())["project"]
    version = PYPROJECT["project"]["version"]
    assert engine["name"] == "attnbook-grader"
    assert engine["version"] == version, (engine["version"], version)
    needs = {canonicalize_name(Requirement(r).name): r for r in engine["dependencies"]}
    assert needs.keys() == {"attnbook", "otter-grader"}, needs
    assert Requirement(needs["attnbook"]).specifier == SpecifierSet(f"=={version}")
    (otter,) = PYPROJECT["project"]["optional-dependencies"]["exercises"]
    assert Requirement(needs["otter-grader"]) == Requirement(otter), (needs, otter)
    assert engine["requires-python"] == PYPROJECT["project"]["requires-python"]
    release_files = load_tool("release_files")
    text = (ROOT / "grader" / "pyproject.toml").read_text()
    assert release_files.engine_project(text, version) == text
    moved = release_files.engine_project(text, "9.8.7")
    assert 'version = "9.8.7"' in moved and '"attnbook==9.8.7"' in moved


def test_setup_cells_install_this_release() -> None:
    """A notebook saved from this book installs the package of the book's release: from
    PyPI, else the wheel the published book serves, else the repository (ATTNBOOK_SOURCE
    may replace the three); the exercises also the grader the lock pins."""
    version = PYPROJECT["project"]["version"]
    otter = locked_pins()["otter-grader"]
    assert setup_cell.grader_requirement() == f"otter-grader=={otter[0]}", otter
    book = CONFIG["html"]["baseurl"].rstrip("/")
    for cell in (setup_cell.chapter_setup_cell(), setup_cell.exercise_setup_cell()):
        assert f'"attnbook=={version}",' in cell, cell
        assert f'book = "{book}"' in cell and f'repo = "{URL}"' in cell, cell
        assert f"/dist/attnbook-{version}-py3-none-any.whl" in cell, cell
        assert 'os.environ.get("ATTNBOOK_SOURCE", "").split()' in cell, cell
        assert max(len(line) for line in cell.splitlines()) <= 88, (
            "the page shows 88 columns"
        )
    exercise = setup_cell.exercise_setup_cell()
    assert f'subprocess.run([*alone, "otter-grader=={otter[0]}"]' in exercise, exercise
    assert 'alone = [*pip, "--no-deps", "--no-warn-conflicts"]' in exercise, exercise


def test_installed_package_reports_the_pyproject_version() -> None:
    import attnbook
    import attnbook_grader

    assert attnbook.__version__ == PYPROJECT["project"]["version"]
    assert attnbook_grader.__version__ == PYPROJECT["project"]["version"]


def test_setup_cell_source_does_not_hard_code_the_url() -> None:
    assert URL not in (ROOT / "tools" / "setup_cell.py").read_text()


# --- the standard first code cell of every notebook ------------------------------------------

CHAPTERS = notebooks("book")
EXERCISES = notebooks("exercises/student") + notebooks("exercises/masters")


@pytest.mark.parametrize("folder", ["book", "exercises/student", "exercises/masters"])
def test_there_are_notebooks(folder: str) -> None:
    assert notebooks(folder), f"no notebook in {folder}/"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=rel)
def test_chapter_setup_cell(notebook: Path) -> None:
    assert first_code_cell(notebook) == setup_cell.chapter_setup_cell(), (
        f"the first code cell of {rel(notebook)} must be tools.setup_cell.chapter_setup_cell()"
    )


@pytest.mark.parametrize("notebook", EXERCISES, ids=rel)
def test_exercise_setup_cell(notebook: Path) -> None:
    assert first_code_cell(notebook) == setup_cell.exercise_setup_cell(), (
        f"the first code cell of {rel(notebook)} must be tools.setup_cell.exercise_setup_cell()"
    )


# --- _config.yml and _toc.yml ----------------------------------------------------------------


def test_build_settings() -> None:
    assert CONFIG["execute"]["raise_on_error"] is True
    extensions = CONFIG["parse"]["myst_enable_extensions"]
    assert {"dollarmath", "amsmath"} <= set(extensions), extensions
    assert {".venv", "_build"} <= set(CONFIG["exclude_patterns"]), CONFIG[
        "exclude_patterns"
    ]
    assert CONFIG["only_build_toc_files"] is True


def test_mathjax_is_served_from_the_book() -> None:
    """_config.yml serves exactly what tools/fetch_mathjax.py puts in place."""
    fetch = load_tool("fetch_mathjax")
    sphinx = CONFIG["sphinx"]["config"]
    static = [ROOT / p for p in sphinx["html_static_path"]]
    assert fetch.DEST.parent in static, (fetch.DEST, static)
    assert sphinx["mathjax_path"] == f"{fetch.DEST.name}/{fetch.ENTRY}"


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            files.extend([node["file"]] if "file" in node else [])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return list(dict.fromkeys(files))


@pytest.mark.parametrize("entry", toc_files())
def test_toc_file_exists(entry: str) -> None:
    candidates = (
        [ROOT / entry]
        if Path(entry).suffix in (".md", ".ipynb")
        else [ROOT / f"{entry}.md", ROOT / f"{entry}.ipynb"]
    )
    assert any(p.is_file() for p in candidates), (
        f"_toc.yml lists {entry}, which does not exist"
    )


# --- environment.yml (Binder) agrees with pyproject.toml -------------------------------------


def environment() -> tuple[list[str], dict[str, Requirement]]:
    """(conda dependencies, pip requirements by canonical name) of environment.yml."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["name"] == "attnbook" and env["channels"] == ["conda-forge"], env
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    assert len(pip_sections) == 1, "environment.yml needs one pip: section"
    reqs = [Requirement(line) for line in pip_sections[0] if not line.startswith("-")]
    return conda, {canonicalize_name(r.name): r for r in reqs}


def pyproject_requirements() -> list[Requirement]:
    project = PYPROJECT["project"]
    lines = project["dependencies"] + project["optional-dependencies"]["exercises"]
    return [Requirement(line) for line in lines]


def test_environment_python() -> None:
    conda, _ = environment()
    assert "python=3.11" in conda and "pip" in conda, conda
    assert "3.11" in SpecifierSet(PYPROJECT["project"]["requires-python"])


@pytest.mark.parametrize("requirement", pyproject_requirements(), ids=str)
def test_environment_has_dependency(requirement: Requirement) -> None:
    _, pip = environment()
    name = canonicalize_name(requirement.name)
    assert name in pip, f"environment.yml lacks {requirement}"
    assert pip[name].specifier == requirement.specifier, (
        f"environment.yml has {pip[name]}, pyproject.toml has {requirement}"
    )


def test_environment_has_nothing_else() -> None:
    _, pip = environment()
    expected = {canonicalize_name(r.name) for r in pyproject_requirements()}
    assert set(pip) <= expected, f"not in pyproject.toml: {sorted(set(pip) - expected)}"
