"""Tests of attnbook.positional (chapter 5)."""

import math

import pytest
import torch

from attnbook.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rope,
    sinusoidal_encoding,
)


def test_formula_even_columns_sin_odd_columns_cos():
    pe = sinusoidal_encoding(50, 16)
    pos, i = 7, 3
    assert pe.shape == (50, 16)
    assert math.isclose(
        pe[pos, 2 * i], math.sin(pos / 10000 ** (2 * i / 16)), abs_tol=1e-6
    )
    assert math.isclose(
        pe[pos, 2 * i + 1], math.cos(pos / 10000 ** (2 * i / 16)), abs_tol=1e-6
    )
    assert torch.equal(pe[0, 0::2], torch.zeros(8)) and torch.equal(
        pe[0, 1::2], torch.ones(8)
    )


@pytest.mark.parametrize("d_model", [1, 5, 7])
def test_odd_d_model(d_model):
    pe = sinusoidal_encoding(10, d_model)
    assert pe.shape == (10, d_model)
    last_i = (d_model - 1) // 2
    torch.testing.assert_close(
        pe[:, -1], torch.sin(torch.arange(10.0) / 10000 ** (2 * last_i / d_model))
    )
    assert torch.all(pe[0, 1::2] == 1) and torch.all(pe[0, 0::2] == 0)


def test_odd_d_model_shares_frequencies_with_the_even_one_below_it_scaled():
    pe = sinusoidal_encoding(6, 5)
    for i in range(2):
        w = 1 / 10000 ** (2 * i / 5)
        torch.testing.assert_close(pe[:, 2 * i + 1], torch.cos(torch.arange(6.0) * w))


def test_shift_is_a_rotation_of_each_frequency_pair():
    d, k = 16, 5
    pe = sinusoidal_encoding(40, d).double()
    rot = torch.zeros(d, d, dtype=torch.float64)
    for i in range(d // 2):
        w = 1 / 10000 ** (2 * i / d)
        c, s = math.cos(k * w), math.sin(k * w)
        rot[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor(
            [[c, -s], [s, c]], dtype=torch.float64
        )
    torch.testing.assert_close(pe[:-k] @ rot, pe[k:], atol=1e-6, rtol=0)


def test_similarity_depends_on_distance_only():
    pe = sinusoidal_encoding(60, 32).double()
    sims = pe @ pe.T
    torch.testing.assert_close(
        torch.diagonal(sims, 3),
        torch.full((57,), sims[0, 3].item(), dtype=torch.float64),
        atol=1e-5,
        rtol=0,
    )
    assert sims[0, 1] > sims[0, 10]


def test_clear_errors():
    with pytest.raises(ValueError, match="seq_len must be a positive int"):
        sinusoidal_encoding(0, 8)
    with pytest.raises(ValueError, match="longer than max_len=4"):
        SinusoidalPositionalEncoding(4, 8)(torch.zeros(1, 5, 8))
    with pytest.raises(ValueError, match="max_len=4"):
        LearnedPositionalEmbedding(4, 8)(torch.zeros(1, 5, 8))
    with pytest.raises(ValueError, match="even"):
        apply_rope(torch.zeros(3, 5))


def test_modules_add_positions():
    x = torch.zeros(2, 6, 8)
    torch.testing.assert_close(
        SinusoidalPositionalEncoding(10, 8)(x)[1], sinusoidal_encoding(6, 8)
    )
    emb = LearnedPositionalEmbedding(10, 8)
    torch.testing.assert_close(emb(x)[0], emb.embedding.weight[:6])
    torch.testing.assert_close(emb(x[:, :1], offset=4)[0, 0], emb.embedding.weight[4])


def test_rope_scores_depend_only_on_relative_offset():
    g = torch.Generator().manual_seed(0)
    q, k = (
        torch.randn(1, 16, generator=g, dtype=torch.float64),
        torch.randn(1, 16, generator=g, dtype=torch.float64),
    )

    def score(m, n):
        return (
            apply_rope(q, torch.tensor([m])) @ apply_rope(k, torch.tensor([n])).T
        ).item()

    assert math.isclose(score(3, 1), score(10, 8), abs_tol=1e-9)
    assert math.isclose(score(0, 5), score(20, 25), abs_tol=1e-9)
    assert not math.isclose(score(3, 1), score(3, 2), abs_tol=1e-6)


def test_rope_preserves_norms_and_is_identity_at_position_zero():
    x = torch.randn(2, 7, 8, dtype=torch.float64)
    r = apply_rope(x)
    torch.testing.assert_close(r.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(r[:, 0], x[:, 0])
