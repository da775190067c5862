"""Hypothesis strategies and tolerances shared by the property tests (test_properties_*.py).

Tensor values come from a torch generator seeded by Hypothesis (fast, and reproducible from
the printed example); sizes, dtypes, mask densities and mask layouts are drawn by Hypothesis
itself, so a failure shrinks to the smallest shapes that still fail.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st
from torch import Tensor

DTYPES = st.sampled_from([torch.float32, torch.float64])
SEEDS = st.integers(0, 2**32 - 1)

# Honest tolerances for inputs of size ~1 and widths <= 32: float32 sums of a few dozen
# products differ between CPU kernels (vector width, thread count, summation order) by a few
# units in the last place of values of order 1; float64 by far less.
TOL = {
    torch.float32: {"atol": 2e-5, "rtol": 2e-4},
    torch.float64: {"atol": 1e-10, "rtol": 1e-8},
}


def randn(seed: int, *shape: int, dtype: torch.dtype = torch.float64) -> Tensor:
    return torch.randn(
        *shape, generator=torch.Generator().manual_seed(seed), dtype=dtype
    )


def random_mask(seed: int, shape: tuple[int, ...], density: float) -> Tensor:
    """Boolean mask with each entry True with probability `density` (0: nothing, 1: everything)."""
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g) < density


DENSITIES = st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0])


def close(actual: Tensor, expected: Tensor, dtype: torch.dtype) -> None:
    torch.testing.assert_close(actual, expected, **TOL[dtype])
