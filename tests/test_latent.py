"""attnbook.latent (chapter 9): the absorbed form equals the explicit one, the latent cache
decodes what the full pass computes, causality, and cache sizes by attention kind."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from prop_helpers import SEEDS, randn

from attnbook.gpt import GPTConfig
from attnbook.gqa import kv_cache_bytes
from attnbook.latent import (
    LatentCache,
    MultiHeadLatentAttention,
    cache_numbers_per_token,
    mla_gpt,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def layer(
    seed: int, H: int, d_head: int, d_latent: int, d_rope: int
) -> MultiHeadLatentAttention:
    torch.manual_seed(seed % 2**31)
    return MultiHeadLatentAttention(H * d_head, H, d_latent, d_rope).double()


@given(
    SEEDS,
    st.integers(1, 4),
    st.integers(1, 5),
    st.integers(1, 9),
    st.sampled_from([2, 4]),
    st.integers(1, 3),
    st.integers(1, 8),
)
@settings(max_examples=50, deadline=None)
def test_absorbed_equals_explicit(
    seed: int, H: int, d_head: int, d_latent: int, d_rope: int, B: int, T: int
) -> None:
    mla = layer(seed, H, d_head, d_latent, d_rope)
    x = randn(seed + 1, B, T, H * d_head)
    torch.testing.assert_close(mla(x, absorbed=True)[0], mla(x)[0])


@given(SEEDS, st.lists(st.integers(1, 4), min_size=1, max_size=4), st.booleans())
@settings(max_examples=40, deadline=None)
def test_decoding_through_the_latent_cache_is_the_full_pass(
    seed: int, steps: list[int], absorbed: bool
) -> None:
    mla = layer(seed, 2, 4, 5, 2)
    x = randn(seed + 1, 2, sum(steps), 8)
    cache, outs, at = LatentCache(), [], 0
    for n in steps:
        outs.append(mla(x[:, at : at + n], kv_cache=cache, absorbed=absorbed)[0])
        at += n
    torch.testing.assert_close(torch.cat(outs, dim=1), mla(x)[0])
    assert cache.k.shape == (2, sum(steps), 5) and cache.v.shape == (2, sum(steps), 2)


def test_the_output_at_a_position_ignores_later_tokens() -> None:
    mla = layer(0, 2, 4, 6, 4)
    x = randn(1, 1, 7, 8)
    y = x.clone()
    y[:, 4:] = randn(2, 1, 3, 8)
    torch.testing.assert_close(mla(x)[0][:, :4], mla(y)[0][:, :4])


def test_mla_gpt_trains_a_step_and_its_loss_is_finite() -> None:
    torch.manual_seed(0)
    model = mla_gpt(
        GPTConfig(
            vocab_size=9, block_size=8, n_layer=2, n_head=2, n_embd=8, positions="none"
        ),
        4,
        2,
    )
    ids = torch.randint(0, 9, (2, 8))
    _, loss = model(ids, ids)
    loss.backward()
    assert torch.isfinite(loss) and model.blocks[0].attn.W_dkv.weight.grad is not None


def test_numbers_per_token_by_kind() -> None:
    assert cache_numbers_per_token("MHA", 12, 12, 64) == 2 * 12 * 12 * 64
    assert cache_numbers_per_token("GQA", 12, 12, 64, n_kv_head=4) == kv_cache_bytes(
        1, 12, 4, 64, 1
    )
    assert cache_numbers_per_token("MQA", 12, 12, 64) == 2 * 12 * 64
    # DeepSeek-V2: 60 layers, d_c = 512, d_rope = 64 -> 576 numbers per layer
    assert (
        cache_numbers_per_token("MLA", 60, 128, 128, d_latent=512, d_rope=64)
        == 60 * 576
    )
