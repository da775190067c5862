"""The house rules of issue 28, item 6, that the grading engine decides beyond the values:

* the loop rule (``guarded(f, loops=False)``), read from the submitted source in the grader
  (`source_rules`) and from a live function's source in the student's process (`loop_rule`):
  a for/while loop or a comprehension in the function or a notebook function it calls fails,
  with the line; whole-array code and functions the grader swaps for the reference's pass;
* tensors on the ``meta`` device cross the wire (`wire`) as shape, dtype and device, both
  ways, and the memory rules (`verdicts`, `grading.guarded`) never call two meta tensors the
  same memory (they hold none): only identity counts there.

Cost: a few milliseconds (no grading runs here; the proofs grade the exercises).
"""

from __future__ import annotations

import ast

import numpy as np
import pytest
import torch

from attnbook_grader import reach, sandbox, source_rules, verdicts, wire
from attnbook.exercise_checks.grading import guarded
from attnbook.exercise_checks.loop_rule import first_loop, local_loop

NO_LOOPS = {"loops": False}


# --------------------------------------------------------------------------- loops: source
@pytest.mark.parametrize(
    ("body", "kind", "line"),
    [
        ("    for t in range(3):\n        x = x + t\n    return x", "for loop", 2),
        ("    while x.sum() < 3:\n        x = x + 1\n    return x", "while loop", 2),
        ("    return np.array([v * 2 for v in x])", "comprehension", 2),
        ("    return {k: 1 for k in range(2)}", "comprehension", 2),
        ("    return np.stack(list(v for v in x))", "generator expression", 2),
        (
            "    def inner(y):\n        return [v for v in y]\n    return inner(x)",
            "comprehension",
            3,
        ),
    ],
)
def test_each_kind_of_loop_is_read_from_the_source(body, kind, line):
    source = f"import numpy as np\ndef f(x):\n{body}\n"
    found = source_rules.scan(["x = 1", source]).shortcut("f", NO_LOOPS)
    assert found is not None and found.startswith("loop:"), found
    assert kind in found and f"f, cell 1, line {line + 1}" in found, found
    assert (
        source_rules.scan([source]).shortcut("f", {}) is None
    )  # loops allowed by default


def test_a_loop_in_a_function_it_calls_counts_unless_swapped():
    source = (
        "import numpy as np\n"
        "def rates(d):\n    return np.array([1.0 / (i + 1) for i in range(d)])\n\n"
        "def angles(t, d):\n    return np.arange(t)[:, None] * rates(d)[None, :]\n"
    )
    reading = source_rules.scan([source])
    found = reading.shortcut("angles", NO_LOOPS)
    assert found is not None and "rates, cell 0, line 3" in found, found
    # while `angles` is graded, `rates` (another question's answer) is the reference's
    assert reading.shortcut("angles", NO_LOOPS, skip={"rates"}) is None


def test_whole_array_code_passes():
    source = (
        "import numpy as np\n"
        "def f(q, k):\n    dots = np.sum(q * k, axis=1)\n    return float(np.var(dots))\n"
    )
    assert source_rules.scan([source]).shortcut("f", NO_LOOPS) is None
    assert (
        first_loop(compile(source, "s", "exec", flags=0x400)) is None
    )  # ast.PyCF_ONLY_AST


def test_the_shortcut_message_comes_before_the_loop_message():
    source = "import torch\ndef f(x):\n    return [torch.tensor(v) for v in x]\n"
    found = source_rules.scan([source]).shortcut(
        "f", {"libraries": ["torch"], "loops": False}
    )
    assert found is not None and found.startswith("shortcut:"), found


# --------------------------------------------------------------------------- loops: local
def _rates_in_a_loop(d):
    out = []
    for i in range(0, d, 2):
        out.append(10000.0 ** (-i / d))
    return np.array(out)


def _angles_calling_a_loop(t, d):
    return np.arange(t)[:, None] * _rates_in_a_loop(d)[None, :]


def _angles_by_broadcasting(t, d):
    return np.arange(t)[:, None] * 10000.0 ** (-np.arange(0, d, 2)[None, :] / d)


def test_the_public_check_reads_the_live_function():
    with pytest.raises(
        AssertionError, match=r"^loop: .*for loop.*_rates_in_a_loop, line"
    ):
        guarded(_angles_calling_a_loop, loops=False)(3, 4)
    line = _rates_in_a_loop.__code__.co_firstlineno + 2  # the `for` line in this file
    message = local_loop(_rates_in_a_loop)
    assert message is not None and f"_rates_in_a_loop, line {line}" in message
    assert local_loop(_angles_by_broadcasting) is None
    np.testing.assert_allclose(
        guarded(_angles_by_broadcasting, loops=False)(3, 4),
        _angles_calling_a_loop(3, 4),
    )
    assert guarded(_angles_calling_a_loop)(2, 2).shape == (
        2,
        1,
    )  # loops allowed by default


def test_no_source_to_read_leaves_the_verdict_to_the_hidden_tests():
    assert local_loop(len) is None
    namespace: dict = {}
    exec("def made(x):\n    return [x for _ in range(2)]\n", namespace)  # noqa: S102
    assert (
        local_loop(namespace["made"]) is None
    )  # no source: the grader reads the notebook


# --------------------------------------------------------------------------- meta tensors
def test_meta_tensors_cross_the_wire_as_shape_dtype_and_device():
    x = torch.empty(2, 0, 3, dtype=torch.bfloat16, device="meta")
    y = torch.empty(4, 5, dtype=torch.float64, device="meta").requires_grad_()
    sent = wire.loads(wire.dumps({"v": wire.encode([x, (y, torch.ones(2))])}))
    a, (b, c) = wire.decode(sent["v"])
    assert a.device.type == b.device.type == "meta" and c.device.type == "cpu"
    assert (a.shape, a.dtype) == (x.shape, x.dtype) and (b.shape, b.dtype) == (
        y.shape,
        y.dtype,
    )
    assert b.requires_grad and not a.requires_grad
    assert "data" not in sent["v"][0]  # no numbers travel
    wire.update_in_place(x, a)  # nothing to copy: no error, x as it was
    assert x.device.type == "meta"


def test_the_memory_rules_on_meta_tensors_count_identity_only():
    x = torch.empty(2, 3, device="meta")
    same_shape = x.view(2, 3)  # a view on meta: no memory to compare, so it passes
    new = torch.empty(2, 3, device="meta")
    for result in (same_shape, new):
        facts = sandbox.memory_facts({"x": x}, result)
        rules = {"new_object": True, "no_views": True}
        assert verdicts.returned_inputs(facts, rules) is None
    facts = sandbox.memory_facts({"x": x}, x)
    assert verdicts.returned_inputs(facts, {"new_object": True}) is not None  # x itself
    out = guarded(lambda t: t.reshape(3, 2), no_views=True)(x)
    assert out.device.type == "meta" and out.shape == (3, 2)


def test_a_cpu_tensor_beside_meta_inputs_fails_loudly():
    def on_the_cpu(t):
        out = torch.empty(t.shape, dtype=t.dtype)  # no device=: the CPU
        out[:] = t
        return out

    with pytest.raises(NotImplementedError):
        guarded(on_the_cpu)(torch.empty(2, 2, device="meta"))


# --------------------------------------------------------------------------- separate results
_CACHE: dict = {}


def _cached_table(n):
    """A table kept between calls and handed out itself: the second call shares memory."""
    if n not in _CACHE:
        _CACHE[n] = np.arange(float(n))
    return _CACHE[n]


def _copied_table(n):
    return _cached_table(n).copy()


def test_two_results_that_share_memory_fail_in_the_students_process():
    checked = guarded(_cached_table, separate_results=True)
    first = checked(3)
    with pytest.raises(AssertionError, match="earlier call's result also holds"):
        checked(3)
    assert first.shape == (3,)
    copied = guarded(_copied_table, separate_results=True)
    assert [copied(3).sum() for _ in range(3)] == [3.0, 3.0, 3.0]
    assert guarded(_cached_table)(3) is _CACHE[3]  # the rule is off by default


def test_two_results_that_share_memory_fail_from_the_childs_facts():
    table = np.arange(6.0)
    rules = {"separate_results": True}
    facts = sandbox.memory_facts({"n": 3}, table[:3], [table, (np.ones(2), 1.0)])
    assert len(facts["earlier"]) == 3 and len(facts["results"]) == 1
    assert (
        verdicts.shared_results(facts, rules) is not None
    )  # a slice of an earlier table
    assert verdicts.shared_results(facts, {}) is None  # the rule is off by default
    fresh = sandbox.memory_facts({"n": 3}, table.copy(), [table])
    assert verdicts.shared_results(fresh, rules) is None
    tensor = torch.zeros(4)
    facts = sandbox.memory_facts({}, (tensor[1:], torch.ones(1)), [tensor])
    assert verdicts.shared_results(facts, rules) is not None  # one storage


def test_a_cell_the_parser_cannot_build_is_read_as_no_statement():
    """A 100 000-term sum exhausts Python's parser (RecursionError): the reading passes over
    that cell (it runs unread in the child and fails there) and reads the others."""
    huge = "total = " + " + ".join(["1"] * 100_000)
    reading = source_rules.scan(
        [huge, "def f(x):\n    return x\n"], source_checks=False
    )
    assert {u.cell for u in reading.units} == {1}
    assert "f" in reading.functions
    assert reading.runnable([huge, "y = 1"])[0] == huge


def test_what_the_child_sent_is_echoed_at_most_200_characters():
    """A callback name or a crash report comes from the submission's process: the grader's
    messages repeat at most 200 characters of it."""
    from attnbook_grader.session import _echo

    assert _echo("softmax") == "softmax"
    long = _echo("x" * 100_000)
    assert len(long) == 200 and long.endswith("...")


# --------------------------------------------------------------------------- names: source
# A correct exercise 10 notebook whose `find_heads` calls the student's own `induction_score`
# inside `int(...)` scored 84 % (issue 44): `int`, read by `induction_score`, counted as an
# object that every `int(...)` call of the notebook puts its argument into, and the name
# `induction_score` in that argument counted as the package's routine of that name.
_OWN = [
    "import torch",
    "def induction_score(weights, n):\n    first = int(n) + 1\n    return weights[first:]",
    "def find_heads(weights, n):\n    return int(induction_score(weights, n).argmax())",
]


def test_the_students_own_function_is_not_the_routine_it_is_named_after():
    reading = source_rules.scan(_OWN, trusted=_OWN[:1])
    rules = {"names": ["induction_score"]}
    assert reading.shortcut("induction_score", rules) is None
    assert reading.shortcut("find_heads", rules) is None  # its own, called by name
    # the routine itself, imported or read as an attribute, is still the routine
    imported = "from attnbook.induction import induction_score as score"
    uses = "def mine(weights, n):\n    return score(weights, n)"
    found = source_rules.scan([imported, uses]).shortcut("mine", rules)
    assert found is not None and "induction_score" in found
    aliased = "import torch.nn.functional as F\nsdpa = F.scaled_dot_product_attention"
    mine = "def mine(q):\n    return sdpa(q, q, q)"
    sdpa = {"names": ["scaled_dot_product_attention"]}
    assert source_rules.scan([aliased, mine]).shortcut("mine", sdpa) is not None


def test_a_builtin_holds_nothing_it_is_called_with():
    reading = source_rules.scan(_OWN, trusted=_OWN[:1])
    parts, names = reading.reach("induction_score")
    assert "int" in names
    # find_heads passes its inputs to induction_score (parts reached), not its int(...)
    reached = [ast.unparse(part) for _, part in parts if part is not None]
    assert reached and not any("argmax" in text for text in reached)


def test_what_an_isolated_child_enforces_is_not_read_from_the_source():
    rules = {
        "libraries": ["torch"],
        "names": ["induction_score", "scaled_dot_product_attention", "exp"],
        "allow_attnbook": False,
        "loops": False,
    }
    without_both = reach.left_to_read(rules, frozenset({"torch", "attnbook"}))
    # only the course package (and torch, ruled out) defines these two
    assert without_both["names"] == ["exp"]  # numpy.exp, reachable
    assert without_both["libraries"] == [] and without_both["allow_attnbook"] is True
    assert without_both["loops"] is False  # no process layout enforces the loop rule
    without_attnbook = reach.left_to_read(rules, frozenset({"attnbook"}))
    assert without_attnbook["names"] == ["scaled_dot_product_attention", "exp"]
    assert without_attnbook["libraries"] == ["torch"]
    assert reach.left_to_read(rules, frozenset())["allow_attnbook"] is False
