"""`tools.mutations` stays in step with the package and the grading engine: each mutation's text occurs exactly once
in the file it names, so a reformatted or edited line shows up here, not as an error halfway
through the (minutes-long) mutation run."""

from __future__ import annotations

import pytest

from tools.mutations import MUTATIONS, Mutation, target


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_mutation_finds_its_text_once(mutation: Mutation) -> None:
    text = target(mutation).read_text()
    assert text.count(mutation.old) == 1, f"{mutation.name}: update tools/mutations.py"
    assert mutation.new != mutation.old


def test_mutation_names_are_unique() -> None:
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names))
