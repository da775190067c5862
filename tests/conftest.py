"""Shared pytest configuration: the Hypothesis profiles of the property tests.

`ci` (the default, used by `make test`): a bounded number of examples, derandomised (the same
examples on every run and machine, so a failure in CI reproduces locally), no per-example
deadline (a loaded 2-core machine is slow, and timing is not what these tests check), and no
example database written into the checkout. `dev`: more examples, random, with the database;
choose it with HYPOTHESIS_PROFILE=dev.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import torch
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=300, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """torch on one thread for a module of tiny tensors: on a shared 2-core machine the
    synchronisation of a second thread costs ~100x the arithmetic of a (5, 8) attention."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
