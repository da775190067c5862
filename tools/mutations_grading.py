"""The mutations of `tools.mutations` in the grading engine (`grader/src/attnbook_grader`):
its isolation, limits, wire and the wire's layouts (issue 36), the rules held by what the
answer's process can reach and the system calls it may not make (issue 44), and the
verdicts end to end, each caught by its own row of `tests/test_grading_verdict_table.py`
(issue 49, item 5)."""

from __future__ import annotations

from tools.mutation_spec import Mutation

EDGES = ("tests/test_grading_wire_edges.py",)
TABLE = "tests/test_grading_verdict_table.py"


def _row(row: str) -> tuple[str, ...]:
    """The row of the verdict table written against a mutant (its id)."""
    return (f"{TABLE}::test_each_broken_rule_costs_its_questions_only[{row}]",)


MUTATIONS = [
    # the grading engine's isolation, limits and wire (issue 36): each caught by
    # tests/test_grading_isolation.py
    Mutation(
        "wire-frame-out-of-turn-accepted",
        "attnbook_grader/wire.py",
        '_require(frame.get("seq") == seq and type(frame.get("seq")) is int, "out of turn")',
        '_require(True, "out of turn")',
        (
            "tests/test_grading_isolation.py::test_frames_out_of_turn_or_malformed_are_refused",
        ),
    ),
    Mutation(
        "wire-cell-index-unchecked",
        "attnbook_grader/wire.py",
        '_require(type(value) is int and 0 <= value < n, f"cell index {value!r}")',
        '_require(type(value) is int, f"cell index {value!r}")',
        (
            "tests/test_grading_isolation.py::test_frames_out_of_turn_or_malformed_are_refused",
        ),
    ),
    Mutation(
        "wire-tensor-subclass-crosses",
        "attnbook_grader/wire.py",
        "type(value) in (torch.Tensor, torch.nn.Parameter)  # a subclass: opaque",
        "isinstance(value, torch.Tensor)",
        (
            "tests/test_grading_isolation.py::test_subclasses_cross_opaque_and_their_facts_name_them",
        ),
    ),
    Mutation(
        "facts-subclass-overrides-on",
        "attnbook_grader/facts.py",
        "with torch._C.DisableTorchFunctionSubclass():  # a subclass's overrides: off",
        "if True:",
        (
            "tests/test_grading_isolation.py::test_subclasses_cross_opaque_and_their_facts_name_them",
        ),
    ),
    Mutation(
        "verdicts-subclass-result-allowed",
        "attnbook_grader/verdicts.py",
        '        if item.get("subclass"):',
        "        if False:",
        (
            "tests/test_grading_isolation.py::test_subclasses_cross_opaque_and_their_facts_name_them",
        ),
    ),
    Mutation(
        "child-call-limit-ignored",
        "attnbook_grader/child.py",
        "deadline = min(now + limit, self.question_deadline)",
        "deadline = self.question_deadline",
        (
            "tests/test_grading_isolation.py::test_an_endless_loop_costs_its_question_only",
        ),
    ),
    Mutation(
        "child-lost-call-forgotten",
        "attnbook_grader/child.py",
        "self.lost.setdefault(name, why)",
        "pass",
        (
            "tests/test_grading_isolation.py::test_an_endless_loop_costs_its_question_only",
        ),
    ),
    Mutation(
        "child-looping-cell-not-skipped",
        "attnbook_grader/child.py",
        "if cell < 0 or cell in self.skipped:",
        "if True:",
        ("tests/test_grading_isolation.py::test_a_looping_or_forging_cell_is_skipped",),
    ),
    Mutation(
        "sandbox-fds-kept",
        "attnbook_grader/sandbox.py",
        "_close_fds(conn.fileno())",
        "pass",
        (
            "tests/test_grading_isolation.py::test_the_submission_sees_and_keeps_nothing_of_the_graders[namespaces]",
        ),
    ),
    Mutation(
        "processes-no-file-size-limit",
        "attnbook_grader/processes.py",
        "(resource.RLIMIT_FSIZE, FILE_BYTES),",
        "",
        (
            "tests/test_grading_isolation.py::test_the_submission_sees_and_keeps_nothing_of_the_graders[namespaces]",
        ),
    ),
    Mutation(
        "engine-reference-not-restarted",
        "attnbook_grader/engine.py",
        "reference.refresh()",
        "pass",
        (
            "tests/test_grading_isolation.py::test_a_reference_that_died_is_started_again",
        ),
    ),
    Mutation(
        "engine-maxima-lost",
        "attnbook_grader/engine.py",
        "maxima = {q: round(float(f.possible), 6) for q, f in files.items()}",
        "maxima = {q: 0.0 for q in files}",
        (
            "tests/test_grading_isolation.py::test_an_endless_loop_costs_its_question_only",
        ),
    ),
    # the wire's layouts (issue 36, item 7): tests/test_grading_wire_layout.py
    Mutation(
        "layout-bounds-unchecked",
        "attnbook_grader/layout.py",
        "    if low < 0 or high + itemsize > nbytes:",
        "    if False:",
        ("tests/test_grading_wire_layout.py::test_the_error_names_the_bound_broken",),
    ),
    Mutation(
        "layout-views-get-storages-of-their-own",
        "attnbook_grader/layout.py",
        '    key = ("torch", storage.data_ptr(), storage.nbytes())',
        '    key = ("torch", id(t))',
        (
            "tests/test_grading_wire_layout.py::test_views_of_one_tensor_in_one_frame_arrive_as_views_of_one_storage",
        ),
    ),
    Mutation(
        "session-in-place-rule-compares-the-frame",
        "attnbook_grader/session.py",
        "if _values(old) != _values(new) and not _is_generator(now)",
        "if not _is_generator(now)",
        (
            "tests/test_grading_wire_layout.py::test_a_child_gets_the_layout_and_the_in_place_rule_names_the_input_written",
        ),
    ),
    # the rules held by reach, and seccomp (issue 44): tests/test_grading_reach.py
    Mutation(
        "reach-libraries-not-read",
        "attnbook_grader/reach.py",
        'found = {str(lib).split(".")[0] for lib in libraries if isinstance(lib, str)}',
        "found = set()",
        (
            "tests/test_grading_reach.py::test_the_rules_are_read_from_the_tests_guarded_calls",
        ),
    ),
    Mutation(
        "reach-files-not-hidden",
        "attnbook_grader/child.py",
        "self.hide = reach.hidden(self.without) if isolate else []",
        "self.hide = []",
        (
            "tests/test_grading_reach.py::test_the_course_package_is_not_there_where_it_is_ruled_out",
        ),
    ),
    Mutation(
        "servers-no-server-without-torch",
        "attnbook_grader/servers.py",
        "    if not heavy:",
        "    if True:",
        (
            "tests/test_grading_reach.py::test_each_spelling_reaches_nothing_where_torch_is_ruled_out[its own sys]",
        ),
    ),
    Mutation(
        "reach-loaded-modules-unchecked",
        "attnbook_grader/reach.py",
        "loaded = sorted(m for m in list(sys.modules) if _ruled(m, ruled_out))",
        "loaded = []",
        (
            "tests/test_grading_reach.py::test_a_loaded_ruled_out_module_is_refused_and_lent_modules_are_removed",
        ),
    ),
    Mutation(
        "sandbox-setup-lends-its-modules",
        "attnbook_grader/sandbox.py",
        "reach.scrub_lent(namespace, before, ALLOWED_MODULES)",
        "pass",
        (
            "tests/test_grading_reach.py::test_each_spelling_reaches_nothing_where_torch_is_ruled_out[setup's sys]",
        ),
    ),
    Mutation(
        "seccomp-refusal-allows",
        "attnbook_grader/seccomp.py",
        "deny = _insn(_RET_K, _ERRNO | errno.EPERM)",
        "deny = _insn(_RET_K, _ALLOW)",
        (
            "tests/test_grading_reach.py::test_the_filter_refuses_what_a_notebook_never_needs[namespaces]",
        ),
    ),
    Mutation(
        "seccomp-chroot-creates-files",
        "attnbook_grader/seccomp.py",
        'code = program(machine, no_files=how == "chroot")',
        "code = program(machine, no_files=False)",
        (
            "tests/test_grading_reach.py::test_the_filter_refuses_what_a_notebook_never_needs[chroot]",
        ),
    ),
    Mutation(
        "seccomp-sockets-allowed",
        "attnbook_grader/seccomp.py",
        '"socket": 41,',
        "",
        (
            "tests/test_grading_reach.py::test_the_filter_refuses_what_a_notebook_never_needs[namespaces]",
        ),
    ),
    # the wire's and the verdicts' edges, unit-tested without a grading run
    # (tests/test_grading_wire_edges.py)
    Mutation(
        "wire-limit-counts-elements",
        "attnbook_grader/layout.py",
        "if math.prod(shape) * itemsize > limit:",
        "if math.prod(shape) > limit:",
        EDGES,
    ),
    Mutation(
        "list-of-another-length-not-written-back",
        "attnbook_grader/wire.py",
        "            target[:] = source",
        "            pass",
        EDGES,
    ),
    Mutation(
        "frozenset-crosses-opaque",
        "attnbook_grader/wire.py",
        "    if isinstance(value, (set, frozenset)):",
        "    if isinstance(value, set):",
        EDGES,
    ),
    Mutation(
        "custom-exception-loses-its-name",
        "exercise_checks/rules.py",
        'return kind(message if name == kind.__name__ else f"{name}: {message}")',
        "return kind(message)",
        EDGES,
    ),
    Mutation(
        "pytorch-allocation-failure-not-a-memory-error",
        "attnbook_grader/verdicts.py",
        '"can\'t allocate memory" in str(',
        '"can\'t allocate memory!" in str(',
        EDGES,
    ),
    Mutation(
        "empty-result-aliases-an-empty-input",
        "attnbook_grader/verdicts.py",
        '        and a["numel"] > 0\n        and a["ptr"] == b["ptr"]',
        '        and a["ptr"] == b["ptr"]',
        EDGES,
    ),
    Mutation(  # the code review's (round 7) V5: the local rule still fails it
        "returned-input-list-not-refused",
        "attnbook_grader/verdicts.py",
        'value["kind"] in (\n                "tensor",\n                "array",\n'
        '                "list",\n',
        'value["kind"] in (\n                "tensor",\n                "array",\n',
        ("tests/test_rules_parity.py",),
    ),
    # the grader's verdicts end to end (issue 49, item 5; issue 44): each row of
    # tests/test_grading_verdict_table.py is a submission that breaks one rule
    Mutation(
        "rules-imported-and-rebound-name-is-a-module",
        "attnbook_grader/source_rules.py",
        "b for b, ids in binders.items() if all(self.units[i].imports for i in ids)",
        "b for b, ids in binders.items() if any(self.units[i].imports for i in ids)",
        _row("G1-imported-and-rebound"),
    ),
    Mutation(
        "rules-part-of-a-statement-not-charged",
        "attnbook_grader/source_rules.py",
        "if part is None or _within(part, line):",
        "if part is None:",
        _row("G2-part-of-a-statement"),
    ),
    Mutation(
        "rules-trusted-cell-refused",
        "attnbook_grader/source_rules.py",
        "if used and not unit.refused and not unit.trusted:",
        "if used and not unit.refused:",
        _row("G3-trusted-cell-reads-refused"),
    ),
    Mutation(
        "rules-banned-import-matched-by-whole-path",
        "attnbook_grader/source_rules.py",
        'if path.split(".")[-1] in banned:',
        "if path in banned:",
        _row("G4-setup-alias"),
    ),
    Mutation(
        "rules-unreached-refusal-costs-every-question",
        "attnbook_grader/source_rules.py",
        "                for q in questions:",
        "                for q in questions or sorted(question_functions):",
        (
            "tests/test_answer_allowlist.py::test_refused_code_no_question_uses_costs_nothing_and_is_noted",
        ),
    ),
    Mutation(
        "swapped-reference-called-without-the-students-defaults",
        "attnbook_grader/watched.py",
        "    bound.apply_defaults()\n",
        "",
        (
            "tests/test_grading_rules.py::"
            "test_the_reference_swapped_in_is_called_as_the_students_own_function",
        ),
    ),
    Mutation(
        "rules-refused-answer-costs-the-next-question",
        "attnbook_grader/source_rules.py",
        "kept = answers | {b for u in units if not u.refused for b in u.binds}",
        "kept = {b for u in units if not u.refused for b in u.binds}",
        (
            "tests/test_answer_allowlist.py::"
            "test_a_refused_answer_costs_its_own_question_not_the_next_ones",
        ),
    ),
    Mutation(
        "allowlist-public-check-blind-to-imports-of-other-cells",
        "exercise_checks/answer_allowlist.py",
        'if name in ("__main__", own) or root.lstrip("_") in allowed:',
        "if True:",
        (
            "tests/test_answer_allowlist.py::test_the_public_check_warns_of_what_the_grader_refuses",
        ),
    ),
    Mutation(
        "allowlist-get-type-hints-allowed",
        "exercise_checks/answer_allowlist.py",
        "    get_type_hints ForwardRef",
        "    ForwardRef",
        ("tests/test_answer_allowlist.py",),
    ),
    Mutation(
        "allowlist-attrgetter-allowed",
        "exercise_checks/answer_allowlist.py",
        "    attrgetter methodcaller",
        "    methodcaller",
        ("tests/test_answer_allowlist.py",),
    ),
    Mutation(
        "rules-hasattr-spells-nothing",
        "attnbook_grader/source_rules.py",
        'and node.func.id in ("getattr", "hasattr")',
        'and node.func.id in ("getattr",)',
        _row("G5-hasattr-spells"),
    ),
    Mutation(
        "session-random-state-unseen",
        "exercise_checks/rules.py",
        "for what in RNG_NAMES",
        'for what in RNG_NAMES if what != "random"',
        _row("E1-random-state-moved"),
    ),
    Mutation(
        "session-caller-rng-not-advanced",
        "attnbook_grader/session.py",
        "set_rng_states(rng_after)",
        "pass",
        _row("E4-caller-generators-follow"),
    ),
    Mutation(
        "jail-command-line-paths-visible",
        "attnbook_grader/jail.py",
        'found |= {a for a in sys.argv if a.startswith("/") or os.path.exists(a)}',
        "found |= set()",
        _row("J1-command-line-path"),
    ),
    Mutation(
        "jail-network-shared",
        "attnbook_grader/jail.py",
        "flags = _NEWNS | _NEWPID | _NEWNET | _NEWIPC | _NEWUTS",
        "flags = _NEWNS | _NEWPID | _NEWIPC | _NEWUTS",
        _row("J4-network-namespace"),
    ),
]
