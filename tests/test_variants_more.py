"""More pools of variants (tests/test_variants.py holds the first ones): what each task of a
pool renders, and that the tasks' answers differ. Fast: nothing is graded here
(tests/test_variants_class.py grades a class)."""

from __future__ import annotations

import json

import nbformat
import torch

from attnbook_grader import variants
from tools.exercise_build import MASTERS
from tools.exercise_variants import pool, render_notebook

SECRET = b"a course secret for the tests"
EX08 = "ex08_gqa"


def _ids(n: int) -> list[str]:
    return [f"{1000 + 37 * i}" for i in range(n)]


def _function(nb: nbformat.NotebookNode, name: str):
    """The function `name` defined by `nb`'s code cells (the reference's answer)."""
    found = [c.source for c in nb.cells if f"def {name}(" in c.source]
    scope: dict = {"torch": torch}
    exec(found[0], scope)  # noqa: S102 - the course's own master
    return scope[name]


def test_exercise_8_gives_each_task_its_own_groups():
    """Question 1's wording, stub and solution follow the task: the book's contiguous groups
    (query head h reads key/value head h // g, copies in place), strided ones (h % H_kv, the
    heads tiled), or the book's groups of keys and values stored token by token,
    (B, T, H_kv, d), which question 2 then receives so too; the example's head counts and
    seed are the variant's, never a single key/value head or groups of one (where the
    grouped and strided orders would coincide)."""
    found = pool(EX08)
    book = {"exercise": EX08, "task": "grouped", "H_kv": 2, "group": 2, "seed": 0}
    assert variants.reserved(found) == book
    assert found["questions"] == ["q1"] and found["roster"] == ["strided", "tokens"]
    chosen = [variants.choose(SECRET, EX08, [i], found) for i in _ids(30)]
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    assert {v["task"] for v in chosen} == {"strided", "tokens"}
    assert {(v["H_kv"], v["group"]) for v in chosen} == {(2, 2), (2, 3), (3, 2), (3, 3)}
    nb = nbformat.read(MASTERS / f"{EX08}.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert variants.stated([c.source for c in nb.cells]) == book
    assert 'B, H_kv, T, d_k = 2, VARIANT["H_kv"], 6, 8' in text
    variant = {"exercise": EX08, "task": "strided", "H_kv": 3, "group": 2, "seed": 7}
    out = render_notebook(nb, variant, found)
    text = "\n".join(c.source for c in out.cells)
    assert variants.stated([c.source for c in out.cells]) == variant
    assert (
        "**strided groups, query head $h$ uses key/value head $h \\bmod H_{kv}$**"
        in text
    )
    assert "the book's: contiguous groups" not in text
    assert "Head h of the result is head h % H_kv of x (the heads tiled)." in text
    assert "x[:, None].expand(B, n_rep, H_kv, T, d)" in text
    assert "x[:, :, None].expand(" not in text and "\\lfloor h/g \\rfloor" not in text
    assert "k = torch.randn(B, H_kv, T, d_k)" in text
    variant = {**variant, "task": "tokens"}
    out = render_notebook(nb, variant, found)
    text = "\n".join(c.source for c in out.cells)
    assert variants.stated([c.source for c in out.cells]) == variant
    assert "with keys and values stored token by token, $(B, T, H_{kv}, d_k)$**" in text
    assert "k = torch.randn(B, T, H_kv, d_k)  # stored token by token" in text
    assert "x[:, :, :, None].expand(B, T, H_kv, n_rep, d)" in text
    assert "    n_rep = q.shape[1] // k.shape[2]" in text
    assert "expand_kv(t, n_rep).transpose(1, 2) for t in (k, v)" in text
    assert "gqa_attention(same_q, k[:, :, :1], v[:, :, :1], causal=True)" in text


def test_exercise_8_tasks_answer_differently():
    """The worked solutions of the three tasks give different heads wherever a roster
    variant can ask (2 or 3 key/value heads, groups of 2 or 3), each its task's rule, and
    none answers another task's keys: the book's and the strided one copy along axis 2 of
    token-major keys (their tokens), the token-major one along axis 2 of the book's (theirs)."""
    found = pool(EX08)
    nb = nbformat.read(MASTERS / f"{EX08}.ipynb", as_version=4)
    at = {"exercise": EX08, "H_kv": 2, "group": 2, "seed": 1}
    grouped = _function(nb, "expand_kv")
    tiled = _function(
        render_notebook(nb, {**at, "task": "strided"}, found), "expand_kv"
    )
    tokens = _function(
        render_notebook(nb, {**at, "task": "tokens"}, found), "expand_kv"
    )
    for H_kv in (2, 3):
        for n_rep in (2, 3):
            heads = torch.arange(float(H_kv)).view(1, H_kv, 1, 1)
            rows = [grouped(heads, n_rep).flatten(), tiled(heads, n_rep).flatten()]
            assert rows[0].tolist() == [h // n_rep for h in range(H_kv * n_rep)]
            assert rows[1].tolist() == [h % H_kv for h in range(H_kv * n_rep)]
            assert not torch.equal(*rows)
            keys = torch.randn(2, 5, H_kv, 3)  # (B, T, H_kv, d): token by token
            want = keys.repeat_interleave(n_rep, dim=2)
            assert torch.equal(tokens(keys, n_rep), want)
            for other in (grouped, tiled):
                assert other(keys, n_rep).shape != want.shape
