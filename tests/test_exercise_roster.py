"""Student ids from LMS exports, resubmissions, the roster and Canvas's gradebook import
(`tools.exercise_roster`; issue 45, item 6). No grading: well under a second.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tools import exercise_roster as roster


def _ids(relative: str, root: Path) -> tuple:
    found = roster.identify(relative, root)
    return (found.source, found.ids, found.late) if found else None


def test_canvas_names_late_files_and_resubmissions(tmp_path):
    assert _ids("doejane_4411_90001_ex01_attention.ipynb", tmp_path) == (
        "canvas",
        ["4411"],
        False,
    )
    assert _ids("doejane_LATE_4411_90001_ex01_attention-2.ipynb", tmp_path) == (
        "canvas",
        ["4411"],
        True,
    )
    found = {
        name: roster.identify(name, tmp_path)
        for name in (
            "doejane_4411_90001_ex01_attention.ipynb",
            "doejane_4411_90001_ex01_attention-1.ipynb",  # sent again: the later one
            "roejohn_4412_90002_my_copy.ipynb",
            "unnamed.ipynb",  # no student: graded, not resolved
        )
    }
    kept, superseded = roster.resolve(found)
    assert kept == [
        "doejane_4411_90001_ex01_attention-1.ipynb",
        "roejohn_4412_90002_my_copy.ipynb",
        "unnamed.ipynb",
    ]
    assert superseded == [
        (
            "doejane_4411_90001_ex01_attention.ipynb",
            "doejane_4411_90001_ex01_attention-1.ipynb",
        )
    ]
    # a higher submission id is later, whatever the -N suffix says
    later = {
        "a_7_100_x-3.ipynb": roster.identify("a_7_100_x-3.ipynb", tmp_path),
        "a_7_101_x.ipynb": roster.identify("a_7_101_x.ipynb", tmp_path),
    }
    assert roster.resolve(later)[0] == ["a_7_101_x.ipynb"]


def test_moodle_blackboard_and_gradescope_exports(tmp_path):
    moodle = "Jane Doe_812_assignsubmission_file/ex01_attention.ipynb"
    assert _ids(moodle, tmp_path) == ("moodle", ["812"], False)
    flat = "Jane Doe_812_assignsubmission_file_ex01_attention.ipynb"
    assert _ids(flat, tmp_path) == ("moodle", ["812"], False)
    board = "Exercise 1_jdoe_attempt_2026-11-30-14-02-33_ex01_attention.ipynb"
    assert _ids(board, tmp_path) == ("blackboard", ["jdoe"], False)
    attempts = {
        b: roster.identify(b, tmp_path)
        for b in (board, board.replace("14-02-33", "16-40-00"))
    }
    assert roster.resolve(attempts)[0] == [board.replace("14-02-33", "16-40-00")]
    (tmp_path / "submission_metadata.yml").write_text(
        "submission_501:\n"
        "  :submitters:\n"
        "  - :name: Jane Doe\n"
        "    :sid: '4411'\n"
        "    :email: jane@example.edu\n"
        "  - :name: John Roe\n"
        "    :sid: ''\n"
        "    :email: john@example.edu\n"
        "  :created_at: 2026-11-30 12:00:00.000000000 -08:00\n"
    )
    group = roster.identify("submission_501/ex01.ipynb", tmp_path)
    assert group is not None and group.source == "gradescope"
    assert group.ids == ["4411", "john@example.edu"]
    assert group.names == ["Jane Doe", "John Roe"]
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "submission_metadata.json").write_text(
        json.dumps(
            {
                "created_at": "2026-11-30",
                "users": [{"id": 77, "name": "Ann", "email": "a@x"}],
            }
        )
    )
    assert _ids("upload/nb.ipynb", tmp_path) == ("gradescope", ["77"], False)
    assert roster.identify("plain/folder/nb.ipynb", tmp_path) is None


def test_a_broken_metadata_file_identifies_nobody(tmp_path):
    (tmp_path / "submission_metadata.yml").write_text("[" * 5000)
    assert roster.gradescope_metadata(tmp_path) == {}


CANVAS_EXPORT = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Exercise 1 (123)\n"
    "    Points Possible,,,,,14\n"
    '"Doe, Jane",4411,S-01,jdoe,Mon 10:00,\n'
    '"Roe, John",4412,S-02,jroe,Mon 10:00,\n'
    '"Poe, Ann",4413,S-03,apoe,Tue 14:00,\n'
)


def test_roster_from_a_canvas_export_and_the_gradebook_canvas_imports(tmp_path):
    (tmp_path / "class.csv").write_text(CANVAS_EXPORT)
    people = roster.read_roster(tmp_path / "class.csv")
    assert people["4411"].name == "Doe, Jane" and people["jdoe"] is people["4411"]
    assert people["S-02"].section == "Mon 10:00"
    assert "    Points Possible" not in {p.name for p in people.values()}
    graded = [
        (roster.identify("doejane_4411_9_ex01.ipynb", tmp_path), 14.0),
        (roster.identify("roejohn_4412_10_ex01.ipynb", tmp_path), 9.5),
        (roster.identify("ghost_9999_11_ex01.ipynb", tmp_path), 3.0),
    ]
    out = tmp_path / "canvas.csv"
    unknown = roster.write_canvas(out, "Exercise 1 (123)", graded, people, 14.0)
    assert unknown == ["9999"]
    rows = list(csv.reader(open(out)))
    assert rows[0] == [*roster.CANVAS_COLUMNS, "Exercise 1 (123)"]
    assert rows[1][0].strip() == "Points Possible" and rows[1][-1] == "14"
    assert rows[2:] == [
        ["Doe, Jane", "4411", "S-01", "jdoe", "Mon 10:00", "14"],
        ["Roe, John", "4412", "S-02", "jroe", "Mon 10:00", "9.5"],
        ["ghost", "9999", "", "", "", "3"],
    ]


def test_the_roster_notebooks_are_recognised_by_their_own_names(tmp_path):
    # `make exercises ROSTER=` writes ID-Name.ipynb; handed back as they are, `make grade ROSTER=`
    # knows them by the roster, and no other name (nor one two students share) is read as one
    (tmp_path / "class.csv").write_text(CANVAS_EXPORT)
    people = roster.read_roster(tmp_path / "class.csv")
    files = roster.roster_files(people)
    jane = roster.roster_file_name("4411", "Doe, Jane")
    assert jane == "4411-Doe-Jane.ipynb"
    assert files[jane].ids == ["4411"] and files[jane].source == "roster"
    assert len(files) == len({p.id for p in people.values()})
    assert "ex01-final.ipynb" not in files
    twins = {
        "1": roster.Person("1", "A B"),
        "1 ": roster.Person("1 ", "A-B"),
    }  # one file name
    assert roster.roster_files(twins) == {}


@pytest.mark.parametrize("out", ["class.csv", "class-report.csv", "x.csv"])
def test_a_roster_the_run_would_overwrite_is_refused(tmp_path, out):
    # `make grade OUT=class.csv ROSTER=class.csv` would write the grades over the class list (and
    # OUT=class-report.csv its report, OUT=x.csv with ROSTER=x-canvas.csv the LMS gradebook)
    from tools.exercise_build import ExerciseError
    from tools.exercise_gradebook import ClassRun, grade_folder

    kept = {
        "class.csv": "class.csv",
        "class-report.csv": "class-report-report.txt",
        "x.csv": "x-canvas.csv",
    }[out]
    (tmp_path / kept).write_text(CANVAS_EXPORT)
    with pytest.raises(ExerciseError, match="is a file this run would write"):
        grade_folder(
            "ex01_attention",
            tmp_path / "none",
            tmp_path / out,
            10.0,
            ClassRun(roster=tmp_path / kept),
        )
    assert (tmp_path / kept).read_text() == CANVAS_EXPORT


def test_moodle_participant_ids_and_a_roster_without_ids(tmp_path):
    (tmp_path / "worksheet.csv").write_text(
        "Identifier,Full name,Email address,Grade\nParticipant 812,Jane Doe,j@x,\n"
    )
    people = roster.read_roster(tmp_path / "worksheet.csv")
    assert people["812"].name == "Jane Doe"
    (tmp_path / "names.csv").write_text("first,last\nJane,Doe\n")
    with pytest.raises(ValueError, match="no id column"):
        roster.read_roster(tmp_path / "names.csv")
