"""Property tests (Hypothesis) of attnbook.positional: RoPE's offset property (scores depend
on m - n only), norms kept, tokens rotated independently; the sinusoidal table's shift is a
rotation of each frequency pair; the modules add exactly their table."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from prop_helpers import DTYPES, SEEDS, close, randn

from attnbook.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rope,
    sinusoidal_encoding,
)

pytestmark = pytest.mark.usefixtures("one_thread")
HALF_WIDTHS = st.integers(1, 16)  # d = 2 * half
POSITIONS = st.integers(0, 2000)


@given(HALF_WIDTHS, POSITIONS, POSITIONS, st.integers(-500, 500), DTYPES, SEEDS)
def test_rope_scores_depend_only_on_the_offset(
    half: int, m: int, n: int, shift: int, dtype: torch.dtype, seed: int
) -> None:
    d = 2 * half
    q, k = randn(seed, 1, d, dtype=dtype), randn(seed + 1, 1, d, dtype=dtype)
    # the same offset m - n (negative positions rotate backwards)
    m2, n2 = m + shift, n + shift

    def score(a: int, b: int) -> float:
        return (
            apply_rope(q, torch.tensor([a])) @ apply_rope(k, torch.tensor([b])).T
        ).item()

    # angles are computed in float64, then cos/sin rounded to the input's dtype: float32 loses
    # about 1e-7 of each rotated coordinate, float64 about 1e-16 times the position
    scale = float(q.norm() * k.norm())
    tol = (
        2e-6
        if dtype == torch.float32
        else 1e-12 * (1 + max(abs(m), abs(m2), abs(n), abs(n2)))
    )
    assert math.isclose(score(m, n), score(m2, n2), abs_tol=tol * scale)


@given(st.integers(1, 3), st.integers(1, 8), HALF_WIDTHS, DTYPES, SEEDS, st.data())
def test_rope_keeps_norms_and_rotates_tokens_independently(
    B: int, T: int, half: int, dtype: torch.dtype, seed: int, data: st.DataObject
) -> None:
    x = randn(seed, B, T, 2 * half, dtype=dtype)
    positions = torch.tensor(
        data.draw(st.lists(POSITIONS, min_size=T, max_size=T), label="positions")
    )
    rotated = apply_rope(x, positions)
    close(rotated.norm(dim=-1), x.norm(dim=-1), dtype)
    perm = torch.randperm(T, generator=torch.Generator().manual_seed(seed))
    assert torch.equal(apply_rope(x[:, perm], positions[perm]), rotated[:, perm])
    assert torch.equal(apply_rope(x), apply_rope(x, torch.arange(T)))
    # position 0: identity
    assert torch.equal(apply_rope(x, torch.zeros(T, dtype=torch.long)), x)


@given(st.integers(2, 64), st.integers(1, 40), st.integers(0, 40))
def test_sinusoidal_shift_is_a_rotation_of_each_pair(
    d: int, k: int, start: int
) -> None:
    pe = sinusoidal_encoding(start + k + 1, d).double()
    a, b = pe[start], pe[start + k]  # positions p and p + k
    for i in range(d // 2):
        w = 1 / 10000 ** (2 * i / d)
        c, s = math.cos(k * w), math.sin(k * w)
        sin_p, cos_p = a[2 * i], a[2 * i + 1]
        # sin(p + k) = sin p cos k + cos p sin k and cos(p + k) = cos p cos k - sin p sin k;
        # the table is float32, so each entry carries ~6e-8 of rounding
        assert math.isclose(b[2 * i], sin_p * c + cos_p * s, abs_tol=3e-7)
        assert math.isclose(b[2 * i + 1], cos_p * c - sin_p * s, abs_tol=3e-7)
    assert pe.abs().max() <= 1


@given(st.integers(1, 20), st.integers(1, 12), st.integers(1, 3), SEEDS, st.data())
def test_position_modules_add_their_table(
    max_len: int, d: int, B: int, seed: int, data: st.DataObject
) -> None:
    T = data.draw(st.integers(1, max_len), label="T")
    offset = data.draw(st.integers(0, max_len - T), label="offset")
    x = randn(seed, B, T, d, dtype=torch.float32)
    assert torch.equal(
        SinusoidalPositionalEncoding(max_len, d)(x) - x,
        (x + sinusoidal_encoding(max_len, d)[:T]) - x,
    )
    torch.manual_seed(seed % 2**31)
    learned = LearnedPositionalEmbedding(max_len, d)
    with torch.no_grad():
        assert torch.equal(
            learned(x, offset=offset), x + learned.embedding.weight[offset : offset + T]
        )
