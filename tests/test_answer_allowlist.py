"""The allowlist of answer cells and the reach of a function, read from the source
(`attnbook_grader.source_rules`, `answer_allowlist`; issue 36, item 2).

Every way the grading security review found (and more) to call a forbidden routine from an
answer, ex01's softmax through ``torch.softmax`` and ex09's quantiser through the course
package, is refused or caught as a shortcut, with the line named; the same answers written
honestly in other styles (loops, helpers, classes, data bound beside them) pass; and no
question gets another question's reference as an oracle (`reference_swaps`).
Cost: well under a second (no grading runs here).
"""

from __future__ import annotations

import os as _os_module
from os.path import join as _join

import pytest

from attnbook_grader import source_rules

SETUP = (
    "import numpy as np\nimport otter\nfrom attnbook.exercise_checks import tests_dir"
)
TORCH_SETUP = (
    "import otter\nimport torch\nfrom attnbook.exercise_checks import tests_dir"
)
NUMPY_ONLY = {"libraries": ["torch", "scipy"]}
Q1 = {"q1": {"scores_to_weights"}, "q2": {"attention"}}

# ex01 q1: scores_to_weights through torch.softmax, each spelling the review lists, and more.
# (cell source, the line the verdict must name)
SIDESTEPS = {
    "plain": (
        "import torch\ndef scores_to_weights(s):\n    return torch.softmax(s, -1)",
        3,
    ),
    "tuple unpacking": (
        "import torch\nsm, _ = torch.softmax, 0\n"
        "def scores_to_weights(s):\n    return sm(s, -1)",
        2,
    ),
    "default argument": (
        "import torch\ndef scores_to_weights(s, f=torch.softmax):\n    return f(s, -1)",
        2,
    ),
    "class attribute": (
        "import torch\nclass H:\n    f = torch.softmax\n"
        "def scores_to_weights(s):\n    return H.f(s, -1)",
        3,
    ),
    "walrus": (
        "import torch\nif (sm := torch.softmax):\n    pass\n"
        "def scores_to_weights(s):\n    return sm(s, -1)",
        2,
    ),
    "for target": (
        "import torch\nfor sm in [torch.softmax]:\n    pass\n"
        "def scores_to_weights(s):\n    return sm(s, -1)",
        2,
    ),
    "decorator": (
        "import torch\n@lambda g: (lambda s: torch.softmax(s, -1))\n"
        "def scores_to_weights(s):\n    return s",
        2,
    ),
    "helper under if": (
        "import torch\nif True:\n    def helper(s):\n        return torch.softmax(s, -1)\n"
        "def scores_to_weights(s):\n    return helper(s)",
        4,
    ),
    "method": (
        "import torch\nclass Soft:\n    def run(self, s):\n        return torch.softmax(s, -1)\n"
        "def scores_to_weights(s):\n    return Soft().run(s)",
        4,
    ),
    "a list filled later": (
        "import torch\nfns = []\nfns.append(torch.softmax)\n"
        "def scores_to_weights(s):\n    return fns[0](s, -1)",
        3,
    ),
    "a mutable default filled by a call": (
        "import torch\ndef scores_to_weights(s, _k=[]):\n"
        "    if callable(s):\n        _k.append(s)\n        return None\n"
        "    return _k[0](s, -1)\nscores_to_weights(torch.softmax)",
        7,
    ),
    "a global written by another function": (
        "import torch\nSM = None\ndef setup():\n    global SM\n    SM = torch.softmax\n"
        "setup()\ndef scores_to_weights(s):\n    return SM(s, -1)",
        5,
    ),
    "an alias of a module": (
        "import torch\nt = torch\ndef scores_to_weights(s):\n    return t.softmax(s, -1)",
        2,
    ),
}
SIDESTEPS["functools.partial"] = (
    "from functools import partial\nimport torch\nsm = partial(torch.softmax, dim=-1)\n"
    "def scores_to_weights(s):\n    return sm(s)",
    3,
)
REFUSED = {
    "reduce(getattr)": (
        "import functools, torch\n"
        "def scores_to_weights(s):\n"
        "    return functools.reduce(getattr, ['softmax'], torch)(s, -1)",
        3,
    ),
    "typing.get_type_hints (evaluates a string)": (
        "import typing\ndef scores_to_weights(s: 'np.exp'):\n"
        "    return typing.get_type_hints(scores_to_weights)",
        3,
    ),
    "getattr by a built name": (
        "import torch\ndef scores_to_weights(s):\n"
        "    return getattr(torch, 'soft' + 'max')(s, -1)",
        3,
    ),
    "map(getattr)": (
        "import torch\ndef scores_to_weights(s):\n"
        "    return list(map(getattr, [torch], ['softmax']))[0](s, -1)",
        3,
    ),
    "a pickle through ForkingPickler": (
        "from multiprocessing.reduction import ForkingPickler\n"
        "f = ForkingPickler.loads(b'...')\ndef scores_to_weights(s):\n    return f(s)",
        1,
    ),
    "a pickle through torch": (
        "import torch\nf = torch.multiprocessing.reduction.ForkingPickler.loads(b'.')\n"
        "def scores_to_weights(s):\n    return f(s)",
        2,
    ),
    "inspect.getmodule": (
        "import inspect\nm = inspect.getmodule(otter.Notebook)\n"
        "def scores_to_weights(s):\n    return m(s)",
        1,
    ),
    "operator.attrgetter": (
        "import operator, torch\nsm = operator.attrgetter('softmax')(torch)\n"
        "def scores_to_weights(s):\n    return sm(s, -1)",
        2,
    ),
    "operator.methodcaller, imported by name": (
        "from operator import methodcaller\n"
        "def scores_to_weights(s):\n    return methodcaller('softmax', -1)(s)",
        1,
    ),
    "a dunder that is no operator's": (
        "def scores_to_weights(s):\n    return s.__class__(s)",
        2,
    ),
    "vars()": (
        "import torch\ndef scores_to_weights(s):\n    return vars(torch)['softmax'](s, -1)",
        3,
    ),
    "__dict__": (
        "import torch\ndef scores_to_weights(s):\n"
        "    return torch.__dict__['softmax'](s, -1)",
        3,
    ),
    "eval": ("def scores_to_weights(s):\n    return eval('s')", 2),
    "a builtins trick": (
        "def scores_to_weights(s):\n    return __builtins__['eval']('s')",
        2,
    ),
    "a frame": (
        "def scores_to_weights(s):\n    g = (x for x in [1])\n    return g.gi_frame.f_back",
        3,
    ),
    "a module attribute written": (
        "def scores_to_weights(s):\n    np.exp = lambda x: x\n    return s",
        2,
    ),
    "the course package": (
        "import attnbook\ndef scores_to_weights(s):\n    return attnbook.attention.softmax(s)",
        3,
    ),
    "an otter internal": (
        "x = otter.test_files\ndef scores_to_weights(s):\n    return x(s)",
        1,
    ),
    "open": ("def scores_to_weights(s):\n    return open('/etc/passwd').read()", 2),
    "the shell": (
        "shell = get_ipython()\ndef scores_to_weights(s):\n    return shell(s)",
        1,
    ),
}


@pytest.mark.parametrize("kind", sorted(SIDESTEPS))
def test_every_spelling_of_the_forbidden_routine_is_caught_with_its_line(kind):
    cell, line = SIDESTEPS[kind]
    reading = source_rules.scan([SETUP, cell], trusted=[SETUP])
    found = reading.shortcut("scores_to_weights", NUMPY_ONLY)
    assert found is not None and found.startswith("shortcut:"), (kind, found)
    assert f"cell 1, line {line})" in found, (kind, found)
    assert "rules out scipy and torch" in found


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_dynamic_access_and_other_modules_are_refused_with_their_line(kind):
    cell, line = REFUSED[kind]
    reading = source_rules.scan([SETUP, cell], trusted=[SETUP])
    lost = reading.tampering(Q1)
    assert "q1" in lost, (kind, reading.findings)
    assert lost["q1"].startswith(
        "dynamic code / tampering: not allowed in an answer"
    ), lost
    assert f"(cell 1, line {line}" in lost["q1"], (kind, lost["q1"])
    # in a practice grade the refused statement is not run: blanked before the child starts
    runnable = reading.runnable([SETUP, cell])[1].split("\n")
    assert runnable[line - 1].strip() in ("pass", ""), (kind, runnable)


def test_a_refused_statement_costs_the_questions_that_reach_it_only():
    cells = [
        SETUP,
        "def scores_to_weights(s):\n    return np.exp(s) / np.exp(s).sum(-1, keepdims=True)",
        "def attention(q, k, v):\n    import inspect\n    return inspect.stack()",
    ]
    lost = source_rules.scan(cells, trusted=[SETUP]).tampering(Q1)
    assert set(lost) == {"q2"} and "imports inspect (cell 2, line 2" in lost["q2"], lost
    # refused code is never run, so code that would run when its cell runs (an import, a
    # default argument) also costs only the questions whose functions read what it binds
    cells[2] = (
        "import inspect\ndef attention(q, k, v, s=inspect.stack()):\n    return q"
    )
    lost = source_rules.scan(cells, trusted=[SETUP]).tampering(Q1)
    assert set(lost) == {"q2"} and "(cell 2, line 1)" in lost["q2"], lost


def test_refused_code_no_question_uses_costs_nothing_and_is_noted():
    cells = [SETUP, "import os\nos.system('true')\n" + HONEST["a helper and a loop"]]
    reading = source_rules.scan(cells, trusted=[SETUP])
    lost, notes = reading.refusals(Q1)
    assert lost == {}, lost
    assert [c for c, _ in notes] == [1, 1], notes
    assert "imports os (cell 1, line 1)" in notes[0][1] and "no points" in notes[0][1]
    runnable = reading.runnable(cells)[1].split("\n")
    assert runnable[:2] == ["pass", "pass"], runnable[:2]  # neither statement runs


# ex09 q1 and q2 through the course's own quantiser (allow_attnbook=False)
EX09 = [
    "from attnbook.kvquant import quantize\ndef quantize_keys(k, b, g):\n    return quantize(k)",
    "import attnbook.kvquant as kv\ndef quantize_keys(k, b, g):\n    return kv.quantize(k)",
    "q, = [attnbook]\ndef pack_codes(c, b):\n    return q.kvquant.pack_codes(c)",
]


@pytest.mark.parametrize("cell", EX09)
def test_the_course_package_is_refused_in_an_answer(cell):
    reading = source_rules.scan([TORCH_SETUP, cell], trusted=[TORCH_SETUP])
    lost = reading.tampering({"q1": {"quantize_keys"}, "q2": {"pack_codes"}})
    assert lost and all("attnbook" in m and "line 1" in m for m in lost.values()), lost


# correct answers, written in several styles, pass every rule
HONEST = {
    "type hints, a dataclass and a cache (issue 45, N1)": (
        "from __future__ import annotations\nfrom typing import Optional, Tuple\n"
        "import functools, copy, time, warnings\nfrom dataclasses import dataclass\n"
        "@dataclass\nclass Axis:\n    value: int = -1\n"
        "@functools.lru_cache(maxsize=None)\ndef _axis() -> int:\n    return Axis().value\n"
        "def scores_to_weights(s: np.ndarray, t: Optional[float] = None) -> np.ndarray:\n"
        "    e = np.exp(s - s.max(_axis(), keepdims=True))\n"
        "    return e / e.sum(_axis(), keepdims=True)\n"
        "pair: Tuple[int, int] = (1, 2)"
    ),
    "a helper and a loop": (
        "def _row_max(s):\n    return s.max(axis=-1, keepdims=True)\n"
        "def scores_to_weights(s):\n    e = np.exp(s - _row_max(s))\n"
        "    out = np.empty_like(e)\n    for i in range(len(e)):\n"
        "        out[i] = e[i] / e[i].sum()\n    return out"
    ),
    "a class": (
        "class Softmax:\n    def __init__(self, axis=-1):\n        self.axis = axis\n"
        "    def __call__(self, s):\n        e = np.exp(s - s.max(self.axis, keepdims=True))\n"
        "        return e / e.sum(self.axis, keepdims=True)\n"
        "_soft = Softmax()\ndef scores_to_weights(s):\n    return _soft(s)"
    ),
    "data beside it, a plot and a comparison": (
        "%matplotlib inline\n!pip install nothing\nimport math\nimport matplotlib.pyplot as plt\n"
        "EPS = 1e-12\ndef scores_to_weights(s):\n"
        "    e = np.exp(s - np.max(s, axis=-1, keepdims=True))\n"
        "    return e / (e.sum(axis=-1, keepdims=True) + 0 * EPS)\n"
        "w = scores_to_weights(np.zeros((2, 3)))\nprint(math.isclose(w.sum(), 2.0))\n"
        "shape = getattr(w, 'shape', None)\nplt.plot(w[0])"
    ),
    "an argmax written with the operators' own methods (issue 45, review 113)": (
        "import operator\nfrom operator import itemgetter\n"
        "def scores_to_weights(s):\n"
        "    e = np.exp(s - s.max(-1, keepdims=True))\n"
        "    best = max(range(len(e)), key=e.sum(-1).__getitem__)\n"
        "    first = max(enumerate(e.sum(-1)), key=operator.itemgetter(1))[0]\n"
        "    pairs = sorted(zip(e.sum(-1), range(len(e))), key=itemgetter(0))\n"
        "    return e / e.sum(-1, keepdims=True) + 0 * (best + first + len(pairs))"
    ),
    "torch used elsewhere, only to compare": (
        "import torch\ndef scores_to_weights(s):\n"
        "    e = np.exp(s - s.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)\n"
        "x = np.zeros((2, 2))\nmine = scores_to_weights(x)\n"
        "print(np.allclose(mine, torch.softmax(torch.tensor(x), -1).numpy()))"
    ),
}


@pytest.mark.parametrize("kind", sorted(HONEST))
def test_honest_answers_in_other_styles_pass(kind):
    reading = source_rules.scan([SETUP, HONEST[kind]], trusted=[SETUP])
    assert reading.findings == [], reading.findings
    assert reading.shortcut("scores_to_weights", NUMPY_ONLY) is None
    assert reading.tampering(Q1) == {}


def test_other_questions_are_the_reference_only_where_the_reference_calls_them():
    reference = [
        "def scores_to_weights(s):\n    return s",
        "def attention(q, k, v):\n    return scores_to_weights(q @ k.T) @ v",
        "def self_attention(x, w):\n    return attention(x @ w, x, x)",
    ]
    functions = {
        "q1": {"scores_to_weights"},
        "q2": {"attention"},
        "q3": {"self_attention"},
    }
    swaps = source_rules.reference_swaps(reference, functions)
    # the softmax may not call the reference attention (the oracle of the review)
    assert swaps == {
        "scores_to_weights": [],
        "attention": ["scores_to_weights"],
        "self_attention": ["attention", "scores_to_weights"],
    }


def _uses_vars(x):
    return vars(x)


def _calls_a_helper_that_opens(x):
    return _opens(x)


def _opens(x):
    with open(x) as f:
        return f.read()


def _honest(x):
    import numpy as np

    return np.exp(x - np.max(x))


def _uses_a_module_imported_elsewhere(x):
    return _os_module.getpid() + x


def _uses_a_routine_imported_elsewhere(x):
    return _join(x, "y")


def test_the_public_check_warns_of_what_the_grader_refuses():
    from attnbook.exercise_checks.grading import guarded

    with pytest.raises(
        AssertionError,
        match=r"^dynamic code / tampering: not allowed in an answer cell: uses vars",
    ):
        guarded(_uses_vars)(1)
    with pytest.raises(AssertionError, match=r"open .*\(_opens, line \d+\)"):
        guarded(_calls_a_helper_that_opens)("x")
    assert guarded(_honest)(0.0) == 1.0
    # an import in another cell, used by the answer (the grader refuses the import and
    # charges the question): named by the public check too
    with pytest.raises(
        AssertionError, match=r"uses _os_module, imported from the module os,"
    ):
        guarded(_uses_a_module_imported_elsewhere)(1)
    with pytest.raises(
        AssertionError, match=r"uses _join, imported from the module posixpath"
    ):
        guarded(_uses_a_routine_imported_elsewhere)("x")


def test_the_switch_for_the_sandbox_tests_turns_the_allowlist_off(monkeypatch):
    cell = "import os\npid = os.fork()"
    assert source_rules.scan([cell]).findings
    monkeypatch.setenv(source_rules.NO_ALLOWLIST, "1")
    assert source_rules.scan([cell]).findings == []


def test_a_refused_decorated_function_is_blanked_with_its_decorators():
    cell = (
        "import functools\n@functools.singledispatch\ndef table(d):\n    return d\n"
        "def scores_to_weights(s):\n    return s"
    )
    reading = source_rules.scan([SETUP, cell], trusted=[SETUP])
    runnable = reading.runnable([SETUP, cell])[1]
    compile(runnable, "cell", "exec")  # what is left still runs
    assert "singledispatch" not in runnable and "def scores_to_weights" in runnable


def test_a_refused_answer_costs_its_own_question_not_the_next_ones():
    cells = [
        SETUP,
        "def scores_to_weights(s):\n    import inspect\n    return s",
        "def attention(q, k, v):\n    return scores_to_weights(q @ k.T) @ v",
    ]
    swaps = {"scores_to_weights": [], "attention": ["scores_to_weights"]}
    answers = {"scores_to_weights", "attention"}
    reading = source_rules.scan(cells, trusted=[SETUP], answers=answers)
    assert set(reading.tampering(Q1, swaps)) == {"q1"}
    assert (
        "def attention" in reading.runnable(cells)[2]
    )  # runs, with the reference's q1
    # without knowing the answers, the second function reads a name only refused code binds
    unaware = source_rules.scan(cells, trusted=[SETUP]).tampering(Q1, swaps)
    assert set(unaware) == {"q1", "q2"}, unaware


def test_the_public_check_names_what_a_grade_for_credit_only_notes():
    """The allowlist's finding is named alike on both sides, a hint in the public check
    (`rules.refused_hint`: the function and its line) and a note beside a grade for credit
    (`rules.would_refuse`: the cell and line), and both say no grade depends on it."""
    import inspect
    import re

    from attnbook.exercise_checks.grading import guarded

    with pytest.raises(AssertionError) as local:
        guarded(_uses_vars)(1)
    said = str(local.value)
    cell = inspect.getsource(_uses_vars).replace("_uses_vars", "scores_to_weights")
    reading = source_rules.scan([SETUP, cell], trusted=[SETUP], hint_only=True)
    [(index, note)] = reading.hints()
    what = re.match(
        r"dynamic code / tampering: not allowed in an answer cell: (.+?) \(", said
    )
    assert what and index == 1, (said, note)
    assert note.startswith(
        f"dynamic code / tampering: the allowlist would refuse {what.group(1)} (cell 1, "
    ), note
    assert "not counted" in note and "a hint: the grade for credit" in said, (
        note,
        said,
    )
