#!/usr/bin/env python3
"""Give the lock's Linux torch entry the hashes of every CPU wheel it may install.

    python tools/lock_torch.py requirements/lock.txt requirements/torch-cpu.sha256

`uv pip compile --generate-hashes` hashes the files it sees. Where PyTorch's CPU index cannot
be reached, it sees only the local wheel of one Python, and the lock would then refuse torch on
every other Python. This step (the last of `make lock`) replaces the hashes of the entry
`torch==X+cpu ; sys_platform == 'linux'` with those recorded in the listing (a `sha256sum`
file: digest, two spaces, wheel name), after two checks: the listing holds a wheel of version
X for every Python the Makefile accepts, and the wheel uv resolved against (one of its hashes)
is one the listing names, so a local wheel that differs from the index's fails here.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from tools import ToolError

PYTHONS = ("cp311", "cp312", "cp313")  # the Makefile's SUPPORTED_PYTHONS
ENTRY = re.compile(r"^torch==(?P<version>\S+\+cpu) ; sys_platform == 'linux' \\$")
HASH = re.compile(r"^\s+--hash=sha256:(?P<digest>[0-9a-f]{64})")


def read_listing(path: Path) -> dict[str, str]:
    """{wheel file name: sha256} of a sha256sum listing (comment lines start with #)."""
    wheels = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        digest, _, name = line.partition("  ")
        if not re.fullmatch(r"[0-9a-f]{64}", digest) or not name.endswith(".whl"):
            raise ToolError(
                f"{path}:{number}: expected '<sha256>  <wheel>', got {line!r}"
            )
        wheels[name] = digest
    return wheels


def rewrite(lock: list[str], wheels: dict[str, str]) -> tuple[list[str], str]:
    """The lock's lines with the Linux torch entry's hashes replaced, and that entry's version."""
    starts = [i for i, line in enumerate(lock) if ENTRY.match(line)]
    if len(starts) != 1:
        raise ToolError(
            "lock_torch: expected one entry `torch==X+cpu ; sys_platform == 'linux'` "
            f"in the lock, found {len(starts)} (see requirements/constraints.txt)"
        )
    start = starts[0]
    version = ENTRY.match(lock[start])["version"]  # type: ignore[index]
    end = start + 1
    while end < len(lock) and HASH.match(lock[end]):
        end += 1
    seen = {HASH.match(line)["digest"] for line in lock[start + 1 : end]}  # type: ignore[index]
    mine = {
        name: digest
        for name, digest in wheels.items()
        if name.startswith(f"torch-{version}-")
    }
    missing = [
        py
        for py in PYTHONS
        if not any(
            f"-{py}-{py}-manylinux" in name and name.endswith("_x86_64.whl")
            for name in mine
        )
    ]
    if missing:
        raise ToolError(
            f"lock_torch: the listing has no x86_64 wheel of torch {version} for "
            f"{', '.join(missing)}; add them from https://download.pytorch.org/whl/cpu/torch/"
        )
    if not seen & set(mine.values()):
        raise ToolError(
            f"lock_torch: uv resolved torch {version} against a wheel (sha256 "
            f"{', '.join(sorted(seen))}) that the listing of the CPU index does not name"
        )
    digests = sorted(set(mine.values()))
    hashes = [
        f"    --hash=sha256:{d}" + (" \\" if i < len(digests) - 1 else "")
        for i, d in enumerate(digests)
    ]
    return lock[: start + 1] + hashes + lock[end:], version


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lock_path, listing_path = map(Path, argv)
    lines, version = rewrite(
        lock_path.read_text().splitlines(), read_listing(listing_path)
    )
    lock_path.write_text("\n".join(lines) + "\n")
    print(f"lock_torch: torch {version} on Linux")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ToolError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
