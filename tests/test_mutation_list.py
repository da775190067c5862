"""`tools.mutations` stays in step with the package: each mutation's text occurs exactly once
in the file it names, so a reformatted or edited line shows up here, not as an error halfway
through the (minutes-long) mutation run."""

from __future__ import annotations

import pytest

from tools.mutations import MUTATIONS, PACKAGE, Mutation


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_mutation_finds_its_text_once(mutation: Mutation) -> None:
    text = (PACKAGE / mutation.path).read_text()
    assert text.count(mutation.old) == 1, f"{mutation.name}: update tools/mutations.py"
    assert mutation.new != mutation.old


def test_mutation_names_are_unique() -> None:
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names))
