"""What the grader reads from the submitted source, before anything of it runs: the
allowlist's findings (a note where the grade is for credit, the gate of a practice grade),
and the shortcut rules no process can enforce.

`scan` reads the code cells of a submission with `ast` (after IPython's own rewriting of
magics), one top-level statement at a time (a "unit": an import, a ``def``, a ``class``, an
assignment, a loop, an ``if`` holding a ``def``...). Cells identical to a cell of the
reference notebook (the setup cell, the data) are trusted; every other statement is read
against the exercise's allowlist (`answer_allowlist`). Where the answers run in an isolated
child (`jail`: a grade for credit) the allowlist is a hint only (`scan(hint_only=True)`):
what it finds runs in the child, which lacks what the question rules out, and is noted
(`Reading.hints`: "the allowlist would refuse ...: not counted"). In a practice grade
without isolation it stays the gate: a refused statement is not run (`runnable`) and costs
the questions whose functions use it (`refusals`).

`Reading.reach` follows, from a function's name, every statement that binds a name it reads
(assignments of every shape, imports, ``def`` and ``class`` with their defaults and
decorators, ``global`` writes...) and every statement that can put something into an object
it reads, transitively (in a practice grade nothing is fetched by a computed name).
`Reading.shortcut` answers a hidden test's rules (``guarded(f, libraries=..., names=...,
allow_attnbook=..., loops=...)``) on that reach: a ruled-out library or the course package
among its imports, a routine the question asks the student to write among its names (a name
the submission binds itself is its own routine), and (`loop_rule`) a Python loop in a
function it reaches. The grader asks it only what the answer's child does not enforce by
itself (`reach.left_to_read`): under isolation, the loop rule and a compiled routine
`disarm` cannot take away.
"""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Collection
from dataclasses import dataclass, field

from attnbook.exercise_checks.answer_allowlist import Allowlist
from attnbook.exercise_checks.loop_rule import first_loop, loop_message
from attnbook.exercise_checks.rules import refused, shortcut, would_refuse
from attnbook_grader.source_scopes import (
    FUNCTIONS,
    flows,
    globals_read,
    imports,
    stored,
)

__all__ = ["Reading", "scan", "reference_swaps", "NO_ALLOWLIST", "checks_on"]

# The one switch that turns every verdict read from the source off (the allowlist, its notes,
# the shortcut rules): `engine.grade_notebook(source_checks=False)` (the proof's attacks), or
# this variable "1" in a grader's environment (never the child's); the isolation alone stands.
NO_ALLOWLIST = "ATTNBOOK_UNSAFE_NO_ALLOWLIST"


def checks_on(source_checks: bool = True) -> bool:
    """Whether the verdicts read from the source apply: `source_checks` and not the switch."""
    return source_checks and os.environ.get(NO_ALLOWLIST) != "1"


# ----------------------------------------------------------------------------- units
@dataclass
class _Unit:
    cell: int
    node: ast.stmt
    trusted: bool
    binds: set[str]
    reads: set[str]
    imports: dict[str, str]  # name -> the module path an import binds it to
    refused: list[tuple[int, str]] = field(default_factory=list)

    @property
    def owner(self) -> str | None:
        return getattr(self.node, "name", None)


@dataclass
class Reading:
    """What the grader read from a submission's source."""

    units: list[_Unit] = field(default_factory=list)
    functions: dict[str, int] = field(default_factory=dict)  # def name -> unit index
    # (cell, line, top-level function or None, what)
    findings: list[tuple[int, int, str | None, str]] = field(default_factory=list)

    def reach(self, name: str, skip: Collection[str] = ()) -> tuple[list, set[str]]:
        """(the statements and parts `name` can reach, the names it reaches), through the
        notebook's untrusted statements; not through `skip` (the reference's functions)."""
        names, todo, parts, seen = {name}, [name], [], set()
        binders: dict[str, list[int]] = {}
        into_names: dict[str, list[tuple[int, ast.AST | None]]] = {}
        for i, unit in enumerate(self.units):
            for bound in unit.binds:
                binders.setdefault(bound, []).append(i)
        imported = {
            b for b, ids in binders.items() if all(self.units[i].imports for i in ids)
        }  # modules and imported routines: written to only by refused code
        for i, unit in enumerate(self.units):
            if not unit.trusted:
                for read, where in flows(unit.node, unit.reads, imported).items():
                    into_names.setdefault(read, []).extend((i, w) for w in where)
        while todo:
            current = todo.pop()
            if current in skip and current != name:
                continue
            whole = [(i, None) for i in binders.get(current, [])]
            # nothing the notebook binds (a builtin such as `int`) holds what it is given
            held = current in binders and current not in imported
            into = into_names.get(current, []) if held else []
            for i, part in whole + into:
                unit = self.units[i]
                if unit.trusted or (i, id(part)) in seen:
                    continue
                seen.add((i, id(part)))
                parts.append((unit, part))
                new = unit.reads if part is None else globals_read([part], set())[0]
                if part is None and (i, None) in into:
                    new = new | unit.binds  # an alias of `current`
                for n in sorted(new - names):
                    names.add(n)
                    todo.append(n)
        return parts, names

    def shortcut(
        self, name: str, rules: dict, skip: Collection[str] = ()
    ) -> str | None:
        """The message of the first shortcut rule the reach of `name` breaks, or None."""
        libraries = {str(lib) for lib in rules.get("libraries", ())}
        banned = {str(n) for n in rules.get("names", ())}
        parts, names = self.reach(name, set(skip))
        for unit, path, line in self._imports(parts, names):
            root = path.split(".")[0]
            if root == "attnbook" and path != "attnbook.exercise_checks.tests_dir":
                if not rules.get("allow_attnbook"):
                    return _shortcut(path, "the course package attnbook", unit, line)
            if root in libraries:
                why = f"this question rules out {' and '.join(sorted(libraries))}"
                return _shortcut(path, why, unit, line)
            if path.split(".")[-1] in banned:
                why = "the routine this question asks you to write"
                return _shortcut(path, why, unit, line)
        own = self.own_names()
        for unit, part in parts:
            for node in ast.walk(unit.node if part is None else part):
                word = _word(node)
                if word in banned and not (isinstance(node, ast.Name) and word in own):
                    why = "the routine this question asks you to write"
                    return _shortcut(word, why, unit, getattr(node, "lineno", 0))
        if rules.get("loops", True) is False:  # a question that rules out Python loops
            for unit, part in parts:
                for node in ast.walk(unit.node if part is None else part):
                    found = first_loop(node) if isinstance(node, FUNCTIONS) else None
                    if found:
                        owner = getattr(node, "name", unit.owner or "a lambda")
                        return loop_message(
                            found[1], f"{owner}, cell {unit.cell}, line {found[0]}"
                        )
        return None

    def own_names(self) -> set[str]:
        """The names only the submission's own statements bind: such a name, read, is the
        student's routine, whatever it is called (what it is bound to is read where it is
        bound, which the reach holds)."""
        mine = {b for u in self.units if not u.trusted for b in u.binds}
        return mine - {b for u in self.units if u.trusted for b in u.binds}

    def _imports(self, parts: list, names: set[str]) -> list[tuple[_Unit, str, int]]:
        """(unit, module path, line) of every import the reach holds and every use of a
        name an import binds, at the line of the use."""
        paths = {b: p for u in self.units for b, p in u.imports.items() if b in names}
        found = []
        for unit, part in parts:
            for node in ast.walk(unit.node if part is None else part):
                for path in imports(node).values():  # after the uses, below
                    found.append((1, unit, path, node.lineno))  # type: ignore[attr-defined]
                if isinstance(node, ast.Name) and node.id in paths:
                    found.append((0, unit, paths[node.id], node.lineno))
        found.sort(key=lambda f: (f[0], f[1].cell, f[3]))
        return [f[1:] for f in found]

    def tampering(
        self, question_functions: dict[str, set[str]], swaps: dict | None = None
    ) -> dict[str, str]:
        """question -> the message of the refused code that costs it (`refusals`)."""
        return self.refusals(question_functions, swaps)[0]

    def hints(self) -> list[tuple[int, str]]:
        """[(cell, note)] of what the allowlist finds where it is a hint (`would_refuse`)."""
        return [
            (u.cell, would_refuse(what, _where(u, line)))
            for u in self.units
            for line, what in u.refused
        ]

    def refusals(
        self,
        question_functions: dict[str, set[str]],
        swaps: dict[str, list[str]] | None = None,
    ) -> tuple[dict[str, str], list[tuple[int, str]]]:
        """A practice grade's ({question: the refused code that costs it}, [(cell, note) of
        the refused code no question reaches]): a refused statement, never run there
        (`runnable`), costs the questions whose functions read what it defines (`reach`),
        wherever it stands; one no question reaches costs nothing and is noted."""
        reached: dict[tuple[int, int], set[str]] = {}
        for q, fns in question_functions.items():
            others = {g for p, gs in question_functions.items() if p != q for g in gs}
            for f in fns:
                skip = set(swaps.get(f, [])) if swaps is not None else others
                for unit, part in self.reach(f, skip)[0]:
                    for line, _ in unit.refused:
                        if part is None or _within(part, line):
                            reached.setdefault((id(unit), line), set()).add(q)
        lost: dict[str, str] = {}
        notes: list[tuple[int, str]] = []
        for unit in self.units:
            for line, what in unit.refused:
                questions = sorted(reached.get((id(unit), line), ()))
                for q in questions:
                    lost.setdefault(q, _refusal_message(unit, line, what))
                if not questions:
                    notes.append((unit.cell, _refusal_message(unit, line, what, False)))
        return lost, notes

    def runnable(self, sources: list[str]) -> list[str]:
        """`sources` with every refused statement blanked out (a ``pass``, same lines): a
        practice grade's cells (under isolation they run as written)."""
        out = list(sources)
        for cell in sorted({u.cell for u in self.units if u.refused}):
            lines = _transform(sources[cell]).split("\n")
            for unit in self.units:
                if unit.cell == cell and unit.refused:
                    decorators = getattr(unit.node, "decorator_list", [])
                    first = min([unit.node.lineno] + [d.lineno for d in decorators])
                    last = unit.node.end_lineno or unit.node.lineno
                    lines[first - 1] = "pass"
                    for i in range(first, last):
                        lines[i] = ""
            out[cell] = "\n".join(lines)
        return out


def _where(unit: _Unit, line: int) -> str:
    return f"cell {unit.cell}, line {line}{', in ' + unit.owner if unit.owner else ''}"


def _refusal_message(unit: _Unit, line: int, what: str, costs: bool = True) -> str:
    return refused(what, _where(unit, line), costs)


def _within(part: ast.AST, line: int) -> bool:
    first = getattr(part, "lineno", 0)
    return first <= line <= (getattr(part, "end_lineno", None) or first)


def _word(node: ast.AST) -> str | None:
    """The name an attribute, a name, an import or ``getattr(x, "name")`` spells."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.alias):
        return (node.name or "").split(".")[-1]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
    ):
        return str(node.args[1].value)
    return None


def _shortcut(what: str, why: str, unit: _Unit, line: int) -> str:
    where = f"{unit.owner + ', ' if unit.owner else ''}cell {unit.cell}, line {line}"
    return shortcut(what, f"{why}; read from your code: {where}")


@functools.lru_cache(maxsize=1024)  # a pure function of the text: the same cells recur
def _transform(source: str) -> str:
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def _parse(source: str) -> ast.Module | None:
    """The cell's syntax tree, or None where Python cannot build one (a syntax error, a
    100 000-term sum: RecursionError, MemoryError): read as no statement, it runs unread in
    the child, where it fails on its own."""
    try:
        return ast.parse(_transform(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def scan(
    sources: list[str],
    trusted: Collection[str] = (),
    allowlist: Allowlist | None = None,
    source_checks: bool = True,
    answers: Collection[str] = (),
    hint_only: bool = False,
) -> Reading:
    """Read a submission's code cells; cells whose source is in `trusted` (the reference
    notebook's own cells) are not read against the allowlist, which is (unless given) the
    modules of `answer_allowlist` and the ``otter``/``attnbook`` names `trusted` imports;
    with the source checks off (`checks_on`), nothing is refused. `answers`: the questions'
    functions, which the reference's stand in for where another question calls them.
    `hint_only` (a grade for credit, in an isolated child): the findings are notes, every
    statement runs, so none is refused for reading what a refused one binds."""
    trusted = set(trusted)
    # off: the proof's attacks, the sandbox's tests (see NO_ALLOWLIST above)
    if not checks_on(source_checks):
        allowlist = Allowlist.nothing_refused()
    if allowlist is None:
        allowlist = Allowlist.from_reference(
            [t for t in (_parse(s) for s in trusted) if t is not None]
        )
    reading = Reading()
    trees = [(i, _parse(s), s in trusted) for i, s in enumerate(sources)]
    for index, tree, is_trusted in trees:
        for statement in tree.body if tree is not None else []:
            binds, declared = stored([statement])
            reads, writes = globals_read([statement], set())
            unit = _Unit(
                index,
                statement,
                is_trusted,
                binds | declared | writes,
                reads,
                imports(statement),
            )
            reading.units.append(unit)
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                reading.functions[statement.name] = len(reading.units) - 1
    bound = {b for u in reading.units for b in u.binds}
    for unit in reading.units:
        if unit.trusted:
            continue
        unit.refused = sorted(
            set(allowlist.problems(unit.node, bound - {"__builtins__"}))
        )
    if not hint_only:
        _refuse_dependents(reading.units, set(answers))
    for unit in reading.units:
        for line, what in unit.refused:
            reading.findings.append((unit.cell, line, unit.owner, what))
    return reading


def _refuse_dependents(units: list[_Unit], answers: set[str]) -> None:
    """Refuse, too, the statements that read a name only refused statements bind (they
    would fail, unrun, or run what was refused); not for a question's function, which the
    reference's replaces in another question's call (`swaps`): a refused one costs its own
    question, not the next one's."""
    changed = True
    while changed:
        kept = answers | {b for u in units if not u.refused for b in u.binds}
        lost = {b: u for u in units if u.refused for b in u.binds if b not in kept}
        changed = False
        for unit in units:
            used = sorted(unit.reads & set(lost))
            if used and not unit.refused and not unit.trusted:
                origin = lost[used[0]]
                unit.refused = [
                    (
                        unit.node.lineno,
                        f"uses {used[0]}, which only refused code binds (cell "
                        f"{origin.cell}, line {origin.refused[0][0]})",
                    )
                ]
                changed = True


def reference_swaps(
    reference: list[str], functions: dict[str, set[str]]
) -> dict[str, list[str]]:
    """Function -> the other questions' functions its reference calls (transitively): the
    ones that are the reference's while it runs; no others, so that no question gets the
    reference of another as an oracle."""
    defs = {
        n.name: n
        for tree in (_parse(s) for s in reference)
        if tree is not None
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    owner = {f: q for q, fs in functions.items() for f in fs}
    swaps = {}
    for f, q in owner.items():
        seen, todo = set(), [f]
        while todo:
            current = todo.pop()
            if current in seen or current not in defs:
                continue
            seen.add(current)
            todo += sorted(globals_read([defs[current]], set())[0] & set(defs))
        swaps[f] = sorted(g for g in seen if owner.get(g) not in (None, q))
    return swaps
