"""Serve MathJax from the book itself: no CDN at reading time, no third-party code committed.

Fetches the npm package `mathjax@3.2.2` once with `npm pack` (cached in `.cache/mathjax/`,
checked against the registry's sha512 integrity recorded below) and extracts what the book
needs into `_build/.mathjax/mathjax/`. `_config.yml` lists `_build/.mathjax` in
`html_static_path`, so Sphinx copies it to `_static/mathjax/` of the built site, and
`mathjax_path: mathjax/tex-mml-chtml.js` loads it from there.

MathJax locates everything it loads later relative to its own script URL (`[mathjax]` is the
folder of `tex-mml-chtml.js`): the CHTML fonts from `[mathjax]/output/chtml/fonts/woff-v2/`
and TeX packages autoloaded on first use (`\\boldsymbol`, `\\cancel`, `\\color`, ...) from
`[mathjax]/input/tex/extensions/`. Both folders are copied, keeping the package's layout.

Usage: python tools/fetch_mathjax.py   (idempotent; instant when already in place)
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from tools import ToolError

ROOT = Path(__file__).resolve().parents[1]
VERSION = "3.2.2"
# `npm view mathjax@3.2.2 dist.integrity` (the registry's sha512 of the tarball).
INTEGRITY = "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
CACHE = ROOT / ".cache" / "mathjax"
TARBALL = CACHE / f"mathjax-{VERSION}.tgz"
DEST = ROOT / "_build" / ".mathjax" / "mathjax"
# Sphinx does not copy dot-files from html_static_path, so the stamp stays out of the site.
STAMP = DEST / ".integrity"
ENTRY = "tex-mml-chtml.js"
# Paths inside the tarball's `package/` folder; folders end with "/".
WANTED = (
    "LICENSE",
    f"es5/{ENTRY}",
    "es5/output/chtml/fonts/woff-v2/",
    "es5/input/tex/extensions/",
)


def integrity_of(path: Path) -> str:
    """The npm-style Subresource Integrity string (sha512, base64) of a file."""
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def npm_pack() -> None:
    """Download the tarball into the cache with `npm pack` (the npm registry's client)."""
    npm = shutil.which("npm")
    if npm is None:
        raise ToolError(
            f"fetch_mathjax: npm not found. It is needed once to fetch mathjax@{VERSION} "
            "from the npm registry: install Node.js/npm (e.g. `apt-get install npm`), "
            f"or put mathjax-{VERSION}.tgz into {CACHE} yourself."
        )
    CACHE.mkdir(parents=True, exist_ok=True)
    cmd = [
        npm,
        "pack",
        f"mathjax@{VERSION}",
        "--pack-destination",
        str(CACHE),
        "--ignore-scripts",
        "--silent",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0 or not TARBALL.is_file():
        raise ToolError(
            f"fetch_mathjax: `{' '.join(cmd)}` failed:\n{result.stderr.strip()}"
        )


def verified_tarball() -> Path:
    """The cached tarball, fetched if missing (or corrupt), with its integrity checked."""
    if TARBALL.is_file() and integrity_of(TARBALL) != INTEGRITY:
        print(f"fetch_mathjax: cached {TARBALL.name} is corrupt; fetching it again")
        TARBALL.unlink()
    if not TARBALL.is_file():
        npm_pack()
        found = integrity_of(TARBALL)
        if found != INTEGRITY:
            TARBALL.unlink()
            raise ToolError(
                f"fetch_mathjax: integrity mismatch for mathjax@{VERSION}\n"
                f"  expected {INTEGRITY}\n  got      {found}"
            )
    return TARBALL


def target_of(name: str) -> str | None:
    """Where a tarball member goes, relative to DEST (None: not needed)."""
    if not name.startswith("package/"):
        return None
    inner = name[len("package/") :]
    if not any(inner == w or (w.endswith("/") and inner.startswith(w)) for w in WANTED):
        return None
    return inner.removeprefix("es5/")


def extract(tarball: Path) -> int:
    """Extract the wanted files into a fresh DEST (atomically replaced); returns the count."""
    DEST.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with (
        tempfile.TemporaryDirectory(dir=DEST.parent) as tmp,
        tarfile.open(tarball) as tar,
    ):
        staging = Path(tmp) / "mathjax"
        for member in tar.getmembers():
            target = target_of(member.name)
            if target is None or not member.isfile():
                continue
            out = (staging / target).resolve()
            if not out.is_relative_to(staging.resolve()):
                raise ToolError(f"fetch_mathjax: unsafe path in tarball: {member.name}")
            out.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as src, out.open("wb") as dst:  # type: ignore[union-attr]
                shutil.copyfileobj(src, dst)
            count += 1
        if not (staging / ENTRY).is_file():
            raise ToolError(f"fetch_mathjax: {ENTRY} missing from {tarball.name}")
        (staging / STAMP.name).write_text(INTEGRITY + "\n")
        if DEST.exists():
            shutil.rmtree(DEST)
        staging.rename(DEST)
    return count


def is_current() -> bool:
    """True when DEST already holds this exact MathJax."""
    return (
        (DEST / ENTRY).is_file()
        and STAMP.is_file()
        and STAMP.read_text().strip() == INTEGRITY
    )


def main() -> int:
    if is_current():
        print(f"fetch_mathjax: MathJax {VERSION} already in {DEST.relative_to(ROOT)}")
        return 0
    count = extract(verified_tarball())
    print(
        f"fetch_mathjax: MathJax {VERSION}: {count} files in {DEST.relative_to(ROOT)}"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
