"""The shortcut rules held by what the answer's process can reach (issue 44), and the system
calls it may not make.

* `reach`: the rules are read from the hidden tests' `guarded` calls; a question that rules
  PyTorch out runs in a child that never held it, one that rules the course package out in
  a child whose view lacks its modules; the setup cell's module names are not lent;
* the five ways the security review reached ruled-out code (a name lent by the setup, a
  string run by `numpy.testing`, a `match` pattern reading attributes, the builtins module
  through an attribute path, a routine smuggled through a NumPy dict and `map`), graded
  with every source rule off: 0 where the question rules the package out, full marks where
  it does not (the same cells: the attack itself works, the process is what stops it);
* `seccomp`: its call numbers are the kernel's, and a process that installed the filter
  cannot make a namespace, mount, trace or open a socket, at the chroot level create a file,
  and can still read, compute and write to what it holds.

* a routine a question names in a library its answers keep (PyTorch's fused attention) is
  taken away in the child (`disarm`): six spellings of it fail there, and work in a question
  that does not name it.

Cost: 148 s on the shared 2-core machine at load ~20 (an upper bound: the process servers,
then nine gradings of a tiny exercise with three children each).
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attnbook_grader import child, jail, reach, seccomp, source_rules
from attnbook_grader.engine import Exercise, grade_notebook, reference_session

TEST = """from otter.test_files import test_case

OK_FORMAT = False

name = "{q}"
points = 2

@test_case(points=2, hidden=True)
def test_it({fn}):
    from attnbook.exercise_checks.grading import guarded
    import numpy as np
    checked = guarded({fn}, {rule})
    np.testing.assert_allclose(checked(np.arange(3.0)), {k} * np.arange(3.0))
"""
SETUP = "import importlib, os, sys\nimport numpy as np"
REFERENCE = [
    SETUP,
    "def double(x):\n    return 2 * x",
    'grader.check("q1")',
    "def twice(x):\n    return x + x",
    'grader.check("q2")',
    "def thrice(x):\n    return 3 * x",
    'grader.check("q3")',
]


def test_the_rules_are_read_from_the_tests_guarded_calls():
    tests = {
        "q1": TEST.format(q="q1", fn="f", rule='libraries=("torch", "scipy")', k=2),
        "q2": TEST.format(q="q2", fn="f", rule='names=("softmax",)', k=2),
        "q3": TEST.format(q="q3", fn="f", rule="allow_attnbook=True", k=2),
        "q4": "def test_plain(f):\n    assert f(1) == 2\n",
    }
    found = reach.question_reach(tests)
    assert found == {
        "q1": {"torch", "scipy", "attnbook"},
        "q2": {"attnbook"},
        "q3": set(),
        "q4": set(),
    }
    assert reach.groups(found)[frozenset({"attnbook"})] == ["q2"]
    hidden = reach.hidden(frozenset({"attnbook", "torch"}))
    names = {os.path.basename(p) for p in hidden}
    assert {"kvquant.py", "induction.py", "induction_run.py", "torch"} <= names
    assert not names & {"exercise_checks", "plot.py", "__init__.py"}


def test_a_loaded_ruled_out_module_is_refused_and_lent_modules_are_removed():
    with pytest.raises(RuntimeError, match="torch"):
        reach.check_absent(frozenset({"torch"}))  # this process holds PyTorch
    reach.check_absent(frozenset({"no_such_package"}))
    import json

    namespace = {"np": "kept", "json": json, "x": 1}
    before = {"np": "kept"}
    reach.scrub_lent(namespace, before, frozenset({"numpy"}))
    assert namespace == {"np": "kept", "x": 1}


# ----------------------------------------------------------------------- the five classes
_USE_TORCH = "T.mul(T.from_numpy(x), {k}).numpy()"
SPELLINGS = {
    "setup's sys": "def {fn}(x):\n    T = sys.modules['torch']\n    return "
    + _USE_TORCH,
    "setup's importlib": "def {fn}(x):\n    T = importlib.import_module('torch')\n"
    "    return " + _USE_TORCH,
    "its own sys": "import sys as _S\ndef {fn}(x):\n    T = _S.modules['torch']\n"
    "    return " + _USE_TORCH,
    "numpy.testing.measure": "np.testing.measure("
    "'import torch as T\\ndef {fn}(x):\\n    return " + _USE_TORCH + "', 1)",
    "match attributes": "match print:\n    case object(__self__=_b):\n        pass\n"
    "match _b:\n    case object(__import__=_imp):\n        pass\n"
    "def {fn}(x):\n    T = _imp('torch')\n    return " + _USE_TORCH,
    "builtins by a path": "import matplotlib.backend_tools as _bt\n"
    "def {fn}(x):\n    T = _bt.enum.bltns.__import__('torch')\n    return "
    + _USE_TORCH,
    "dict item and map": "import torch as _t\nnp.sctypeDict['_s'] = _t.mul\n"
    "def {fn}(x):\n    T = _t\n"
    "    return list(map(np.sctypeDict['_s'], [T.from_numpy(x)], [{k}]))[0].numpy()",
}


def _nb(cells: list[str]) -> dict:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    for cell in nb.cells:
        cell.metadata["tags"] = ["otter_assign_solution_cell"]
    return nb


@pytest.fixture(scope="module")
def ruled():
    """q1 `double` rules PyTorch (and attnbook) out, q2 `twice` attnbook only, q3 `thrice`
    nothing."""
    tests = {
        "q1": TEST.format(q="q1", fn="double", rule='libraries=("torch",)', k=2),
        "q2": TEST.format(q="q2", fn="twice", rule="", k=2),
        "q3": TEST.format(q="q3", fn="thrice", rule="allow_attnbook=True", k=3),
    }
    exercise = Exercise.load(tests, _nb(REFERENCE))
    session = reference_session(exercise)
    yield exercise, session
    session.close()


def _grade(ruled, monkeypatch, cells: dict[int, str]) -> dict:
    exercise, session = ruled
    monkeypatch.setenv(source_rules.NO_ALLOWLIST, "1")  # the process alone must hold
    monkeypatch.setattr(child, "CALL_SECONDS", 20.0)
    sources = list(REFERENCE)
    for index, text in cells.items():
        sources[index] = text
    return grade_notebook(exercise, sources, session, 120, source_checks=False)


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_each_spelling_reaches_nothing_where_torch_is_ruled_out(
    ruled, monkeypatch, spelling
):
    code = SPELLINGS[spelling]
    cells = {1: code.format(fn="double", k=2), 3: code.format(fn="twice", k=2)}
    result = _grade(ruled, monkeypatch, cells)
    assert result["status"] == "ok", result
    # q2 allows PyTorch: the same spelling works there, so the attack itself is sound;
    # but no child finds the setup cell's module names
    lent = spelling.startswith("setup's")
    expected = {"q1": 0.0, "q2": 0.0 if lent else 2.0, "q3": 2.0}
    assert result["questions"] == expected, result
    children = result["isolation"]["children"]
    assert {"questions": ["q1"], "without": ["attnbook", "torch"]} in children


@pytest.mark.parametrize("how", ["namespaces", "chroot"])
def test_the_course_package_is_not_there_where_it_is_ruled_out(ruled, monkeypatch, how):
    if how == "chroot" and os.geteuid() != 0:
        pytest.skip("the chroot level needs root")
    if jail.level() is None:
        pytest.skip("no isolation on this machine")
    monkeypatch.setattr(jail, "_level", [how])
    use = (
        "def {fn}(x):\n    import attnbook.kvquant as kv\n"
        "    assert kv.__name__\n    return {k} * x"
    )
    probe = (
        "import sys as _s\n_seen = sorted(m for m in _s.modules if m.startswith("
        "('torch', 'scipy', 'attnbook.kvquant')))\n"
        "def double(x):\n    assert not _seen, _seen\n    return 2 * x"
    )
    result = _grade(
        ruled,
        monkeypatch,
        {
            1: probe,
            3: use.format(fn="twice", k=1) + " * 2",
            5: use.format(fn="thrice", k=3),
        },
    )
    # nothing ruled out is loaded in q1's process; q2 cannot import the package's
    # solutions, q3 (which allows the package) can, where there are files to import
    q3 = 2.0 if how == "namespaces" else 0.0  # chroot: only what the server loaded
    assert result["questions"] == {"q1": 2.0, "q2": 0.0, "q3": q3}, result
    assert result["isolation"]["level"] == how
    assert "seccomp" in result["isolation"]["hardening"]


# ----------------------------------------------------------------------------- seccomp
HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_the_filters_call_numbers_are_the_kernels(machine):
    header = HEADERS[machine]
    if not header.exists():
        pytest.skip(f"{header} is not installed")
    table = dict(re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", header.read_text()))
    arch = seccomp.ARCHES[machine]
    named = {**arch["refused"], **arch["create"], "clone": arch["clone"]}
    named["clone3"] = arch["clone3"]
    wrong = {n: v for n, v in named.items() if table.get(n) != str(v)}
    assert not wrong, wrong
    assert {"unshare", "setns", "mount", "ptrace", "bpf", "keyctl", "socket"} <= set(
        arch["refused"]
    )


def _in_filtered_child(how: str, tmp_path: Path) -> dict[str, int]:
    """errno (0: allowed) of each attempt, in a forked process that installed the filter."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        found: dict[str, int] = {}
        try:
            seccomp.harden(how)
            libc = ctypes.CDLL(None, use_errno=True)

            def call(name: str, fn) -> None:  # noqa: ANN001
                try:
                    result = fn()
                    found[name] = ctypes.get_errno() if result == -1 else 0
                except OSError as err:
                    found[name] = err.errno or -1

            call("unshare", lambda: libc.unshare(0x10000000))  # CLONE_NEWUSER
            target = str(tmp_path).encode()
            call("mount", lambda: libc.mount(b"x", target, b"tmpfs", 0, None))
            call("ptrace", lambda: libc.ptrace(0, 0, 0, 0))  # PTRACE_TRACEME
            call("socket", lambda: socket.socket(socket.AF_INET).close())
            call("read", lambda: len(Path(__file__).read_text()) and 0)
            call("create", lambda: (tmp_path / "new").write_text("x") and 0)
            call("write", lambda: os.write(write, b"") and 0)
        except BaseException:  # noqa: BLE001
            found["harden"] = -1
        os.write(write, repr(found).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        text = pipe.read().decode()
    os.waitpid(pid, 0)
    import ast

    return ast.literal_eval(text)


@pytest.mark.skipif(os.uname().machine not in seccomp.ARCHES, reason="unknown arch")
@pytest.mark.parametrize("how", ["namespaces", "chroot"])
def test_the_filter_refuses_what_a_notebook_never_needs(how, tmp_path):
    found = _in_filtered_child(how, tmp_path)
    for name in ("unshare", "mount", "ptrace", "socket"):
        assert found[name] == errno.EPERM, found
    assert found["read"] == found["write"] == 0, found
    assert found["create"] == (errno.EPERM if how == "chroot" else 0), found


def test_a_reference_whose_questions_all_rule_torch_out_runs_without_it(ruled):
    """Exercise 2's memory on Gradescope (issue 44): where every question rules PyTorch out,
    the reference is forked from the server that never imported it (the usual one, PyTorch
    and all, need not start); and the meta device's modules are preloaded only where a test
    names that device (`servers.want_meta`)."""
    import numpy as np

    from attnbook_grader import servers, wire
    from attnbook_grader.engine import RemoteFunction

    only = {"q1": TEST.format(q="q1", fn="double", rule='libraries=("torch",)', k=2)}
    probe = (
        "import sys\nloaded = sorted(m for m in sys.modules if m.startswith('torch'))"
    )
    exercise = Exercise.load(only, _nb([*REFERENCE[:3], probe]))
    session = reference_session(exercise)
    try:
        assert session.server is servers._servers[frozenset({"torch"})]
        assert wire.decode(session.describe("loaded")["value"]) == []
        doubled = RemoteFunction(session, "double")(np.arange(3.0))
        assert doubled.tolist() == [0.0, 2.0, 4.0]
    finally:
        session.close()
    wanted = servers._meta["wanted"]
    try:
        servers.want_meta({"q1": "metadata = {}"})
        assert servers._meta["wanted"] is False
        servers.want_meta({"q1": "x.to('meta')", "q2": ""})
        assert servers._meta["wanted"] is True
    finally:
        servers._meta["wanted"] = wanted


# ------------------------------------------- a routine of a library the answers may use
ATTEND_TEST = """from otter.test_files import test_case

OK_FORMAT = False

name = "{q}"
points = 2

@test_case(points=2, hidden=True)
def test_it({fn}):
    from attnbook.exercise_checks.grading import guarded
    import torch
    checked = guarded({fn}, {rule})
    q = torch.ones(1, 1, 2, 4)  # every weight 1/2: the output is v
    torch.testing.assert_close(checked(q), q)
"""
ATTEND = "def {fn}(q):\n    return torch.softmax(q @ q.mT / 2, -1) @ q"
ATTEND_REFERENCE = [
    "import torch",
    ATTEND.format(fn="attend"),
    'grader.check("q1")',
    ATTEND.format(fn="attend_freely"),
    'grader.check("q2")',
]
_MHA = (
    "    with torch.random.fork_rng():  # its initialisation leaves the global RNG alone\n"
    "        m = torch.nn.MultiheadAttention(4, 1, bias=False, batch_first=True)\n"
    "    m.in_proj_weight.data = torch.eye(4).repeat(3, 1)\n"
    "    m.out_proj.weight.data = torch.eye(4)\n"
    "    with torch.no_grad():\n"
    "        return m(q[:, 0], q[:, 0], q[:, 0])[0][:, None]"
)
ROUTINE_SPELLINGS = {  # each answers q1 and q2 with PyTorch's own attention
    "F": "    return torch.nn.functional.scaled_dot_product_attention(q, q, q)",
    "torch._C._nn": "    return torch._C._nn.scaled_dot_product_attention(q, q, q)",
    "torch.ops.aten": "    return torch.ops.aten.scaled_dot_product_attention(q, q, q)",
    "the CPU kernel": "    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu("
    "q, q, q)[0]",
    "a dict item": "    f = vars(torch.nn.functional)['scaled_dot_' + 'product_attention']\n"
    "    return f(q, q, q)",
    "nn.MultiheadAttention": _MHA,
}


@pytest.fixture(scope="module")
def routine_ruled():
    """q1 `attend` names PyTorch's attention routines (PyTorch itself allowed), q2
    `attend_freely` names none."""
    rule = 'names=("scaled_dot_product_attention", "multi_head_attention_forward")'
    tests = {
        "q1": ATTEND_TEST.format(q="q1", fn="attend", rule=rule),
        "q2": ATTEND_TEST.format(q="q2", fn="attend_freely", rule=""),
    }
    exercise = Exercise.load(tests, _nb(ATTEND_REFERENCE))
    session = reference_session(exercise)
    yield exercise, session
    session.close()


def test_a_named_routine_of_an_allowed_library_is_a_ruled_out_entry(routine_ruled):
    exercise, _ = routine_ruled
    taken = {
        "routine:scaled_dot_product_attention",
        "routine:multi_head_attention_forward",
    }
    assert exercise.reach == {"q1": {"attnbook"} | taken, "q2": {"attnbook"}}
    rules = {"names": ["scaled_dot_product_attention", "softmax"], "libraries": []}
    # read from the source only where the child does not take it away (softmax: compiled,
    # no kernel family listed)
    assert reach.left_to_read(rules, frozenset(exercise.reach["q1"]))["names"] == [
        "softmax"
    ]
    assert reach.hidden(frozenset(taken)) == []  # no file hidden for a routine


@pytest.mark.parametrize("spelling", sorted(ROUTINE_SPELLINGS))
def test_each_spelling_of_a_named_routine_fails_where_it_is_ruled_out(
    routine_ruled, monkeypatch, spelling
):
    exercise, session = routine_ruled
    monkeypatch.setenv(source_rules.NO_ALLOWLIST, "1")  # the process alone must hold
    body = ROUTINE_SPELLINGS[spelling]
    sources = list(ATTEND_REFERENCE)
    sources[1] = f"def attend(q):\n{body}"
    sources[3] = f"def attend_freely(q):\n{body}"
    result = grade_notebook(exercise, sources, session, 120, source_checks=False)
    assert result["status"] == "ok", result
    # q2 names no routine: the same code scores there, so the spelling itself works
    assert result["questions"] == {"q1": 0.0, "q2": 2.0}, result
    failed = [t["message"] for t in result["tests"] if not t["passed"]]
    assert any("is ruled out in this question" in m for m in failed) or all(
        t["hidden"] for t in result["tests"] if not t["passed"]
    ), failed


QUANTIZER_SPELLINGS = {  # each quantizes x with one of PyTorch's own routines
    "torch": "torch.quantize_per_tensor(x, 0.1, 0, torch.quint8)",
    "per channel": "torch.quantize_per_channel(x, torch.ones(2) / 10, torch.zeros(2)"
    ".long(), 0, torch.quint8)",
    "torch.ops.aten": "torch.ops.aten.quantize_per_tensor(x, 0.1, 0, torch.quint8)",
    "fake quantize": "torch.fake_quantize_per_tensor_affine(x, 0.1, 0, 0, 255)",
    "fake, per channel": "torch.fake_quantize_per_channel_affine(x, torch.ones(2) / "
    "10, torch.zeros(2, dtype=torch.int32), 0, 0, 255)",
    "dynamic": "torch.quantize_per_tensor_dynamic(x, torch.quint8, False)",
}


def test_pytorchs_quantizers_are_taken_away_and_rounding_stays():
    """Exercise 9 q1 rules out PyTorch's quantizers (PyTorch itself allowed): after
    `disarm`, every spelling of them raises the rule's message in the child's process,
    while the arithmetic a hand-written quantizer needs still works."""
    probe = (
        "import torch\n"
        "from attnbook_grader import disarm\n"
        "x = torch.rand(2, 3)\n"
        f"spellings = {QUANTIZER_SPELLINGS!r}\n"
        "for name, expression in spellings.items():\n"
        "    eval(expression)  # each works before\n"
        "taken = disarm.disarm(['quantize_per_channel', 'quantize_per_tensor'])\n"
        "assert taken == ['quantize_per_channel', 'quantize_per_tensor'], taken\n"
        "for name, expression in spellings.items():\n"
        "    try:\n"
        "        eval(expression)\n"
        "    except RuntimeError as err:\n"
        "        assert 'ruled out' in str(err), (name, err)\n"
        "    else:\n"
        "        raise AssertionError(f'{name} still quantizes')\n"
        "codes = ((x - x.min()) / (x.max() - x.min()) * 15).round().clamp(0, 15)\n"
        "assert codes.to(torch.uint8).max() <= 15\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
