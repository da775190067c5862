"""Loaded by pytest first, from the repository root, which puts the root on the import path
(pytest's rule for a rootdir conftest): the tests import the tools as the package `tools`."""

import pytest

from tools.gc_policy import freeze_survivors


def pytest_configure(config: pytest.Config) -> None:
    # Hypothesis warns when `gc.get_referrers` finds nothing that holds the generator it
    # registers for itself; that function does not search frozen objects (below), and the
    # generator is held by Hypothesis's own module state, which is frozen
    config.addinivalue_line(
        "filterwarnings",
        "ignore:It looks like `register_random` was passed an object:"
        "hypothesis.errors.HypothesisWarning",
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    # the cycle collector walks what the imports and the collection built once, not at each
    # of the run's full collections (`tools.gc_policy`)
    freeze_survivors()
