"""Per-student variants of an exercise: which variant a student gets, from the platform's
identity and a course secret, never from the notebook.

An exercise with a pool (``variants.json`` in its autograder zip, written by the build from
`tools.exercise_variants`) has tasks, each a set of text edits of the master ("old" -> "new",
applied to the reference solution and to the student notebook) and its parameters (integer
ranges). A variant is a task and a value for each of its parameters, as a dict::

    {"exercise": "ex01_attention", "task": "block", "seed": 4821}

`choose` is a pure function: HMAC-SHA256 of (course secret, exercise, the sorted ids of the
students who submit together) picks a task of the pool's ``roster`` list and then each
parameter. The pool's ``reserved`` variant (the book's pages and worked solutions) has a task
outside that list, so no roster student is ever given it. Without a course secret (a reader
learning alone) every notebook is at the reserved variant.

The notebook states its variant in one line, ``VARIANT = {...}`` (`variant_line`), which its
public checks read; the grader reads it back (`stated`) only to refuse a notebook of another
variant (`refusal`), and grades at the variant it recomputed.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "BOOK",
    "POOL_FILE",
    "SECRET_ENV",
    "SECRET_FILE_ENV",
    "SECRET_IN_ZIP",
    "VariantError",
    "choose",
    "course_secret",
    "ids_from_metadata",
    "label",
    "load_pool",
    "refusal",
    "render",
    "reserved",
    "stated",
    "variant_for",
    "variant_line",
]

POOL_FILE = "variants.json"  # in the autograder zip (and its unpacked folder)
SECRET_IN_ZIP = (
    "course_secret"  # the secret, where the instructor built the zip with one
)
SECRET_ENV = "ATTNBOOK_COURSE_SECRET"  # the secret itself
SECRET_FILE_ENV = "ATTNBOOK_COURSE_SECRET_FILE"  # or a file holding it
_LINE = re.compile(r"^VARIANT = (\{.*\})[ \t]*$", re.MULTILINE)


class VariantError(ValueError):
    """A pool, a secret or a stated variant that cannot be used (the message says why)."""


def course_secret(environ: dict[str, str] | None = None) -> bytes | None:
    """The course secret: $ATTNBOOK_COURSE_SECRET, else the file $ATTNBOOK_COURSE_SECRET_FILE
    names (stripped); None where neither is set. An empty secret is refused."""
    env = os.environ if environ is None else environ
    text = env.get(SECRET_ENV)
    if text is None and env.get(SECRET_FILE_ENV):
        path = Path(env[SECRET_FILE_ENV]).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise VariantError(
                f"{SECRET_FILE_ENV}={path}: cannot read it ({err})"
            ) from None
    if text is None:
        return None
    if not text.strip():
        raise VariantError(f"the course secret ({SECRET_ENV} or its file) is empty")
    return text.strip().encode()


def reserved(pool: dict) -> dict:
    """The pool's reserved variant: the book's pages, the worked solutions, readers alone."""
    return {"exercise": pool["exercise"], **pool["reserved"]}


def choose(secret: bytes, exercise: str, ids: Iterable[str], pool: dict) -> dict:
    """The variant of the students `ids` (one, or a group: the order does not matter):
    HMAC-SHA256(secret, exercise and the sorted ids) picks a roster task, then each of its
    parameters in its range (inclusive), each from 8 bytes of its own of the digest."""
    people = sorted({str(i).strip() for i in ids if str(i).strip()})
    if not people:
        raise VariantError(f"{exercise}: no student id to choose a variant from")
    if exercise != pool["exercise"]:
        raise VariantError(f"the pool is {pool['exercise']}'s, not {exercise}'s")
    message = json.dumps([exercise, people]).encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    roster = list(pool["roster"])
    task = roster[int.from_bytes(digest[:8], "big") % len(roster)]
    variant: dict[str, Any] = {"exercise": exercise, "task": task}
    for i, (name, (low, high)) in enumerate(sorted(_params(pool, task).items())):
        chunk = hmac.new(digest, f"{i}:{name}".encode(), hashlib.sha256).digest()
        variant[name] = low + int.from_bytes(chunk[:8], "big") % (high - low + 1)
    return variant


def _params(pool: dict, task: str) -> dict[str, tuple[int, int]]:
    spec = pool["tasks"][task].get("params", pool.get("params", {}))
    return {name: (int(lo), int(hi)) for name, (lo, hi) in spec.items()}


def variant_for(
    pool: dict | None, ids: Iterable[str] | None, secret: bytes | None
) -> dict | None:
    """The variant to grade at: None for an exercise without a pool; the reserved one
    without a secret; else `choose` from the ids (VariantError where there are none: a
    submission of nobody known cannot be graded at a student's variant)."""
    if pool is None:
        return None
    if secret is None:
        return reserved(pool)
    found = [i for i in ids or [] if str(i).strip()]
    if not found:
        raise VariantError(
            "no student identity for this submission (its file name or "
            "submission_metadata.json names nobody), so its variant cannot be recomputed"
        )
    return choose(secret, pool["exercise"], found, pool)


BOOK = "book"  # `label` of the pool's reserved variant, where the pool is given


def label(variant: dict, pool: dict | None = None) -> str:
    """A variant in words, e.g. "block, seed 4821"; "book" for `pool`'s reserved variant
    where `pool` is given (the gradebook's ``variant`` column, Gradescope's ``extra_data``)."""
    if pool is not None and variant == reserved(pool):
        return BOOK
    params = [f"{k} {v}" for k, v in variant.items() if k not in ("exercise", "task")]
    return ", ".join([str(variant.get("task")), *params])


def variant_line(variant: dict) -> str:
    """The line a notebook states its variant with."""
    return f"VARIANT = {json.dumps(variant)}"


def render(sources: list[str], variant: dict, pool: dict) -> list[str]:
    """Cell sources (code and text) at `variant`: its task's edits applied wherever their old
    text occurs, and the ``VARIANT = {...}`` line restated."""
    task = pool["tasks"].get(variant.get("task"))
    if task is None:
        raise VariantError(f"{pool['exercise']} has no task {variant.get('task')!r}")
    line = variant_line(variant)
    out = []
    for source in sources:
        for old, new in task.get("edits", []):
            source = source.replace(old, new)
        out.append(_LINE.sub(lambda _m: line, source))
    return out


def stated(sources: list[str]) -> dict | None:
    """The variant a notebook states (its last ``VARIANT = {...}`` line), or None."""
    found = [m.group(1) for s in sources for m in _LINE.finditer(s)]
    if not found:
        return None
    try:
        value = ast.literal_eval(found[-1])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def refusal(sources: list[str], expected: dict | None) -> str | None:
    """Why a notebook is refused at the variant `expected` (None: graded): it states none,
    or another one; the message names both."""
    if expected is None:
        return None
    found = stated(sources)
    if found == expected:
        return None
    what = (
        f"variant {label(found)}" if found else "no variant (its VARIANT line is gone)"
    )
    return (
        f"not graded: this notebook states {what}, but the submitter's variant is "
        f"{label(expected)}: answer in your own notebook (the one handed out to you), "
        "keeping its VARIANT line as it is, and submit that"
    )


def ids_from_metadata(data: Any) -> list[str]:
    """The student ids of Gradescope's ``submission_metadata.json`` (one per user of a
    group: the SID, else the user id, else the e-mail), as `make grade` reads them."""
    users = data.get("users") if isinstance(data, dict) else None
    ids = []
    for user in users if isinstance(users, list) else []:
        if isinstance(user, dict):
            ids.append(
                str(user.get("sid") or user.get("id") or user.get("email") or "")
            )
    return [i for i in ids if i]


def load_pool(folder: Path) -> tuple[dict | None, bytes | None]:
    """(the pool, the course secret) of an unpacked autograder folder; None for either
    that it does not carry."""
    path, secret = Path(folder) / POOL_FILE, Path(folder) / SECRET_IN_ZIP
    pool = json.loads(path.read_text()) if path.is_file() else None
    key = secret.read_text().strip().encode() if secret.is_file() else None
    return pool, key or None
