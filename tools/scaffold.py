#!/usr/bin/env python3
"""Start a new chapter or exercise with the course's standard opening.

    python -m tools.scaffold chapter 02_scaling "Scaling"          (make chapter NAME=… TITLE=…)
    python -m tools.scaffold exercise ex02_scaling "Scaling"       (make exercise NAME=… TITLE=…)

A chapter gets book/NAME.ipynb (label, title, overview, the setup cell, imports, summary,
link to its exercise), executed, and an entry in _toc.yml. An exercise gets a master notebook
exercises/masters/NAME.ipynb with one example question (solution, a public and a hidden
test), an entry in _toc.yml, and its student notebook and public checks via `build`. Then:
write the content, add its classic wrong answers to exercises/wrong_answers/NAME.py, and run
`make exercises-publish` and `make test`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from tools.setup_cell import chapter_setup_cell, exercise_setup_cell
from tools import ToolError

ROOT = Path(__file__).resolve().parents[1]
KERNEL = {
    "kernelspec": {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    },
    "language_info": {"name": "python"},
}


def add_to_toc(caption: str, entry: str) -> None:
    """Append `- file: entry` to the part with this caption in _toc.yml."""
    toc = (ROOT / "_toc.yml").read_text()
    if f"file: {entry}\n" in toc:
        return
    lines = toc.splitlines(keepends=True)
    start = next(
        i for i, line in enumerate(lines) if line.strip() == f"- caption: {caption}"
    )
    end = start + 1
    while end < len(lines) and not lines[end].lstrip().startswith("- caption:"):
        end += 1
    lines.insert(end, f"      - file: {entry}\n")
    (ROOT / "_toc.yml").write_text("".join(lines))


def execute(path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter",
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--inplace",
            str(path),
        ],
        check=True,
    )


def chapter(name: str, title: str) -> None:
    path = ROOT / "book" / f"{name}.ipynb"
    if path.exists():
        raise ToolError(f"{path.relative_to(ROOT)} exists already")
    label = re.sub(r"^\d+_", "", name)
    nb = new_notebook(
        metadata=KERNEL,
        cells=[
            new_markdown_cell(
                f"({label})=\n# {title}\n\n## Overview\n\nWhat this chapter does, and what "
                "the reader needs from earlier chapters."
            ),
            new_code_cell(chapter_setup_cell(), metadata={"tags": ["hide-cell"]}),
            new_code_cell("import numpy as np\nimport torch\n\nimport attnbook"),
            new_markdown_cell(
                "## Summary\n\n- …\n\n## Exercise\n\nThe exercise of this chapter: …"
            ),
        ],
    )
    nbformat.write(nb, path)
    execute(path)
    add_to_toc("Chapters", f"book/{name}")
    print(f"wrote {path.relative_to(ROOT)} and added it to _toc.yml")


def exercise(name: str, title: str) -> None:
    path = ROOT / "exercises" / "masters" / f"{name}.ipynb"
    if path.exists():
        raise ToolError(f"{path.relative_to(ROOT)} exists already")
    config = (
        f"# ASSIGNMENT CONFIG\nname: {name}\ninit_cell: false\ncheck_all_cell: true\n"
        "export_cell: false\ntests:\n  files: true\n  ok_format: false\ngenerate:\n"
        "  show_hidden: true\nrequirements: ../autograder-requirements.txt\n"
        "overwrite_requirements: false"
    )
    nb = new_notebook(
        metadata=KERNEL,
        cells=[
            new_raw_cell(config),
            new_markdown_cell(
                f"# {title}\n\nWhat the student will write, and how the checks work."
            ),
            new_code_cell(exercise_setup_cell()),
            new_code_cell(
                "import numpy as np\nimport otter\nfrom attnbook.exercise_checks import tests_dir\n\n"
                f'grader = otter.Notebook(tests_dir=tests_dir("{name}"))'
            ),
            new_raw_cell("# BEGIN QUESTION\nname: q1\npoints: 2"),
            new_markdown_cell(
                "## Question 1\n\nWrite `double(x)`, which returns `2 * x`."
            ),
            new_raw_cell("# BEGIN SOLUTION"),
            new_code_cell(
                "def double(x):\n    # BEGIN SOLUTION\n    return 2 * x\n    # END SOLUTION"
            ),
            new_raw_cell("# END SOLUTION"),
            new_raw_cell("# BEGIN TESTS"),
            new_code_cell(
                "def test_small(double):\n    assert double(1) == 2\n\ntest_small(double)"
            ),
            new_code_cell(
                "# HIDDEN\ndef test_negative(double):\n    assert double(-3) == -6\n\n"
                "test_negative(double)"
            ),
            new_raw_cell("# END TESTS"),
            new_raw_cell("# END QUESTION"),
        ],
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    (ROOT / "src" / "attnbook" / "exercise_checks" / name).mkdir(
        parents=True, exist_ok=True
    )
    execute(path)
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "exercises.py"), "publish", name],
        check=True,
    )
    add_to_toc("Exercises", f"exercises/student/{name}")
    add_to_toc("Worked solutions", f"exercises/solutions/{name}")
    wrong = ROOT / "exercises" / "wrong_answers" / f"{name}.py"
    if not wrong.exists():
        wrong.write_text(
            f'"""Classic wrong answers to {name}, as (old, new) edits of the reference '
            'solution;\n`make exercises-prove` needs at least two."""\n\nWRONG_ANSWERS = {}\n'
        )
    print(
        f"wrote {path.relative_to(ROOT)}, its student notebook, and added it to _toc.yml;\n"
        f"now add its classic wrong answers to exercises/wrong_answers/{name}.py"
    )


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in {"chapter", "exercise"}:
        raise SystemExit(__doc__)
    try:
        {"chapter": chapter, "exercise": exercise}[sys.argv[1]](
            sys.argv[2], sys.argv[3]
        )
    except ToolError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
