"""Per-student variants (`attnbook_grader.variants`, `tools.exercise_variants`): the choice
from the course secret and the ids, the reserved variant, rendering, and the refusal of a
notebook of another variant. Fast: nothing is graded here (tests/test_variants_class.py
grades a class)."""

from __future__ import annotations

import csv
import json
from collections import Counter

import nbformat
import pytest

from attnbook_grader import variants
from tools.exercise_variants import POOLS, pool, render_notebook, sample_variants

EX01 = "ex01_attention"
SECRET = b"a course secret for the tests"


def _ids(n: int) -> list[str]:
    return [f"{1000 + 37 * i}" for i in range(n)]


def test_the_choice_is_a_pure_function_of_secret_exercise_and_ids():
    found = pool(EX01)
    first = [variants.choose(SECRET, EX01, [i], found) for i in _ids(30)]
    again = [variants.choose(SECRET, EX01, [i], pool(EX01)) for i in _ids(30)]
    assert first == again
    other = [variants.choose(b"another secret", EX01, [i], found) for i in _ids(30)]
    assert other != first  # the secret decides: without it nobody can compute them
    for v in first:
        assert v["exercise"] == EX01 and v["task"] in found["roster"]
        assert 1 <= v["seed"] <= 999_999


def test_a_roster_of_30_spreads_over_every_task_and_shares_no_variant():
    found = pool(EX01)
    chosen = [variants.choose(SECRET, EX01, [i], found) for i in _ids(30)]
    tasks = Counter(v["task"] for v in chosen)
    assert set(tasks) == set(found["roster"]), tasks
    assert min(tasks.values()) >= 8, tasks  # 30 over two tasks: neither starved
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30


def test_a_group_gets_one_variant_whatever_the_order_of_its_ids():
    found = pool(EX01)
    group = variants.choose(SECRET, EX01, ["b7", "a3", "c9"], found)
    assert group == variants.choose(SECRET, EX01, ["c9", "b7", "a3"], found)
    assert group == variants.choose(SECRET, EX01, [" a3", "b7", "c9", "b7"], found)
    assert group != variants.choose(SECRET, EX01, ["a3", "b7"], found)


def test_the_reserved_variant_is_never_given_to_a_roster_student():
    found = pool(EX01)
    book = variants.reserved(found)
    assert book == {"exercise": EX01, "task": "allow", "seed": 0}
    assert book["task"] not in found["roster"]
    drawn = {
        variants.choose(SECRET, EX01, [f"s{i}"], found)["task"] for i in range(500)
    }
    assert "allow" not in drawn and drawn == set(found["roster"])


def test_without_a_secret_everyone_is_at_the_reserved_variant():
    found = pool(EX01)
    assert variants.variant_for(found, ["123"], None) == variants.reserved(found)
    assert variants.variant_for(None, ["123"], SECRET) is None  # no pool: one variant
    with pytest.raises(variants.VariantError, match="no student identity"):
        variants.variant_for(found, [], SECRET)


def test_the_secret_comes_from_the_environment_or_a_file(tmp_path):
    assert variants.course_secret({}) is None
    assert variants.course_secret({variants.SECRET_ENV: " s3 \n"}) == b"s3"
    path = tmp_path / "secret"
    path.write_text("from a file\n")
    assert (
        variants.course_secret({variants.SECRET_FILE_ENV: str(path)}) == b"from a file"
    )
    with pytest.raises(variants.VariantError, match="empty"):
        variants.course_secret({variants.SECRET_ENV: "  "})
    with pytest.raises(variants.VariantError, match="cannot read"):
        variants.course_secret({variants.SECRET_FILE_ENV: str(tmp_path / "missing")})


def test_every_edit_of_the_pool_matches_the_master_once():
    """A pool out of step with its master would render the book's task under another name."""
    from tools.exercise_build import MASTERS

    for name, found in POOLS.items():
        nb = nbformat.read(MASTERS / f"{name}.ipynb", as_version=4)
        text = [c.source for c in nb.cells]
        assert variants.stated(text) == variants.reserved(found)
        for task, spec in found["tasks"].items():
            for old, new in spec["edits"]:
                assert sum(s.count(old) for s in text) == 1, (name, task, old[:60])
                assert old != new


def test_rendering_states_the_variant_and_rewrites_the_task():
    from tools.exercise_build import MASTERS

    found = pool(EX01)
    nb = nbformat.read(MASTERS / f"{EX01}.ipynb", as_version=4)
    block = {"exercise": EX01, "task": "block", "seed": 42}
    out = render_notebook(nb, block, found)
    text = "\n".join(c.source for c in out.cells)
    assert variants.stated([c.source for c in out.cells]) == block
    assert 'True means "must not attend"' in text
    assert "scores = np.where(mask, -np.inf, scores)" in text
    assert "scores = np.where(mask, scores, -np.inf)" not in text
    assert nb.cells != out.cells  # the input is left as it was
    with pytest.raises(variants.VariantError, match="no task"):
        variants.render(["x"], {"exercise": EX01, "task": "nope"}, found)


def test_a_notebook_of_another_variant_is_refused_naming_both():
    found = pool(EX01)
    mine = variants.choose(SECRET, EX01, ["1"], found)
    other = dict(mine, seed=mine["seed"] + 1)
    cell = [variants.variant_line(other)]
    message = variants.refusal(cell, mine)
    assert (
        message and variants.label(other) in message and variants.label(mine) in message
    )
    assert variants.refusal([variants.variant_line(mine)], mine) is None
    gone = variants.refusal(["x = 1"], mine)
    assert gone and "no variant" in gone
    assert variants.refusal(["VARIANT = {'task': open('x')}"], mine)  # not a literal
    assert variants.refusal(["x = 1"], None) is None  # no pool: nothing to check


def test_gradescope_metadata_gives_the_ids_make_grade_reads():
    data = {
        "users": [
            {"email": "a@x.edu", "id": 11, "name": "A", "sid": "S2"},
            {"email": "b@x.edu", "id": 12, "name": "B"},
            "junk",
        ]
    }
    assert variants.ids_from_metadata(data) == ["S2", "12"]
    assert variants.ids_from_metadata({"users": "nope"}) == []
    assert variants.ids_from_metadata([]) == []


def test_the_proof_sample_covers_every_roster_task():
    found = pool(EX01)
    sample = sample_variants(found)
    assert [v["task"] for v in sample] == found["roster"]
    assert sample == sample_variants(pool(EX01))  # the same on every run


def test_make_grade_and_gradescope_read_the_same_ids_from_the_metadata(tmp_path):
    """The two grading paths choose a variant from the same ids of a group."""
    from tools.exercise_roster import identify

    data = {
        "users": [
            {"email": "b@x.edu", "id": 12, "name": "B", "sid": "S9"},
            {"email": "a@x.edu", "id": 11, "name": "A"},
            {"email": "c@x.edu", "name": "C"},
        ],
        "created_at": "2026-11-30T10:00:00",
    }
    (tmp_path / "submission_metadata.json").write_text(json.dumps(data))
    (tmp_path / "ex01_attention.ipynb").write_text("{}")
    found = identify("ex01_attention.ipynb", tmp_path, {})
    assert found is not None
    assert found.ids == variants.ids_from_metadata(data) == ["S9", "11", "c@x.edu"]
    found_pool = pool(EX01)
    assert variants.choose(SECRET, EX01, found.ids, found_pool) == variants.choose(
        SECRET, EX01, variants.ids_from_metadata(data), found_pool
    )


def test_the_gradebook_has_a_variant_column_book_for_the_reserved_one(tmp_path):
    """`make grade`'s CSV names the variant each row was graded at; the LMS's import is
    left as it was (an unknown column would be read as another assignment)."""
    from tools.exercise_gradebook import write_gradebook
    from tools.exercise_grading import Grade
    from tools.exercise_roster import CANVAS_COLUMNS, Identity, write_canvas

    found = pool(EX01)
    block = {"exercise": EX01, "task": "block", "seed": 42}
    assert variants.label(variants.reserved(found), found) == variants.BOOK == "book"
    assert variants.label(variants.reserved(found)) == "allow, seed 0"  # no pool given
    assert variants.label(block, found) == variants.label(block) == "block, seed 42"
    grades = [
        Grade("a.ipynb", "ok", 14.0, 14.0, variant=variants.label(block, found)),
        Grade("b.ipynb", "ok", 14.0, 14.0, variant="book"),
        Grade("c.ipynb", "error", 0.0, 14.0, message="not a notebook"),
    ]
    out = tmp_path / "grades.csv"
    write_gradebook(out, grades, {"q1": 14.0})
    rows = list(csv.DictReader(open(out)))
    assert [r["variant"] for r in rows] == ["block, seed 42", "book", ""]
    assert rows[2]["message"] == "not a notebook"  # the message stays the last column
    lms = tmp_path / "canvas.csv"
    write_canvas(lms, "Exercise 1", [(Identity("canvas", ["1"]), 14.0)], {}, 14.0)
    assert next(csv.reader(open(lms))) == [*CANVAS_COLUMNS, "Exercise 1"]


def test_every_mistake_on_a_line_a_task_rewrites_is_written_at_every_task():
    """The proofs grade such a mistake at each sampled variant in its task's own text
    (`AtEachTask`), not the book's line pasted over the variant's."""
    from tools.exercise_build import MASTERS
    from tools.exercise_proof import load_wrong_answers
    from tools.exercise_variants import AtEachTask, _rewritten, _touches

    for name, found in POOLS.items():
        nb = nbformat.read(MASTERS / f"{name}.ipynb", as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        wrong = load_wrong_answers(name)
        touching = {
            k: v
            for k, v in wrong.items()
            if _touches(v, _rewritten(found)) and "tampering" not in k
        }
        assert len(touching) >= (5 if name == EX01 else 1), sorted(wrong)
        for label, edits in touching.items():
            assert isinstance(edits, AtEachTask), label
            for task in found["roster"]:
                variant = {"exercise": name, "task": task, "seed": 1}
                text = variants.render([c.source for c in code], variant, found)
                assert edits.tasks[task], (label, task)
                for old, new in edits.tasks[task]:
                    assert sum(s.count(old) for s in text) == 1, (label, task, old)
                    assert old != new


def test_the_proof_stops_on_a_mistake_on_a_rewritten_line_without_its_task_forms():
    """Such a mistake pasted over a variant's text would grade another mistake, or none."""
    from types import SimpleNamespace

    from tools.exercise_variants import prove_variants

    line = "        scores = np.where(mask, scores, -np.inf)\n"
    cases = {"reference": [], "untouched": None, "backwards": [(line, line[::-1])]}
    with pytest.raises(variants.VariantError, match="'backwards'.*AtEachTask"):
        prove_variants(SimpleNamespace(name=EX01), None, 1.0, cases, None, {})


EX04 = "ex04_masks"


def test_exercise_4_gives_each_task_its_own_mask_question():
    """Question 1's wording, stub and solution follow the task: the book's causal mask of a
    whole sequence, a sliding window, or new tokens after a cache (each its own signature,
    so the book's answer, or another task's, does not answer it)."""
    from tools.exercise_build import MASTERS

    found = pool(EX04)
    assert variants.reserved(found) == {"exercise": EX04, "task": "causal", "seed": 0}
    chosen = [variants.choose(SECRET, EX04, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"window", "cache"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    nb = nbformat.read(MASTERS / f"{EX04}.ipynb", as_version=4)
    words = {
        "window": ("sliding-window causal mask", "def causal_mask(T, window):"),
        "cache": ("causal mask after a cache", "def causal_mask(T, past):"),
    }
    for task, (heading, signature) in words.items():
        variant = {"exercise": EX04, "task": task, "seed": 7}
        out = render_notebook(nb, variant, found)
        text = "\n".join(c.source for c in out.cells)
        assert variants.stated([c.source for c in out.cells]) == variant
        assert f"## Question 1 (2 of 14 points): the {heading}\n" in text
        assert signature in text and "def causal_mask(T):" not in text
        assert "torch.ones(T, T, dtype=torch.bool).tril()\n    # END" not in text


EX05 = "ex05_positional"


def test_exercise_5_gives_each_task_its_own_frequencies():
    """Question 1's wording, stub and solution follow the task: the book's base 10000, any
    base, or NTK-aware stretched rates (each with a setting of its own after d_model, whose
    default keeps the book's rates for questions 2-4), and the width of the example."""
    from tools.exercise_build import MASTERS

    found = pool(EX05)
    assert variants.reserved(found) == {"exercise": EX05, "task": "fixed", "width": 8}
    chosen = [variants.choose(SECRET, EX05, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"base", "stretch"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    for v in chosen:
        assert 9 <= v["width"] <= 512
        assert (
            20_000 <= v["base"] <= 1_000_000
            if v["task"] == "base"
            else 2 <= v["stretch"] <= 64
        )
    nb = nbformat.read(MASTERS / f"{EX05}.ipynb", as_version=4)
    words = {
        "base": (
            "the frequencies for any base",
            "def angle_rates(d_model, base=10000.0):",
        ),
        "stretch": (
            "rates stretched for a longer context",
            "def angle_rates(d_model, stretch=1.0):",
        ),
    }
    for task, (heading, signature) in words.items():
        variant = {"exercise": EX05, "task": task, task: 3, "width": 9}
        out = render_notebook(nb, variant, found)
        text = "\n".join(c.source for c in out.cells)
        assert variants.stated([c.source for c in out.cells]) == variant
        assert f"in\nyours, **{heading}**" in text
        assert signature in text and "def angle_rates(d_model):" not in text
        assert "    return 1.0 / 10000.0 ** (two_i / d_model)\n    # END" not in text


EX09 = "ex09_kv_quant"


def test_exercise_9_gives_each_task_its_own_cache_layout():
    """Question 1's wording, stub, solution, example data and last cell follow the task: the
    book's keys per channel in groups of G tokens, KIVI's keys quantised R at a time, or
    per token in groups of G channels with the newest R kept (both with R as a fourth
    argument, so the book's answer does not answer them)."""
    from tools.exercise_build import MASTERS

    found = pool(EX09)
    assert variants.reserved(found) == {"exercise": EX09, "task": "keys", "seed": 0}
    chosen = [variants.choose(SECRET, EX09, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"window", "token"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    nb = nbformat.read(MASTERS / f"{EX09}.ipynb", as_version=4)
    words = {
        "window": ("keys per channel, quantised R at a time", "n = T // R * R // G"),
        "token": ("per token, in groups of G channels", "m = max(T - R, 0)"),
    }
    for task, (heading, line) in words.items():
        variant = {"exercise": EX09, "task": task, "seed": 7}
        out = render_notebook(nb, variant, found)
        text = "\n".join(c.source for c in out.cells)
        assert variants.stated([c.source for c in out.cells]) == variant
        assert f"## Question 1 (3 of 14 points): {heading}\n" in text
        assert "def quantize_keys(k, bits, G, R):" in text and line in text
        assert (
            "def quantize_keys(k, bits, G):" not in text and "n = T // G  #" not in text
        )
        assert "quantize_keys(k, 2, G, R)" in text and "B, H, T, d, G, R = " in text


EX02 = "ex02_scaling"


def test_exercise_2_gives_each_task_its_own_scaling():
    """Question 5's wording and solution follow the task: the book's sqrt(d_k) on
    unit-variance draws, the divisor d_k, or draws of variance 1/3 (an untrained layer's);
    question 3's sqrt(d_k) stays the book's at every task."""
    from tools.exercise_build import MASTERS

    found = pool(EX02)
    assert variants.reserved(found) == {"exercise": EX02, "task": "sqrt", "seed": 0}
    chosen = [variants.choose(SECRET, EX02, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"dk", "init"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    nb = nbformat.read(MASTERS / f"{EX02}.ipynb", as_version=4)
    book = (
        "    weights = softmax_with_temperature(raw, np.sqrt(d_k) if scaled else 1.0)\n"
    )
    q3 = "softmax_with_temperature(queries @ keys.T, np.sqrt(d_k) if scaled else 1.0)"
    words = {
        "dk": ("**the scores divided by $d_k$, not", "raw, d_k if scaled else 1.0)"),
        "init": (
            "**queries and keys as an untrained layer",
            "(n_keys, d_k)) / np.sqrt(3)",
        ),
    }
    for task, (heading, line) in words.items():
        variant = {"exercise": EX02, "task": task, "seed": 7}
        out = render_notebook(nb, variant, found)
        text = "\n".join(c.source for c in out.cells)
        assert variants.stated([c.source for c in out.cells]) == variant
        assert f"cell above); in yours, {heading}" in text and line in text
        assert "the book's: unit-variance" not in text
        assert (book in text) == (task == "init") and q3 in text


# ----------------------------------------------------------------------------- exercise 3
EX03 = "ex03_multihead"


def test_exercise_3_gives_each_task_its_own_heads():
    """Questions 1 and 2's wording, stubs and solutions follow the task: the book's batch
    (B, T, D) with contiguous heads, heads owning interleaved features, or a batch stored
    sequence first (T, B, D), whose example data, layer text and docstrings say so too."""
    from tools.exercise_build import MASTERS

    found = pool(EX03)
    assert variants.reserved(found) == {
        "exercise": EX03,
        "task": "contiguous",
        "seed": 0,
    }
    assert found["questions"] == ["q1", "q2"]
    chosen = [variants.choose(SECRET, EX03, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"interleaved", "seqfirst"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    nb = nbformat.read(MASTERS / f"{EX03}.ipynb", as_version=4)
    book_split = "x.reshape(B, T, n_head, d_k).transpose(1, 2)"
    book_merge = "x.transpose(1, 2).reshape(B, T, H * d_k)"
    words = {
        "interleaved": (
            "and the heads own interleaved\nfeatures: head $h$ owns features $h, h + H",
            "== x[b, t, h::n_head]",
            "x.reshape(B, T, d_k, n_head).permute(0, 3, 1, 2)",
            "x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)",
        ),
        "seqfirst": (
            "stored sequence first, with shape $(T, B, D)$",
            "== x[t, b, h * d_k : (h + 1) * d_k]",
            "x.reshape(T, B, n_head, d_k).permute(1, 2, 0, 3)",
            "x.permute(2, 0, 1, 3).reshape(T, B, H * d_k)",
        ),
    }
    for task, (intro, rule, split, merge) in words.items():
        variant = {"exercise": EX03, "task": task, "seed": 7}
        out = render_notebook(nb, variant, found)
        text = "\n".join(c.source for c in out.cells)
        assert variants.stated([c.source for c in out.cells]) == variant
        assert intro in text and "the book's: a batch" not in text
        assert rule in text and split in text and merge in text
        assert book_split not in text and book_merge not in text
        seq = task == "seqfirst"
        assert ("x = torch.randn(T, B, D)" in text) == seq
        assert ("`output` has shape $(T, B, D)$" in text) == seq
        assert ('"""x (T, B, D), W_qkv' in text) == seq
        # with interleaved heads either order of q4's cuts is right: no warning about it
        assert ("The hard part is the order of the cuts" in text) == seq


# ----------------------------------------------------------------------------- exercise 11
EX11 = "ex11_linear_attention"


def test_exercise_11_gives_each_task_its_own_forgetting():
    """All three questions follow the task: the book's state that never forgets, a constant
    decay gamma (with question 3's state stored the papers' way round, d_v x d_k), or a gate
    per token (with question 3's gated delta rule); the signatures, formulas, the example's
    data and the reference's lines say so, and none of the book's answer lines is left."""
    from tools.exercise_build import MASTERS

    found = pool(EX11)
    assert variants.reserved(found) == {
        "exercise": EX11,
        "task": "plain",
        "T": 5,
        "seed": 0,
    }
    assert found["questions"] == ["q1", "q2", "q3"]
    chosen = [variants.choose(SECRET, EX11, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"decay", "gate"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    assert all(5 <= v["T"] <= 9 and 50 <= v["keep"] <= 95 for v in chosen)
    nb = nbformat.read(MASTERS / f"{EX11}.ipynb", as_version=4)
    book = [
        "def linear_attention_recurrent(q, k, v):",
        "def linear_attention_parallel(q, k, v):",
        "$$S' = S + \\beta\\, k^\\top \\big(v - k S\\big).$$",
        '"""S (B, d_k, d_v), k (B, d_k), v (B, d_v), beta (B,) -> new S (B, d_k, d_v)."""',
    ]
    words = {
        "decay": (
            "def linear_attention_recurrent(q, k, v, gamma):",
            "        S, z = gamma * S, gamma * z",
            "scores = scores * gamma ** (i[:, None] - i).clamp(min=0)",
            "old = (S @ k[:, :, None])[..., 0]",
            'gamma = VARIANT["keep"] / 100',
            "stored **the papers' way round**",
        ),
        "gate": (
            "def linear_attention_recurrent(q, k, v, alpha):",
            "alpha[:, t, None, None] * S, alpha[:, t, None] * z",
            "torch.exp((c[:, :, None] - c[:, None, :]).clamp(max=0))",
            "def delta_update(S, k, v, beta, alpha):",
            "alpha = low + (1 - low) * torch.rand(B, T)",
            "S' = \\alpha S + \\beta\\, k^\\top \\big(v - \\alpha\\, k S\\big)",
        ),
    }
    for task, lines in words.items():
        variant = {"exercise": EX11, "task": task, "T": 7, "keep": 80, "seed": 7}
        out = render_notebook(nb, variant, found)
        text = "\n".join(c.source for c in out.cells)
        assert variants.stated([c.source for c in out.cells]) == variant
        assert all(line in text for line in lines), task
        assert not any(line in text for line in book), task
        assert "the book's: the state never forgets" not in text


# ----------------------------------------------------------------------------- exercise 6
EX06 = "ex06_sampling"


def test_exercise_6_gives_each_task_its_own_nucleus():
    """Question 4 follows the task: the nucleus of the logits as given (the book's), of the
    row at the sampling temperature (returned as logits / temperature), or of the survivors
    of a top-k cut; its signature, text and the reference's inserted line say so, and the
    other questions read as the book's."""
    from tools.exercise_build import MASTERS
    from tools.exercise_pools_ex06 import LINES

    found = pool(EX06)
    assert variants.reserved(found) == {
        "exercise": EX06,
        "task": "plain",
        "p": 50,
        "seed": 0,
    }
    assert found["questions"] == ["q4"]
    chosen = [variants.choose(SECRET, EX06, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"tempered", "cut"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    assert all(50 <= v["p"] <= 90 for v in chosen)
    nb = nbformat.read(MASTERS / f"{EX06}.ipynb", as_version=4)
    book = nbformat.read(MASTERS / f"{EX06}.ipynb", as_version=4)
    signs = {
        "tempered": "def top_p_filter(logits, p, temperature):",
        "cut": "def top_p_filter(logits, p, k):",
    }
    for task, sign in signs.items():
        variant = {
            "exercise": EX06,
            "task": task,
            "p": 70,
            "tau": 50,
            "k": 4,
            "seed": 7,
        }
        out = render_notebook(nb, variant, found)
        text = "\n".join(c.source for c in out.cells)
        assert variants.stated([c.source for c in out.cells]) == variant
        assert sign in text and LINES[task] in text, task
        assert "def top_p_filter(logits, p):" not in text
        assert "the book's: the nucleus of the logits as given" not in text
        changed = [
            i
            for i, (a, b) in enumerate(zip(out.cells, book.cells))
            if a.source != b.source
        ]
        q4 = next(i for i, c in enumerate(book.cells) if "name: q4" in c.source)
        q5 = next(i for i, c in enumerate(book.cells) if "name: q5" in c.source)
        assert all(i < 5 or q4 < i < q5 for i in changed), (task, changed)


# ----------------------------------------------------------------------------- exercise 7
EX07 = "ex07_cars"


def test_exercise_7_gives_each_task_its_own_unit_to_hold_out():
    """Question 3 follows the task: the book's single phrasings, a phrasing with its mirror
    image (the example's data has mirrored twins, drawn with the variant's seed), or a family
    of phrasings (a family_of argument); the text, the data and the reference's unit line say
    so, and the book's unit text is gone."""
    from tools.exercise_build import MASTERS

    found = pool(EX07)
    assert variants.reserved(found) == {"exercise": EX07, "task": "phrasing", "seed": 0}
    assert found["questions"] == ["q3"]
    chosen = [variants.choose(SECRET, EX07, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"mirror", "family"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    nb = nbformat.read(MASTERS / f"{EX07}.ipynb", as_version=4)
    book = "the unit it holds out is **a phrasing**"
    words = {
        "mirror": (
            'phrasing_ids = [str(f).split("/")[0] for f in phrasing_ids]',
            'name = f"{phrasing}/mirror"',
            "the unit your split holds out is **a phrasing with\nits mirror**",
        ),
        "family": (
            "def split_by_phrasing(pair_ids, phrasing_ids, family_of, test_fraction, seed):",
            "phrasing_ids = [family_of[f] for f in phrasing_ids]",
            'family_of = {0: "sides", 1: "sides"',
        ),
    }
    for task, lines in words.items():
        variant = {"exercise": EX07, "task": task, "seed": 7}
        out = render_notebook(nb, variant, found)
        text = "\n".join(c.source for c in out.cells)
        assert variants.stated([c.source for c in out.cells]) == variant
        assert all(line in text for line in lines), task
        assert book not in text and "single phrasings, drawn at random" not in text, (
            task
        )


# ----------------------------------------------------------------------------- exercise 10
EX10 = "ex10_induction"


def test_exercise_10_gives_the_roster_mean_ablation():
    """Question 4 follows the task: the book's zero ablation, or (the roster's one task) mean
    ablation, the head's columns replaced by their mean over the batch; the text, the
    docstring and the reference's inserted line say so, the function keeps its name and
    signature (the closing cell hooks it in), and the other questions read as the book's."""
    from tools.exercise_build import MASTERS
    from tools.exercise_pools_ex10 import LINES

    found = pool(EX10)
    assert variants.reserved(found) == {
        "exercise": EX10,
        "task": "zero",
        "d_head": 2,
        "seed": 0,
    }
    assert found["questions"] == ["q4"] and found["roster"] == ["mean"]
    chosen = [variants.choose(SECRET, EX10, [i], found) for i in _ids(30)]
    assert {v["task"] for v in chosen} == {"mean"}
    assert len({json.dumps(v, sort_keys=True) for v in chosen}) == 30
    assert all(2 <= v["d_head"] <= 6 for v in chosen)
    book = nbformat.read(MASTERS / f"{EX10}.ipynb", as_version=4)
    variant = {"exercise": EX10, "task": "mean", "d_head": 3, "seed": 999_999}
    out = render_notebook(book, variant, found)
    text = "\n".join(c.source for c in out.cells)
    assert variants.stated([c.source for c in out.cells]) == variant
    line = next(ln for ln in text.splitlines() if ln.startswith("VARIANT = "))
    assert len(line) <= 88  # the page column, at the widest parameters
    assert LINES["mean"] in text and "the ablation is **mean ablation**" in text
    assert "def zero_head(z, head, d_head):" in text
    assert "columns set to 0." not in text  # the book's docstring
    assert "the ablation is **the book's: zero\nablation**" not in text
    changed = [
        i for i, (a, b) in enumerate(zip(out.cells, book.cells)) if a.source != b.source
    ]
    q4 = next(i for i, c in enumerate(book.cells) if "name: q4" in c.source)
    q5 = next(i for i, c in enumerate(book.cells) if "name: q5" in c.source)
    assert all(i < 5 or q4 < i < q5 for i in changed), changed
