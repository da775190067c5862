"""The mutations of `tools.mutations` in the course's tools: the launch copies' citations,
author lists and setup cell."""

from __future__ import annotations

from tools.mutation_spec import Mutation

LAUNCH = ("tests/test_launch_rewrite.py",)

MUTATIONS = [
    Mutation(
        "hidden-message-raise-assertion-unread",
        "tools/exercise_messages.py",
        '        and _call_name(node.exc) == "AssertionError"\n',
        '        and _call_name(node.exc) == "NoSuchError"\n',
        (
            "tests/test_exercise_messages.py::"
            "test_raise_assertion_error_is_read_and_a_choice_of_constants_shows_nothing",
        ),
    ),
    Mutation(
        "hidden-message-choice-of-constants-tainted",
        "tools/exercise_messages.py",
        "                if _names(_shown(value)) & tainted:",
        "                if _names(value) & tainted:",
        (
            "tests/test_exercise_messages.py::"
            "test_raise_assertion_error_is_read_and_a_choice_of_constants_shows_nothing",
        ),
    ),
    Mutation(
        "citation-of-two-keys-after-a-name-keeps-one",
        "tools/launch_copies.py",
        'if role != "cite:t" and len(keys) == 1 and before.endswith(names):',
        'if role != "cite:t" and before.endswith(names):',
        LAUNCH,
    ),
    Mutation(
        "two-authors-written-et-al",
        "tools/launch_copies.py",
        "elif len(people) == 2:",
        "elif len(people) == 3:",
        LAUNCH,
    ),
    Mutation(
        "first-code-cell-overwritten-unchecked",
        "tools/launch_copies.py",
        "if first.source != make():",
        "if False:",
        LAUNCH,
    ),
]
