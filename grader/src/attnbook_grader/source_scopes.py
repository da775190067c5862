"""Scopes and flows of a submission's statements, read with `ast` for `source_rules`:
which global names a statement reads and binds (Python's scoping: functions,
classes, comprehensions, ``global``), which names an import binds, and where a statement can
put something into an object a name holds. Imports nothing of the grading package.
"""

from __future__ import annotations

import ast

__all__ = ["stored", "globals_read", "imports", "flows", "FUNCTIONS"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


# ----------------------------------------------------------------------------- scopes
def stored(body: list[ast.AST]) -> tuple[set[str], set[str]]:
    """(names a scope binds, names it declares global) from its statements, not looking
    into nested scopes (but walrus targets in comprehensions, which bind here)."""
    bound, declared = set(), set()
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared |= set(node.names) if isinstance(node, ast.Global) else set()
            bound |= set(node.names) if isinstance(node, ast.Nonlocal) else set()
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        if isinstance(node, _SCOPES):
            if not isinstance(node, ast.Lambda):
                bound.add(node.name)
            todo += _outer_parts(node)
            continue
        if isinstance(node, _COMPREHENSIONS):
            todo += [n.target for n in ast.walk(node) if isinstance(n, ast.NamedExpr)]
            todo += [g.iter for g in node.generators[:1]]
            continue
        todo += list(ast.iter_child_nodes(node))
    return bound - declared, declared


def _outer_parts(node: ast.AST) -> list[ast.AST]:
    """The parts of a def, lambda or class evaluated in the enclosing scope."""
    parts: list[ast.AST] = list(getattr(node, "decorator_list", []))
    args = getattr(node, "args", None)
    if isinstance(args, ast.arguments):
        parts += [d for d in [*args.defaults, *args.kw_defaults] if d is not None]
        every = [
            *args.posonlyargs,
            *args.args,
            *args.kwonlyargs,
            args.vararg,
            args.kwarg,
        ]
        parts += [a.annotation for a in every if a is not None and a.annotation]
    if isinstance(node, ast.ClassDef):
        parts += [*node.bases, *(k.value for k in node.keywords)]
    if getattr(node, "returns", None) is not None:
        parts.append(node.returns)  # type: ignore[attr-defined]
    return parts


def globals_read(nodes: list[ast.AST], local: set[str]) -> tuple[set[str], set[str]]:
    """(global names read, global names written through ``global``) by `nodes`, run in a
    scope whose own names are `local` (empty at module level)."""
    reads, writes = set(), set()
    todo = list(nodes)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in local:
                reads.add(node.id)
        if isinstance(node, _SCOPES):
            todo += _outer_parts(node)
            body: list[ast.AST] = (
                list(node.body) if isinstance(node.body, list) else [node.body]
            )
            own, declared = stored(body)
            if not isinstance(node, ast.ClassDef):
                args = node.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                own |= {a.arg for a in [*every, args.vararg, args.kwarg] if a}
            inner_local = (own | local) - declared
            if isinstance(node, ast.ClassDef):  # class names do not reach its methods
                inner_local = local - declared
                r, w = globals_read(
                    [n for n in body if not isinstance(n, FUNCTIONS)], local | own
                )
                reads |= r
                writes |= w
                body = [n for n in body if isinstance(n, FUNCTIONS)]
            r, w = globals_read(body, inner_local)
            reads |= r
            writes |= w | declared
            continue
        if isinstance(node, _COMPREHENSIONS):
            targets = {
                n.id
                for g in node.generators
                for n in ast.walk(g.target)
                if isinstance(n, ast.Name)
            }
            r, w = globals_read(list(ast.iter_child_nodes(node)), local | targets)
            reads |= r
            writes |= w
            continue
        todo += list(ast.iter_child_nodes(node))
    return reads, writes


def imports(node: ast.AST) -> dict[str, str]:
    found = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            found[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        for alias in node.names:
            found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


_PASSING = (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred, ast.IfExp, ast.BoolOp)
_BINDING = (
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.NamedExpr,
    ast.For,
    ast.AsyncFor,
    ast.withitem,
    ast.Return,
    ast.Yield,
    ast.YieldFrom,
    ast.Lambda,
)


# id of a statement -> (the statement, each node's parent by id, its names in the order
# of `ast.walk`): `flows` reads the same statements for every name whose reach is asked
# (`source_rules.Reading.reach`); the map was rebuilt each time. The statement is held,
# so its id is no other's while it is kept.
_trees: dict[int, tuple[ast.AST, dict[int, ast.AST], list[ast.Name]]] = {}
_KEPT = 4096  # statements kept (a few notebooks' worth)


def _tree(statement: ast.AST) -> tuple[dict[int, ast.AST], list[ast.Name]]:
    kept = _trees.get(id(statement))
    if kept is None or kept[0] is not statement:
        if len(_trees) >= _KEPT:
            _trees.clear()
        nodes = list(ast.walk(statement))
        parents = {id(c): n for n in nodes for c in ast.iter_child_nodes(n)}
        names = [n for n in nodes if isinstance(n, ast.Name)]
        kept = _trees[id(statement)] = (statement, parents, names)
    return kept[1], kept[2]


def flows(
    statement: ast.stmt, reads: set[str], imported: set[str]
) -> dict[str, list[ast.AST | None]]:
    """name -> the parts of `statement` that can put something into the object the name holds:
    None for the whole statement (an attribute or item written, an alias bound), else a
    node: the arguments it is called with, or, where it is passed to a call, the other
    arguments and (unless it is an imported routine, `imported`) the function called."""
    parents, names = _tree(statement)
    found: dict[str, list[ast.AST | None]] = {}
    for node in names:
        if node.id not in reads:
            continue
        chain: ast.AST = node
        while isinstance(parents.get(id(chain)), (ast.Attribute, ast.Subscript)):
            if getattr(parents[id(chain)], "value", None) is not chain:
                break
            chain = parents[id(chain)]
        parent = parents.get(id(chain))
        if chain is not node and isinstance(
            getattr(chain, "ctx", None), (ast.Store, ast.Del)
        ):
            found.setdefault(node.id, []).append(None)
            continue
        if isinstance(parent, ast.Call) and parent.func is chain:
            parts = [*parent.args, *(k.value for k in parent.keywords)]
            found.setdefault(node.id, []).extend(parts)
            continue
        while isinstance(parent, _PASSING):
            chain, parent = parent, parents.get(id(parent))
        if isinstance(parent, ast.keyword):
            parent = parents.get(id(parent))
        if isinstance(parent, ast.Call):
            others = [a for a in [*parent.args, *parent.keywords] if a is not chain]
            root = parent.func
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if not (isinstance(root, ast.Name) and root.id in imported):
                others.append(parent.func)
            found.setdefault(node.id, []).extend(others)
        elif isinstance(parent, _BINDING):
            found.setdefault(node.id, []).append(None)  # an alias
    return found
