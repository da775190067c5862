"""Run the book where readers run it: every chapter and every exercise as a reader who
answers it with the worked solutions, executed top to bottom in the Python environment that
runs this command, as a reader's Jupyter would (nbclient and this interpreter's ipykernel; no
nbval, no comparison with the stored outputs). It needs nothing the setup cells do not
install (no otter assign, no jupytext).

    python -m tools.run_chapters                  # all chapters, then all exercises
    python -m tools.run_chapters 06 ex06          # a subset: names, or their number part
    python -m tools.run_chapters 01_attention     # exactly that notebook (not ex01_attention)
    python -m tools.run_chapters --timeout 900    # seconds per cell (default 600)
    python -m tools.run_chapters --list           # what would run

A notebook fails on an error, on anything a cell writes to stderr (a reader sees it as a red
box: warnings, progress bars, log lines), or on a `grader.check` that does not pass. An
exercise runs as the student notebook (exercises/student/NAME.ipynb) with each answer cell
replaced by the worked solution that defines the same name (exercises/solutions/NAME.ipynb);
its `grader.check` cells run the public checks shipped with the package. One line per
notebook (time and verdict), then a summary; the exit status is 1 if any notebook failed.
This is not part of `make test` (`make run-chapters`): the CI's matrix and the weekly Colab
job call it.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError
from tools import ToolError

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book"
STUDENT = ROOT / "exercises" / "student"
SOLUTIONS = ROOT / "exercises" / "solutions"


@dataclass
class Verdict:
    name: str
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


def _this_python_kernel(folder: Path) -> None:
    """Make the kernel named "python3" this interpreter, whatever kernelspecs the machine has
    (JUPYTER_PATH is searched before the user's and the system's folders)."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": argv,
                "display_name": "Python 3 (run_chapters)",
                "language": "python",
            }
        )
    )
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [str(folder), *filter(None, [os.environ.get("JUPYTER_PATH")])]
    )


def _text(output: dict) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    return str(output.get("data", {}).get("text/plain", ""))


def problems_in(nb: nbformat.NotebookNode) -> list[str]:
    """What a reader would see go wrong in an executed notebook: stderr output, and grader
    checks whose result is not a pass."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                found.append(
                    f"cell {index} wrote to stderr: {output.get('text', '').strip()[:300]!r}"
                )
        if "grader.check" in cell.source:
            text = "\n".join(_text(o) for o in cell.get("outputs", []))
            if "passed" not in text.lower() or "failed" in text.lower():
                found.append(
                    f"cell {index} ({cell.source.strip()}): {text.strip()[:300]!r}"
                )
    return found


def run_notebook(path: Path, timeout: int = 600, name: str | None = None) -> Verdict:
    """Execute one notebook in its own folder; its verdict."""
    verdict = Verdict(name or path.stem)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=False,
        # no TCP notice
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    try:
        client.execute()
    except CellTimeoutError as err:
        verdict.problems.append(
            f"a cell ran past {timeout} s: {str(err).strip()[-300:]}"
        )
    except CellExecutionError as err:
        lines = [line for line in str(err).strip().splitlines() if line.strip()]
        verdict.problems.append("error: " + " | ".join(lines[-3:])[:600])
    except Exception as err:  # the kernel died, would not start, ...
        verdict.problems.append(f"{type(err).__name__}: {err}"[:600])
    verdict.seconds = time.perf_counter() - start
    verdict.problems.extend(problems_in(nb))
    return verdict


def _defined(source: str) -> list[str]:
    """The names a cell defines at its top level (functions, classes, assignments)."""
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def answered_notebook(name: str, folder: Path) -> Path:
    """The student notebook of exercise `name` with each answer cell replaced by the worked
    solution that defines the same first name, written under `folder`."""
    student = nbformat.read(STUDENT / f"{name}.ipynb", as_version=4)
    solutions = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    answers = {}
    for cell in solutions.cells:
        if cell.cell_type == "code" and (names := _defined(cell.source)):
            answers[names[0]] = cell.source
    for cell in student.cells:
        if cell.cell_type == "code" and "..." in cell.source:
            names = _defined(cell.source)
            if names and names[0] in answers:
                cell.source = answers.pop(names[0])
    if answers:
        raise ToolError(
            f"{name}: no answer cell of the student notebook defines {sorted(answers)}"
        )
    path = folder / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(student, path)
    return path


def _matches(name: str, pattern: str) -> bool:
    """`pattern` names the notebook: its whole name, or the part before an underscore
    ("06" is 06_tiny_gpt, "ex06" is ex06_sampling; "01_attention" is not ex01_attention)."""
    return name == pattern or name.startswith(pattern + "_")


def targets(patterns: list[str]) -> list[tuple[str, Path | None]]:
    """(name, chapter path) for chapters, (name, None) for exercises, filtered by `patterns`."""
    found: list[tuple[str, Path | None]] = [
        (p.stem, p) for p in sorted(CHAPTERS.glob("*.ipynb"))
    ]
    found += [(p.stem, None) for p in sorted(STUDENT.glob("*.ipynb"))]
    if patterns:
        unknown = [p for p in patterns if not any(_matches(n, p) for n, _ in found)]
        if unknown:
            raise ToolError(
                f"no notebook is named {unknown}; have {[n for n, _ in found]}"
            )
        found = [t for t in found if any(_matches(t[0], p) for p in patterns)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "names",
        nargs="*",
        help="run only these notebooks: a whole name, or the part before an underscore",
    )
    parser.add_argument(
        "--timeout", type=int, default=600, help="seconds per cell (default 600)"
    )
    parser.add_argument(
        "--list", action="store_true", help="print what would run, run nothing"
    )
    args = parser.parse_args(argv)
    chosen = targets(args.names)
    if args.list:
        print("\n".join(name for name, _ in chosen))
        return 0
    import platform

    import torch

    print(
        f"Python {platform.python_version()} ({sys.executable}), torch {torch.__version__}, "
        f"{len(chosen)} notebooks, {args.timeout} s per cell",
        flush=True,
    )
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="run_chapters_") as tmp:
        _this_python_kernel(Path(tmp) / "jupyter")
        for name, path in chosen:
            if path is None:
                try:
                    path = answered_notebook(name, Path(tmp) / "exercises")
                except (ToolError, OSError, SyntaxError) as err:
                    verdict = Verdict(
                        name, problems=[f"could not answer the exercise: {err}"[:600]]
                    )
                    verdicts.append(verdict)
                    print(
                        f"{name:28s} {0:7.1f} s  FAILED\n    {verdict.problems[0]}",
                        flush=True,
                    )
                    continue
                name = f"{name} (answered)"
            verdict = run_notebook(path, args.timeout, name)
            verdicts.append(verdict)
            print(
                f"{verdict.name:28s} {verdict.seconds:7.1f} s  "
                f"{'passed' if verdict.passed else 'FAILED'}",
                flush=True,
            )
            for problem in verdict.problems:
                print(f"    {problem}", flush=True)
    failed = [v.name for v in verdicts if not v.passed]
    total = sum(v.seconds for v in verdicts)
    print(
        f"{len(verdicts) - len(failed)} of {len(verdicts)} notebooks passed in {total:.0f} s"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
