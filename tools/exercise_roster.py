"""Who submitted what, from an LMS export, and the gradebook an LMS imports (`make grade`).

Student identities come from the paths the LMS writes, read from the name only (nothing in a
notebook is trusted for this):

* Canvas's bulk download: ``lastnamefirstname_USERID_SUBMISSIONID_original.ipynb``, with
  ``_LATE_`` after the name for a late one and ``-N`` before the suffix when a student sent a
  file of the same name again;
* Moodle's: a folder ``Full Name_PARTICIPANTID_assignsubmission_file`` per student (older
  exports put the same prefix on the file names);
* Blackboard's: ``Assignment_USERNAME_attempt_YYYY-MM-DD-HH-MM-SS_original.ipynb``;
* the course's own roster notebooks (`make exercises ROSTER=...` writes ``ID-Name.ipynb``, see
  `roster_file_name`), handed out and collected as they are: recognised only with the roster
  that names them (`roster_files`), so no other file name is read as a student;
* Gradescope's export: a folder ``submission_NNN`` per submission and, at the top,
  ``submission_metadata.yml`` naming its submitters (several for a group); a
  ``submission_metadata.json`` (the autograder's format: ``users``, ``created_at``) beside a
  notebook is read the same way.

`resolve` keeps one submission per student, the latest (Canvas: the highest submission id,
then the highest ``-N``; Blackboard and Gradescope: the latest time; Moodle exports one), and
lists the others as superseded. `read_roster` reads a roster CSV (Canvas's gradebook export
as it is, or any CSV with an id column and a name column) and `write_canvas` writes Canvas's
import layout: Student, ID, SIS User ID, SIS Login ID, Section, then "Title (assignment id)".
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Identity",
    "Person",
    "identify",
    "gradescope_metadata",
    "read_roster",
    "roster_file_name",
    "roster_files",
    "resolve",
    "write_canvas",
    "CANVAS_COLUMNS",
]

CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
_CANVAS = re.compile(
    r"^(?P<name>[^_/]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<sub>\d+)_(?P<file>.+?)"
    r"(?:-(?P<again>\d+))?(?P<suffix>\.[^./]+)?$"
)
_MOODLE = re.compile(
    r"^(?P<name>.+?)_(?P<user>\d+)_assign(?:submission|feedback)_\w+?(?:_(?P<file>.*))?$"
)
_BLACKBOARD = re.compile(
    r"^(?P<assignment>.+?)_(?P<user>[^_]+)_attempt_"
    r"(?P<when>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+))?$"
)
_GRADESCOPE = re.compile(r"^submission_(?P<sub>\d+)$")


@dataclass
class Person:
    """A student as the gradebook names them."""

    id: str
    name: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""


@dataclass
class Identity:
    """Who a submitted file is from, as its path says. ids: the LMS's ids of its students
    (several for a Gradescope group); order: sorts a student's submissions, latest last."""

    source: str  # "canvas", "moodle", "blackboard", "gradescope", "roster"
    ids: list[str]
    names: list[str] = field(default_factory=list)
    order: tuple = ()
    late: bool = False


def gradescope_metadata(folder: Path) -> dict[str, Identity]:
    """Gradescope's export: "submission_NNN" -> its submitters, from the top-level
    ``submission_metadata.yml`` (empty when there is none or it cannot be read)."""
    path = Path(folder) / "submission_metadata.yml"
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, OSError, UnicodeDecodeError, RecursionError):
        return {}
    found = {}
    for key, entry in (data or {}).items() if isinstance(data, dict) else []:
        if not isinstance(entry, dict):
            continue
        people = [p for p in entry.get(":submitters") or [] if isinstance(p, dict)]
        ids = [str(p.get(":sid") or p.get(":email") or "") for p in people]
        found[str(key)] = Identity(
            "gradescope",
            [i for i in ids if i],
            [str(p.get(":name") or "") for p in people],
            (str(entry.get(":created_at") or ""),),
        )
    return found


def _metadata_json(path: Path) -> Identity | None:
    """A ``submission_metadata.json`` (Gradescope's autograder format) beside a notebook."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        users = [u for u in data.get("users") or [] if isinstance(u, dict)]
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    ids = [str(u.get("sid") or u.get("id") or u.get("email") or "") for u in users]
    names = [str(u.get("name") or "") for u in users]
    when = (str(data.get("created_at") or ""),)
    return Identity("gradescope", [i for i in ids if i], names, when) if ids else None


def identify(
    relative: str, root: Path, metadata: dict[str, Identity] | None = None
) -> Identity | None:
    """The identity a path under `root` carries (see the module docstring), or None."""
    parts = Path(relative).parts
    metadata = gradescope_metadata(root) if metadata is None else metadata
    for part in parts[:-1]:
        if _GRADESCOPE.match(part) and part in metadata:
            return metadata[part]
    beside = Path(root, relative).parent / "submission_metadata.json"
    if beside.is_file():
        found = _metadata_json(beside)
        if found:
            return found
    for part in reversed(parts):
        canvas = _CANVAS.match(part) if part == parts[-1] else None
        if canvas:
            order = (int(canvas["sub"]), int(canvas["again"] or 0))
            late = canvas["late"] is not None
            return Identity("canvas", [canvas["user"]], [canvas["name"]], order, late)
        moodle = _MOODLE.match(part)
        if moodle:
            return Identity("moodle", [moodle["user"]], [moodle["name"]])
        blackboard = _BLACKBOARD.match(part)
        if blackboard:
            user = blackboard["user"]
            return Identity("blackboard", [user], [user], (blackboard["when"],))
    return None


def resolve(
    found: dict[str, Identity | None],
) -> tuple[list[str], list[tuple[str, str]]]:
    """(the paths to grade, [(superseded path, the path kept instead)]): per student, the
    latest submission (`Identity.order`, then the path) wins; paths of no known student are
    all kept."""
    latest: dict[str, str] = {}
    for path in sorted(found):
        who = found[path]
        for student in who.ids if who else []:
            kept = latest.get(student)
            if kept is None or _later(found[path], path, found[kept], kept):
                latest[student] = path
    keep = {p for p, who in found.items() if not who or not who.ids}
    keep |= set(latest.values())
    superseded = []
    for path in sorted(set(found) - keep):
        who = found[path]
        newer = sorted({latest[s] for s in who.ids}) if who else []
        superseded.append((path, ", ".join(newer)))
    return sorted(keep), superseded


def _later(a: Identity | None, path_a: str, b: Identity | None, path_b: str) -> bool:
    return ((a.order if a else ()), path_a) > ((b.order if b else ()), path_b)


# ----------------------------------------------------------------------------- roster and LMS
_ID_COLUMNS = ("id", "sis user id", "sis login id", "user id", "sid", "student id")
_ID_COLUMNS += ("identifier", "username", "email", "email address", "login")
_NAME_COLUMNS = ("student", "name", "full name", "student name")


def roster_file_name(student_id: str, name: str) -> str:
    """The file name of a student's notebook built from a roster: ``ID-Name.ipynb``."""

    def slug(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:40] or "student"

    return f"{slug(student_id)}-{slug(name)}.ipynb"


def roster_files(roster: dict[str, Person]) -> dict[str, Identity]:
    """File name -> identity for every student of `roster`, under the name their notebook was
    built with (`roster_file_name`); a name two students share names neither."""
    names: dict[str, list[Person]] = {}
    for person in {
        p.id: p for p in roster.values()
    }.values():  # a person under each of their ids
        names.setdefault(roster_file_name(person.id, person.name), []).append(person)
    return {
        file: Identity("roster", [people[0].id], [people[0].name])
        for file, people in names.items()
        if len(people) == 1
    }


def read_roster(path: Path) -> dict[str, Person]:
    """Any id a student may carry (Canvas's user id, SIS ids, login, e-mail, Moodle's
    "Participant N") -> that student, from a CSV with a header row; Canvas's gradebook
    export is read as it is (its "Points Possible" row skipped). Raises ValueError naming
    the columns it needs when it finds none."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"roster {path}: no rows under a header")
    columns = {c.strip().lower(): c for c in rows[0] if c}
    ids = [columns[c] for c in _ID_COLUMNS if c in columns]
    name = next((columns[c] for c in _NAME_COLUMNS if c in columns), None)
    if not ids:
        raise ValueError(
            f"roster {path}: no id column (one of {', '.join(_ID_COLUMNS)}); "
            f"its columns: {', '.join(rows[0])}"
        )
    people: dict[str, Person] = {}
    for row in rows:
        student = (row.get(name) or "").strip() if name else ""
        if student.lower().startswith("points possible"):
            continue

        def value(column: str, row: dict[str, Any] = row) -> str:
            key = columns.get(column)
            return (row.get(key) or "").strip() if key else ""

        identifier = (
            value("id") or value("user id") or value("sid") or value("student id")
        )
        person = Person(
            identifier or value(ids[0].lower()),
            student,
            value("sis user id"),
            value("sis login id") or value("login") or value("username"),
            value("section"),
        )
        for column in ids:
            key = (row.get(column) or "").strip()
            if key:
                people.setdefault(key, person)
                if key.lower().startswith("participant "):
                    people.setdefault(key.split()[-1], person)
    return people


def canvas_rows(
    graded: list[tuple[Identity, float]], roster: dict[str, Person]
) -> tuple[list[list[str]], list[str]]:
    """(one gradebook row per identified student [Student, ID, SIS User ID, SIS Login ID,
    Section, score], ids not in the roster): a group's score goes to each member."""
    rows: dict[str, list[str]] = {}
    unknown = []
    for who, score in graded:
        for i, student in enumerate(who.ids):
            person = roster.get(student)
            if roster and person is None:
                unknown.append(student)
            name = who.names[i] if i < len(who.names) else ""
            person = person or Person(student, name)
            rows[person.id] = [
                person.name,
                person.id,
                person.sis_user_id,
                person.sis_login_id,
                person.section,
                f"{score:g}",
            ]
    return [rows[k] for k in sorted(rows)], sorted(set(unknown))


def write_canvas(
    out: Path,
    title: str,
    graded: list[tuple[Identity, float]],
    roster: dict[str, Person],
    possible: float,
) -> list[str]:
    """Canvas's gradebook import CSV (`canvas_rows`, under a "Points Possible" row);
    returns the ids the roster did not know."""
    rows, unknown = canvas_rows(graded, roster)
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([*CANVAS_COLUMNS, title])
        writer.writerow(["    Points Possible", "", "", "", "", f"{possible:g}"])
        writer.writerows(rows)
    return unknown
