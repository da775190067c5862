"""The exercise's otter test files, compiled once per grading process.

`engine.grade_notebook` needs fresh `ExceptionTestFile`s for every notebook (running one
stores its results in it, and a test file's module-level names must start anew), but
compiling the same text gives the same code every time: the code is kept here, keyed by the
text and its path, and only executed per notebook. Compiling took 6-11 ms a notebook.
"""

from __future__ import annotations

from types import CodeType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from otter.test_files.exception_test import ExceptionTestFile

__all__ = ["read_test_files"]

_compiled: dict[tuple[str, str], CodeType] = {}
_KEPT = 256  # test files kept compiled (a few exercises' worth)


def read_test_files(tests: dict[str, str]) -> dict[str, ExceptionTestFile]:
    """question -> its test file, as ``ExceptionTestFile.from_string(text,
    path="tests/QUESTION.py")`` reads it: executed now, compiled once."""
    from otter.test_files.exception_test import ExceptionTestFile

    files = {}
    for question, text in tests.items():
        path = f"tests/{question}.py"
        code = _compiled.get((text, path))
        if code is None:
            if len(_compiled) >= _KEPT:
                _compiled.clear()
            # as otter compiles it: none of this module's __future__ flags
            code = compile(text, path, "exec", dont_inherit=True)
            _compiled[text, path] = code
        found = ExceptionTestFile._from_compiled_code(code, path=path)
        found.source = text
        files[question] = found
    return files
