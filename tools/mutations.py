"""Mutation check of the unit tests: every one-line change below must make a test fail.

Each mutation edits one line of a temporary copy of `src/attnbook` and of the grading engine
`grader/src/attnbook_grader` (the text must occur exactly once); the unit tests then run
against that copy (it comes first on PYTHONPATH, so it shadows the installed packages) and stop at the first failure.
A mutation of a module of `tools/` (path "tools/NAME.py") edits a copy of that one file, which
replaces the module in the test process before pytest starts (the rest of `tools` is the checkout's). The table names the test that
caught each mutation; a mutation no test catches is a gap in the tests, and the exit status is
1. Run from the repository root (a few minutes on 2 cores):

    python -m tools.mutations            # all of them
    python -m tools.mutations --only alibi-drops-padding-mask --only sqrt-c-scaling-removed
    python -m tools.mutations --changed main   # those whose file changed since main

A test can go blind to a listed mutant when the code it mutates changes (a row that no longer
reaches the line): `--changed BASE` (`make mutations-changed`) re-runs the mutations of every
file changed since BASE's merge base, committed or not.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import (
    mutations_grading,
    mutations_grading2,
    mutations_induction,
    mutations_models,
    mutations_recall,
    mutations_serving,
    mutations_tools,
)
from tools.mutation_spec import Mutation

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "attnbook"
GRADER = ROOT / "grader" / "src" / "attnbook_grader"
# The unit tests of the package, the fast and most telling first (pytest stops at a failure).
TESTS = [
    "tests/test_golden.py",
    "tests/test_attend.py",
    "tests/test_masks.py",
    "tests/test_multihead.py",
    "tests/test_attention.py",
    "tests/test_gqa.py",
    "tests/test_gpt.py",
    "tests/test_positional.py",
    "tests/test_train.py",
    "tests/test_ngram.py",
    "tests/test_cars.py",
    "tests/test_lookup.py",
    "tests/test_cross.py",
    "tests/test_bad_inputs_ch1.py",
    "tests/test_memory.py",
    "tests/test_blockwise.py",
    "tests/test_bad_inputs.py",
    "tests/test_properties_attention.py",
    "tests/test_properties_multihead.py",
    "tests/test_properties_positional.py",
    "tests/test_paged.py",
    "tests/test_serving.py",
    "tests/test_bad_inputs_ch9.py",
    "tests/test_bad_inputs_serving.py",
    "tests/test_import_graph.py",
    # chapter 9's caches, streaming and latent attention
    "tests/test_caches.py",
    "tests/test_kvquant.py",
    "tests/test_streaming.py",
    "tests/test_latent.py",
    # chapter 8's block around attention
    "tests/test_layers.py",
    "tests/test_bad_inputs_layers.py",
]


# the table, in modules by the code it mutates
MUTATIONS = [
    *mutations_models.MUTATIONS,
    *mutations_serving.MUTATIONS,
    *mutations_grading.MUTATIONS,
    *mutations_grading2.MUTATIONS,
    *mutations_recall.MUTATIONS,
    *mutations_induction.MUTATIONS,
    *mutations_tools.MUTATIONS,
]


def target(mutation: Mutation, package: Path = PACKAGE) -> Path:
    """The file `mutation` edits, in `package` (a copy of attnbook; the engine's copy lies
    beside it, as in the checkout's default: grader/src/attnbook_grader; a module of tools
    in tools/ beside it)."""
    if mutation.path.startswith("tools/"):
        return (ROOT if package == PACKAGE else package.parent) / mutation.path
    if mutation.path.startswith(f"{GRADER.name}/"):
        engine = package.parent / GRADER.name if package != PACKAGE else GRADER
        return engine / mutation.path.removeprefix(f"{GRADER.name}/")
    return package / mutation.path


def apply(mutation: Mutation, package: Path) -> None:
    """Edit the copy of the package in `package` (the engine's: beside it); a clear error if
    the line is not there once."""
    path = target(mutation, package)
    text = path.read_text()
    if text.count(mutation.old) != 1:
        raise ValueError(
            f"{mutation.name}: {mutation.old!r} occurs {text.count(mutation.old)} times "
            f"in {mutation.path}, not once: update the mutation list"
        )
    path.write_text(text.replace(mutation.old, mutation.new))


# `python -c` this with the mutated file, the module's name and pytest's arguments: the
# module is executed from the mutated text under its checkout path and put in sys.modules, so
# that every import of it in the tests finds the mutant.
_TOOL_RUNNER = """
import importlib, sys, types
from pathlib import Path
mutated, name, args = sys.argv[1], sys.argv[2], sys.argv[3:]
package, _, leaf = name.rpartition(".")
module = types.ModuleType(name)
module.__file__ = str(Path.cwd() / (name.replace(".", "/") + ".py"))
module.__package__ = package
sys.modules[name] = module
exec(compile(Path(mutated).read_text(), module.__file__, "exec"), module.__dict__)
setattr(importlib.import_module(package), leaf, module)
import pytest
sys.exit(pytest.main(args))
"""


def run(mutation: Mutation, timeout: float) -> tuple[str, float]:
    """Run the unit tests against a mutated copy -> (the first failing test or a verdict, seconds)."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        package = Path(tmp) / "attnbook"
        for source, copy in ((PACKAGE, package), (GRADER, Path(tmp) / GRADER.name)):
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        tool = mutation.path.startswith("tools/")
        if tool:
            (Path(tmp) / "tools").mkdir()
            shutil.copy(ROOT / mutation.path, target(mutation, package))
        apply(mutation, package)
        env = {**os.environ, "PYTHONPATH": tmp, "PYTHONDONTWRITEBYTECODE": "1"}
        runner = ["-m", "pytest"]
        if tool:  # the mutated module, under its own name and path, then pytest
            name = mutation.path.removesuffix(".py").replace("/", ".")
            runner = ["-c", _TOOL_RUNNER, str(target(mutation, package)), name]
        command = [
            sys.executable,
            *runner,
            "-x",
            "-q",
            "-rf",
            "-p",
            "no:cacheprovider",
            *mutation.first,
            *(t for t in TESTS if t not in mutation.first),
        ]
        try:
            done = subprocess.run(
                command,
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return "TIMEOUT (not caught)", time.perf_counter() - start
    failed = re.search(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", done.stdout, re.MULTILINE)
    if done.returncode == 0:
        return "NOT CAUGHT", time.perf_counter() - start
    return (
        failed.group(1) if failed else f"pytest exit {done.returncode}"
    ), time.perf_counter() - start


def changed_since(base: str) -> list[Mutation]:
    """The mutations whose file differs from `base`'s merge base with HEAD (working tree
    included)."""
    git = ["git", "-C", str(ROOT)]
    fork = subprocess.run(
        [*git, "merge-base", base, "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    names = subprocess.run(
        [*git, "diff", "--name-only", fork], capture_output=True, text=True, check=True
    ).stdout.split()
    changed = {(ROOT / name).resolve() for name in names}
    return [m for m in MUTATIONS if target(m).resolve() in changed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this mutation (repeatable)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds per mutation (default 600)"
    )
    parser.add_argument(
        "--changed",
        metavar="BASE",
        help="run only the mutations of the files changed since BASE (a git ref)",
    )
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.changed:
        chosen = [m for m in changed_since(args.changed) if m in chosen]
        if not chosen:
            print(f"no listed mutation edits a file changed since {args.changed}")
            return 0
    unknown = set(args.only or ()) - {m.name for m in MUTATIONS}
    if unknown:
        parser.error(
            f"unknown mutation(s) {sorted(unknown)}; have {[m.name for m in MUTATIONS]}"
        )
    width = max(len(m.name) for m in chosen)
    print(f"{'mutation':{width}s}  {'seconds':>7s}  caught by")
    missed = 0
    for mutation in chosen:
        verdict, seconds = run(mutation, args.timeout)
        missed += verdict.startswith(("NOT CAUGHT", "TIMEOUT"))
        print(f"{mutation.name:{width}s}  {seconds:7.1f}  {verdict}", flush=True)
    print(f"{len(chosen) - missed} of {len(chosen)} mutations caught")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
