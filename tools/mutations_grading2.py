"""More mutations of `tools.mutations` in the grading engine: round 5's survivors that the
code review of round 6 found unlisted (a square transpose called the input, the scope of
`global_torch_rng`, adjacent arrays called overlapping, a kept table forgotten after one
call, `os.system` not a process event) and the write-back into an expanded input. Each is
caught by its own test in `tests/test_grading_rules.py`, without a grading run; and the
named routines of an allowed library that the child takes away (`disarm`, issue 44), caught
in `tests/test_grading_reach.py`; and the switch that makes the allowlist a hint under
isolation (issue 44, item 1), caught by rows of `tests/test_grading_verdict_table.py`; and the
frames' bytes and the inputs reported unchanged (issue 46), caught in
`tests/test_grading_wire_edges.py`.

Judged equivalent, so not listed (a mutant no test can catch is no gap in the tests):
`kvquant.quantize`'s scale for a constant slice, 1 -> 1e-30 (round 6's K1): the slice's
x - lo is exactly 0, so its codes are 0 and `dequantize` gives lo + 0 * scale = lo whatever
the scale. (In float16 1e-30 underflows to 0, the codes become 0/0 = NaN before the cast to
uint8, which PyTorch's CPU turns into 0, the same code: equivalent there too, by the cast.)"""

from __future__ import annotations

from tools.mutation_spec import Mutation

RULES = "tests/test_grading_rules.py"
EDGES = "tests/test_grading_wire_edges.py"


def _test(name: str) -> tuple[str, ...]:
    return (f"{RULES}::{name}",)


MUTATIONS = [
    Mutation(
        "square-transpose-called-the-input",
        "attnbook_grader/verdicts.py",
        '        and a["strides"] == b["strides"]\n',
        "",
        _test("test_a_transpose_of_a_square_input_is_a_view_not_the_input"),
    ),
    Mutation(
        "global-torch-rng-excuses-every-generator",
        "exercise_checks/rules.py",
        'if what == "torch" and global_torch_rng:',
        "if global_torch_rng:",
        _test("test_letting_pytorch_sample_leaves_numpy_and_random_guarded"),
    ),
    Mutation(
        "adjacent-arrays-overlap",
        "attnbook_grader/verdicts.py",
        'return a["lo"] < b["hi"] and b["lo"] < a["hi"]',
        'return a["lo"] <= b["hi"] and b["lo"] <= a["hi"]',
        _test("test_arrays_side_by_side_in_one_buffer_share_no_memory"),
    ),
    Mutation(
        "separate-results-keeps-one-earlier-result",
        "attnbook_grader/sandbox.py",
        "kept[:] = [*kept, result][-4:]",
        "kept[:] = [*kept, result][-1:]",
        _test("test_a_table_handed_out_again_two_calls_later_is_caught"),
    ),
    Mutation(
        "os-system-not-a-process-event",
        "attnbook_grader/sandbox.py",
        '    "os.system",\n',
        "",
        _test("test_a_command_run_through_os_system_costs_the_question"),
    ),
    Mutation(
        "expanded-input-written-back",
        "attnbook_grader/wire.py",
        "            and not _overlaps(target)\n",
        "",
        _test("test_a_write_into_a_row_of_an_expanded_input_is_not_written_back"),
    ),
    # issue 44: a named routine of an allowed library, taken away in the child
    Mutation(
        "named-routine-left-in-the-child",
        "attnbook_grader/reach.py",
        "    disarm.disarm(routines(ruled_out))\n",
        "",
        (
            "tests/test_grading_reach.py::"
            "test_each_spelling_of_a_named_routine_fails_where_it_is_ruled_out",
        ),
    ),
    Mutation(
        "named-routine-still-read-from-the-source",
        "attnbook_grader/reach.py",
        "if _defines(str(n), ruled_out) and str(n) not in taken",
        "if _defines(str(n), ruled_out)",
        (
            "tests/test_grading_reach.py::"
            "test_a_named_routine_of_an_allowed_library_is_a_ruled_out_entry",
        ),
    ),
    Mutation(
        "compiled-kernels-not-replaced",
        "attnbook_grader/disarm.py",
        "                    handle.impl(base, key, refuse)\n",
        "                    pass\n",
        (
            "tests/test_grading_reach.py::"
            "test_each_spelling_of_a_named_routine_fails_where_it_is_ruled_out",
        ),
    ),
    Mutation(
        "quantizers-not-in-the-kernel-families",
        "attnbook_grader/disarm.py",
        '    "quantize_per_channel": ("quantize_per_channel",),\n',
        "",
        (
            "tests/test_grading_reach.py::"
            "test_pytorchs_quantizers_are_taken_away_and_rounding_stays",
        ),
    ),
    # the sandbox user's kill helper (processes._kill_user, issue 46)
    Mutation(
        "kill-helper-kills-nothing",
        "attnbook_grader/processes.py",
        "    helper = os.fork() if uid > 0 else -1\n",
        "    helper = -1\n",
        (
            "tests/test_grading_kill_user.py::test_the_sandbox_users_processes_end_and_no_others",
        ),
    ),
    Mutation(
        "kill-helper-counted-as-a-survivor",
        "attnbook_grader/processes.py",
        "others = before | keep | _killer_pids() | {pid}",
        "others = before | keep | {pid}",
        (
            "tests/test_grading_kill_user.py::test_the_helper_is_no_submissions_survivor",
        ),
    ),
    # review 68's M10 and M16
    Mutation(
        "numpy-fingerprint-without-position",
        "exercise_checks/rules.py",
        "np.asarray(keys).tobytes(), int(pos), int(has_gauss), cached)",
        "np.asarray(keys).tobytes(), int(has_gauss), cached)",
        (
            "tests/test_rules_parity.py::"
            "test_the_random_states_are_named_and_compared_once",
        ),
    ),
    Mutation(
        "bare-banned-name-never-charged",
        "attnbook_grader/source_rules.py",
        "if word in banned and not (isinstance(node, ast.Name) and word in own):",
        "if word in banned and not isinstance(node, ast.Name):",
        _test(
            "test_a_named_routine_reached_through_a_star_import_is_read_as_that_routine"
        ),
    ),
    # issue 44, item 1: under isolation no grade depends on the allowlist
    Mutation(
        "allowlist-decides-grades-under-isolation",
        "attnbook_grader/engine.py",
        "hint_only = how is not None",
        "hint_only = False",
        (
            "tests/test_grading_verdict_table.py::"
            "test_each_broken_rule_costs_its_questions_only[H1-harmless-getattr-runs]",
        ),
    ),
    Mutation(
        "allowlist-blanks-statements-under-isolation",
        "attnbook_grader/engine.py",
        "runnable = sources if hint_only else reading.runnable(sources)",
        "runnable = reading.runnable(sources)",
        (
            "tests/test_grading_verdict_table.py::"
            "test_each_broken_rule_costs_its_questions_only[H2-operator-runs]",
        ),
    ),
    # the wire's frames: storages as bytes after the text, inputs a call only read not sent back
    Mutation(
        "frame-names-bytes-it-did-not-send",
        "attnbook_grader/frames.py",
        " or not 0 <= index < len(blobs):",
        ":",
        (f"{EDGES}::test_a_frame_whose_bytes_do_not_add_up_is_refused",),
    ),
    Mutation(
        "frame-length-past-its-end-accepted",
        "attnbook_grader/frames.py",
        "        if at + size > len(tail):\n",
        "        if False:\n",
        (f"{EDGES}::test_a_frame_whose_bytes_do_not_add_up_is_refused",),
    ),
    Mutation(
        "inputs-written-into-reported-unchanged",
        "attnbook_grader/sandbox.py",
        "wire.SAME_INPUTS if now == then else now for",
        "wire.SAME_INPUTS for",
        (f"{EDGES}::test_inputs_a_call_only_read_do_not_cross_back",),
    ),
]
