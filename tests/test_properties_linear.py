"""Property tests (Hypothesis) of attnbook.linear_attention: the recurrent and the parallel
form agree for random shapes and dtypes (linear attention with its normaliser, the delta rule
with and without its gate), and the delta rule with orthonormal keys returns exactly what it
stored."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from prop_helpers import DTYPES, SEEDS, close, randn

from attnbook.linear_attention import (
    delta_rule_parallel,
    delta_rule_recurrent,
    linear_attention_parallel,
    linear_attention_recurrent,
)

pytestmark = pytest.mark.usefixtures("one_thread")
SIZES = st.tuples(
    st.integers(1, 3), st.integers(1, 3), st.integers(1, 24), st.integers(1, 8)
)


@given(SIZES, st.integers(1, 8), DTYPES, SEEDS)
def test_linear_attention_recurrent_equals_parallel(sizes, d_v, dtype, seed) -> None:
    B, H, T, d_k = sizes
    q, k = (
        randn(seed, B, H, T, d_k, dtype=dtype),
        randn(seed + 1, B, H, T, d_k, dtype=dtype),
    )
    v = randn(seed + 2, B, H, T, d_v, dtype=dtype)
    y, (S, z) = linear_attention_recurrent(q, k, v)
    close(y, linear_attention_parallel(q, k, v), dtype)
    assert S.shape == (B, H, d_k, d_v) and z.shape == (B, H, d_k)


@given(SIZES, st.integers(1, 6), DTYPES, SEEDS)
def test_linear_attention_continues_from_its_state(sizes, split, dtype, seed) -> None:
    B, H, T, d_k = sizes
    q, k, v = (randn(seed + i, B, H, T, d_k, dtype=dtype) for i in range(3))
    cut = min(split, T)
    first, state = linear_attention_recurrent(
        q[:, :, :cut], k[:, :, :cut], v[:, :, :cut]
    )
    rest, _ = linear_attention_recurrent(
        q[:, :, cut:], k[:, :, cut:], v[:, :, cut:], state=state
    )
    close(torch.cat([first, rest], dim=2), linear_attention_parallel(q, k, v), dtype)


@given(SIZES, st.integers(1, 8), st.booleans(), DTYPES, SEEDS)
def test_delta_rule_recurrent_equals_parallel(sizes, d_v, gated, dtype, seed) -> None:
    B, H, T, d_k = sizes
    q = randn(seed, B, H, T, d_k, dtype=dtype)
    k = F.normalize(randn(seed + 1, B, H, T, d_k, dtype=dtype), dim=-1)
    v = randn(seed + 2, B, H, T, d_v, dtype=dtype)
    g = torch.Generator().manual_seed(seed)
    beta = torch.rand(B, H, T, generator=g, dtype=dtype)
    alpha = 0.5 + 0.5 * torch.rand(B, H, T, generator=g, dtype=dtype) if gated else None
    y, S = delta_rule_recurrent(q, k, v, beta, alpha)
    close(y, delta_rule_parallel(q, k, v, beta, alpha), dtype)
    # the state read with the last query is the last output
    close((q[:, :, -1, :, None] * S).sum(-2), y[:, :, -1], dtype)


@given(st.integers(1, 8), st.integers(1, 6), SEEDS)
def test_delta_rule_recovers_stored_values_with_orthonormal_keys(
    d_k, d_v, seed
) -> None:
    # d_k orthonormal keys, each written once with beta = 1; then each key rewritten
    # with a new value: reading key i returns its newest value, exactly (up to rounding)
    g = torch.Generator().manual_seed(seed)
    keys = torch.linalg.qr(torch.randn(d_k, d_k, generator=g, dtype=torch.float64))[0].T
    old = torch.randn(d_k, d_v, generator=g, dtype=torch.float64)
    new = torch.randn(d_k, d_v, generator=g, dtype=torch.float64)
    k = torch.cat([keys, keys])[None, None]  # (1, 1, 2 d_k, d_k)
    v = torch.cat([old, new])[None, None]
    beta = torch.ones(1, 1, 2 * d_k, dtype=torch.float64)
    _, S = delta_rule_recurrent(k, k, v, beta)
    torch.testing.assert_close(keys @ S[0, 0], new, atol=1e-12, rtol=0)
