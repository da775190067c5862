"""The house rules of issue 28, item 6, that the grading engine decides beyond the values:

* the loop rule (``guarded(f, loops=False)``), read from the submitted source in the grader
  (`source_rules`) and from a live function's source in the student's process (`loop_rule`):
  a for/while loop or a comprehension in the function or a notebook function it calls fails,
  with the line; whole-array code and functions the grader swaps for the reference's pass;
* tensors on the ``meta`` device cross the wire (`wire`) as shape, dtype and device, both
  ways, and the memory rules (`verdicts`, `grading.guarded`) never call two meta tensors the
  same memory (they hold none): only identity counts there;
* the edges of the memory, random-state and process rules (`verdicts`, `sandbox._call`,
  `wire.update_in_place`): a square transpose is a view, not the input; arrays side by side
  share no memory; `global_torch_rng` excuses PyTorch's generator alone; a kept table
  returned again two calls later; `os.system`; a row written into an expanded input.

Cost: about a second (one short interpreter for the process events; no grading runs here;
the proofs grade the exercises).
"""

from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from attnbook_grader import reach, sandbox, source_rules, verdicts, wire
from attnbook_grader.rng import rng_states, set_rng_states
from attnbook.exercise_checks.grading import guarded
from attnbook.exercise_checks.loop_rule import first_loop, local_loop
from attnbook.exercise_checks.rules import RNG_NAMES, SHARED_RESULTS, moved_states

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


# ------------------------------------------------ the memory, random-state and process rules
# (round 5 of the code review: a square transpose, the scope of global_torch_rng, adjacent
# arrays, a kept table handed out again later, a command run through os.system)
def _child_call(namespace: dict, name: str, args: tuple, rules: dict) -> dict:
    """One call as the child answers it (`sandbox._call`, here in this process): the reply."""
    sent_args, sent_kwargs = wire.encode([list(args), {}])
    request = {"name": name, "args": sent_args, "kwargs": sent_kwargs}
    request.update(rng=wire.encode(rng_states()), rules=rules, grad=None, record=None)
    return sandbox._call(None, namespace, {}, request)


@pytest.mark.parametrize("lib", ["torch", "numpy"])
def test_a_transpose_of_a_square_input_is_a_view_not_the_input(lib):
    """Same first byte, shape and dtype, other strides: a new arrangement, allowed where
    views are; still a view where the question asks for new memory."""
    x = torch.arange(9.0).view(3, 3) if lib == "torch" else np.arange(9.0).reshape(3, 3)
    facts = sandbox.memory_facts({"x": x}, x.T)
    assert verdicts.returned_inputs(facts, {"new_object": True}) is None
    assert "a view of its input `x`" in verdicts.returned_inputs(
        facts, {"new_object": True, "no_views": True}
    )
    assert "returned its input `x`" in verdicts.returned_inputs(
        sandbox.memory_facts({"x": x}, x.T.T), {"new_object": True}
    )


def test_arrays_side_by_side_in_one_buffer_share_no_memory():
    """The input is one half of a buffer, the result the other: their bytes only touch."""
    buffer = np.arange(8.0)
    views = {"new_object": True, "no_views": True}
    for given, returned in ((buffer[:4], buffer[4:]), (buffer[4:], buffer[:4])):
        facts = sandbox.memory_facts({"x": given}, returned)
        assert verdicts.returned_inputs(facts, views) is None
        kept = sandbox.memory_facts({}, returned, [given])
        assert verdicts.shared_results(kept, {"separate_results": True}) is None
    overlapping = sandbox.memory_facts({"x": buffer[:5]}, buffer[4:])
    assert verdicts.returned_inputs(overlapping, views) is not None


def test_letting_pytorch_sample_leaves_numpy_and_random_guarded():
    """global_torch_rng lets a question draw from PyTorch's global generator, no other."""
    rules = {"global_torch_rng": True}
    draws = {"torch": lambda: torch.rand(1), "numpy": np.random.rand}
    draws["random"] = random.random
    saved = rng_states()
    # NumPy's state mid-block (seeded, one draw made): the next draw moves only its position,
    # not its key array, which a fingerprint of the keys alone would miss
    np.random.seed(0)
    np.random.rand()
    for what, draw in draws.items():
        before = rng_states()
        draw()
        moved = moved_states(before, rng_states())
        set_rng_states(before)
        assert moved == [what]
        if what == "torch":
            verdicts.house_rules([], moved, rules)  # allowed
            with pytest.raises(AssertionError, match="PyTorch's global generator"):
                verdicts.house_rules([], moved, {})
        else:
            with pytest.raises(AssertionError, match=re.escape(RNG_NAMES[what])):
                verdicts.house_rules([], moved, rules)
    set_rng_states(saved)


def test_a_table_handed_out_again_two_calls_later_is_caught(monkeypatch):
    """The child keeps a function's last results alive: one returned again after another
    call in between still shares memory with what the caller holds."""
    monkeypatch.setattr(sandbox, "_KEPT", {})
    tables, calls = [np.zeros(3), np.ones(3)], []

    def table(n):
        calls.append(n)
        return tables[len(calls) % 2]  # ones, zeros, ones again

    rules = {"separate_results": True}
    replies = [_child_call({"table": table}, "table", (3,), rules) for _ in range(3)]
    found = [verdicts.shared_results(reply["memory"], rules) for reply in replies]
    assert found == [None, None, SHARED_RESULTS]


_PROCESSES = """
import json, os, subprocess, sys
from attnbook_grader import sandbox, wire
sys.addaudithook(sandbox._audit)  # as the child does before it runs a cell
def system(n):
    os.system("true")
    return n
def popen(n):
    subprocess.run(["true"], check=True)
    return n
def quiet(n):
    return n
args, kwargs = wire.encode([[1], {}])
found = {}
for fn in (system, popen, quiet):
    request = {"name": fn.__name__, "args": args, "kwargs": kwargs, "rules": None,
               "grad": None, "record": None, "rng": wire.encode(sandbox.rng_states())}
    found[fn.__name__] = sandbox._call(None, {fn.__name__: fn}, {}, request)["events"]
print(json.dumps(found))
"""


def test_a_command_run_through_os_system_costs_the_question():
    """Every way to start a process is an event the child reports; the grader's verdict
    names it (a separate interpreter: an audit hook cannot be removed)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROCESSES], capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == {
        "system": ["os.system"],
        "popen": ["subprocess.Popen"],
        "quiet": [],
    }
    assert "(os.system)" in verdicts.process_events(found["system"])
    assert verdicts.process_events(found["quiet"]) is None


def test_a_write_into_a_row_of_an_expanded_input_is_not_written_back():
    """An expanded input (stride 0: its rows are one memory) crosses as one; the call may
    write a row of it (every row changes). The caller's copy cannot take a whole new value
    (copy_ into overlapping memory raises), so it is left as it was, and the changed-input
    rule, which compares the values sent and sent back, decides."""
    x = torch.zeros(1, 3).expand(3, 3)
    changed = wire.decode(wire.encode([x]))[0]
    assert changed.stride() == (0, 1)
    changed[0].fill_(1.0)
    sent_back = wire.decode(wire.encode([changed]))[0]
    wire.update_in_place(x, sent_back)
    assert not x.any() and sent_back.all()


def test_the_reference_swapped_in_is_called_as_the_students_own_function():
    from attnbook_grader.watched import as_called

    def own(weights, n, bos=True):  # the student's version, with a default
        return weights

    assert as_called(own, ("w", 5), {}) == (("w", 5, True), {})
    assert as_called(own, ("w",), {"n": 5, "bos": False}) == (("w", 5, False), {})
    # a call the student's own function refuses goes as it is (the reference decides)
    assert as_called(own, ("w",), {"x": 1}) == (("w",), {"x": 1})
    assert as_called(None, (1, 2), {"k": 3}) == ((1, 2), {"k": 3})


def test_a_named_routine_reached_through_a_star_import_is_read_as_that_routine():
    """A bare name no import the reader sees binds (a star import: refused in an answer cell
    anyway) is still the named routine when the question names it (review 68, M16)."""
    reading = source_rules.scan(
        [
            "from torch.nn.functional import *",
            "def mine(x):\n    return softmax(x, -1)",
        ],
        [],
    )
    found = reading.shortcut("mine", {"names": ["softmax"]})
    assert found is not None and "uses softmax" in found, found
    own = source_rules.scan(
        ["def softmax(x, d):\n    return x", "def mine(x):\n    return softmax(x, -1)"],
        [],
    )
    assert own.shortcut("mine", {"names": ["softmax"]}) is None  # the student's own
