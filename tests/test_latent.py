"""attnbook.latent (chapter 9): the absorbed form equals the explicit one, the latent cache
decodes what the full pass computes, causality, and cache sizes by attention kind."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from prop_helpers import SEEDS, randn

import math
from dataclasses import replace

from torch.utils.flop_counter import FlopCounterMode

from attnbook.gpt import GPT, GPTConfig
from attnbook.gqa import kv_cache_bytes
from attnbook.latent import (
    LatentCache,
    MultiHeadLatentAttention,
    attention_flops,
    cache_numbers_per_token,
)
from attnbook.positional import apply_rope

pytestmark = pytest.mark.usefixtures("one_thread")


def layer(
    seed: int, H: int, d_head: int, d_latent: int, d_rope: int, bias: bool = False
) -> MultiHeadLatentAttention:
    torch.manual_seed(seed % 2**31)
    return MultiHeadLatentAttention(H * d_head, H, d_latent, d_rope, bias=bias).double()


@given(
    SEEDS,
    st.integers(1, 4),
    st.integers(1, 5),
    st.integers(1, 9),
    st.sampled_from([2, 4]),
    st.integers(1, 3),
    st.integers(1, 8),
    st.booleans(),
)
@settings(max_examples=50, deadline=None)
def test_absorbed_equals_explicit(
    seed: int,
    H: int,
    d_head: int,
    d_latent: int,
    d_rope: int,
    B: int,
    T: int,
    bias: bool,
) -> None:
    mla = layer(seed, H, d_head, d_latent, d_rope, bias)
    x = randn(seed + 1, B, T, H * d_head)
    torch.testing.assert_close(mla(x, absorbed=True)[0], mla(x)[0])


@given(
    SEEDS,
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.booleans(),
    st.booleans(),
)
@settings(max_examples=40, deadline=None)
def test_decoding_through_the_latent_cache_is_the_full_pass(
    seed: int, steps: list[int], absorbed: bool, bias: bool
) -> None:
    mla = layer(seed, 2, 4, 5, 2, bias)
    x = randn(seed + 1, 2, sum(steps), 8)
    cache, outs, at = LatentCache(), [], 0
    for n in steps:
        outs.append(mla(x[:, at : at + n], kv_cache=cache, absorbed=absorbed)[0])
        at += n
    torch.testing.assert_close(torch.cat(outs, dim=1), mla(x)[0])
    assert cache.latent.shape == (2, sum(steps), 5)
    assert cache.k_rope.shape == (2, sum(steps), 2) and len(cache) == sum(steps)
    assert cache.nbytes == 2 * sum(steps) * (5 + 2) * 8  # float64


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("absorbed", [False, True])
def test_the_layer_is_the_formula_written_out(absorbed: bool, bias: bool) -> None:
    """softmax([q ; q_r] . [c U^T ; k_r] / sqrt(d_head + d_rope)) (c V^T), causal, per head;
    with `bias`, each projection from or to d_model adds its own (U and V have none). Both
    forms return those softmax weights with `need_weights` (the hooks' reader)."""
    H, dh, dc, dr, T = 2, 4, 6, 2, 5
    mla = layer(3, H, dh, dc, dr, bias)
    x = randn(4, 1, T, H * dh)[0]  # (T, d_model)
    pos = torch.arange(T)

    def b(linear: torch.nn.Linear, rows: slice = slice(None)) -> torch.Tensor | float:
        return 0.0 if linear.bias is None else linear.bias[rows]

    c = x @ mla.W_dkv.weight.T + b(mla.W_dkv)
    k_r = apply_rope(x @ mla.W_kr.weight.T + b(mla.W_kr), pos)
    heads, weights = [], []
    for h in range(H):
        rows, rope = slice(h * dh, (h + 1) * dh), slice(h * dr, (h + 1) * dr)
        q = x @ mla.W_q.weight[rows].T + b(mla.W_q, rows)
        q_r = apply_rope(x @ mla.W_qr.weight[rope].T + b(mla.W_qr, rope), pos)
        k, v = c @ mla.W_uk.weight[rows].T, c @ mla.W_uv.weight[rows].T
        scores = (q @ k.T + q_r @ k_r.T) / math.sqrt(dh + dr)
        scores = scores.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
        weights.append(torch.softmax(scores, dim=-1))
        heads.append(weights[-1] @ v)
    want = torch.cat(heads, dim=-1) @ mla.W_o.weight.T + b(mla.W_o)
    torch.testing.assert_close(mla(x[None], absorbed=absorbed)[0][0], want)
    out, got = mla(x[None], absorbed=absorbed, need_weights=True)
    assert got is not None and mla(x[None], absorbed=absorbed)[1] is None
    torch.testing.assert_close(got[0], torch.stack(weights))  # (H, T, T)
    torch.testing.assert_close(out[0], want)
    assert (mla.W_o.bias is not None) == bias and mla.W_uk.bias is mla.W_uv.bias is None


@pytest.mark.parametrize("absorbed", [False, True])
def test_dropout_drops_attention_weights_in_training_only(absorbed: bool) -> None:
    """With one token each head's weight is 1: dropout p = 0.5 makes it 0 or 2 in training,
    so each head's output (W_o's input) is 0 or twice its eval value; eval mode is exact."""
    torch.manual_seed(0)
    mla = MultiHeadLatentAttention(32, 8, 6, 2, dropout=0.5).double()
    x = randn(5, 16, 1, 32)  # 16 sequences of one token
    seen: list[torch.Tensor] = []
    hook = mla.W_o.register_forward_pre_hook(lambda m, args: seen.append(args[0]))
    with torch.no_grad():
        mla.eval()
        mla(x, absorbed=absorbed)
        mla.train()
        mla(x, absorbed=absorbed)
    hook.remove()
    plain, dropped = (z.unflatten(-1, (8, 4)) for z in seen)  # (16, 1, H, d_head)
    kept = (dropped == 2 * plain).all(-1)
    zero = (dropped == 0).all(-1)
    assert (kept | zero).all() and kept.any() and zero.any()


def test_an_mla_gpt_takes_its_configs_dropout_and_bias() -> None:
    """GPTConfig's dropout and bias reach latent attention as they reach multi-head
    attention: the config is the model."""
    torch.manual_seed(0)
    sizes = dict(vocab_size=9, block_size=8, n_layer=2, n_head=2, n_embd=8)
    model = GPT(replace(mla_config(**sizes), dropout=0.3, bias=True))
    for block in model.blocks:
        attn = block.attn
        assert isinstance(attn, MultiHeadLatentAttention) and attn.dropout == 0.3
        for name in ("W_q", "W_qr", "W_dkv", "W_kr", "W_o"):
            assert getattr(attn, name).bias is not None, name
    plain = GPT(mla_config(**sizes))
    assert {n for n, _ in plain.named_parameters() if n.endswith("bias")} == set()
    with pytest.raises(ValueError, match="dropout"):
        MultiHeadLatentAttention(8, 2, 4, 2, dropout=1.0)


@pytest.mark.parametrize(("n_new", "n_cached"), [(1, 11), (12, 0), (3, 5)])
@pytest.mark.parametrize("absorbed", [False, True])
def test_attention_flops_counts_what_the_layer_computes(
    n_new: int, n_cached: int, absorbed: bool
) -> None:
    mla = layer(0, 4, 8, 12, 4)
    x = randn(1, 1, n_cached + n_new, 32)
    cache = LatentCache()
    if n_cached:
        mla(x[:, :n_cached], kv_cache=cache)
    with FlopCounterMode(display=False) as counter:
        mla(x[:, n_cached:], kv_cache=cache, absorbed=absorbed)
    want = attention_flops(4, 8, 12, 4, n_new, n_cached, absorbed=absorbed, d_model=32)
    assert counter.get_total_flops() == want


def test_absorbing_pays_in_decode_and_costs_in_prefill_at_deepseek_v2_size() -> None:
    size = dict(n_head=128, d_head=128, d_latent=512, d_rope=64)
    decode = [
        attention_flops(**size, n_new=1, n_cached=4095, absorbed=a) for a in (0, 1)
    ]
    prefill = [
        attention_flops(**size, n_new=4096, n_cached=0, absorbed=a) for a in (0, 1)
    ]
    assert (
        decode[1] * 50 < decode[0]
    )  # explicit: every cached latent up-projected again
    # prefill: the projections cost the same, but each query-key pair costs
    # 2 x 512 + 64 against 2 x 128 + 64 multiply-adds
    assert prefill[1] > 2 * prefill[0]


def test_partial_rope_rotates_only_the_first_features() -> None:
    config = GPTConfig(
        vocab_size=9, block_size=8, n_layer=1, n_head=2, n_embd=16, positions="rope"
    )
    torch.manual_seed(0)
    full = GPT(config)
    torch.manual_seed(0)
    half = GPT(replace(config, rope_dims=4))
    attn = half.blocks[0].attn
    x, pos = torch.randn(1, 2, 5, 8), torch.arange(3, 8)
    rotated = attn.rotate(x, pos)
    assert torch.equal(rotated[..., 4:], x[..., 4:])
    torch.testing.assert_close(rotated[..., :4], apply_rope(x[..., :4], pos))
    # the same weights as the fully rotary model, a different function
    assert all(torch.equal(p, q) for p, q in zip(full.parameters(), half.parameters()))
    ids = torch.randint(0, 9, (1, 8))
    assert not torch.allclose(full(ids)[0], half(ids)[0])
    torch.manual_seed(0)
    torch.testing.assert_close(GPT(replace(config, rope_dims=8))(ids)[0], full(ids)[0])


def test_the_output_at_a_position_ignores_later_tokens() -> None:
    mla = layer(0, 2, 4, 6, 4)
    x = randn(1, 1, 7, 8)
    y = x.clone()
    y[:, 4:] = randn(2, 1, 3, 8)
    torch.testing.assert_close(mla(x)[0][:, :4], mla(y)[0][:, :4])


def mla_config(**sizes: int) -> GPTConfig:
    """A latent-attention GPT's config: d_latent 8 and a rotary part of 4 unless given."""
    return GPTConfig(
        **{"d_latent": 8, "rope_dims": 4, **sizes}, positions="rope", attention="mla"
    )


def test_mla_gpt_trains_a_step_and_its_loss_is_finite() -> None:
    torch.manual_seed(0)
    model = GPT(mla_config(vocab_size=9, block_size=8, n_layer=2, n_head=2, n_embd=8))
    ids = torch.randint(0, 9, (2, 8))
    _, loss = model(ids, ids)
    loss.backward()
    assert torch.isfinite(loss) and model.blocks[0].attn.W_dkv.weight.grad is not None


def test_mla_gpt_keeps_the_scaled_init_of_the_residual_projection() -> None:
    """W_o of every latent block starts at std 0.02 / sqrt(2 n_layer), as GPT's own; the
    other projections at 0.02."""
    torch.manual_seed(0)
    config = mla_config(
        vocab_size=9,
        block_size=8,
        n_layer=8,
        n_head=4,
        n_embd=128,
        d_latent=64,
        rope_dims=16,
    )
    model = GPT(config)
    for block in model.blocks:
        assert abs(block.attn.W_o.weight.std().item() - 0.02 / 4) < 0.0005
        assert abs(block.attn.W_uk.weight.std().item() - 0.02) < 0.001


def test_decoding_the_mla_gpt_through_latent_caches_is_its_full_pass() -> None:
    """The latent path runs the model's own blocks: GPT.forward with a LatentCache per
    layer, a prompt then one token at a time, gives the full pass's logits."""
    torch.manual_seed(0)
    config = mla_config(vocab_size=9, block_size=12, n_layer=2, n_head=2, n_embd=16)
    model = GPT(config).double().eval()
    ids = torch.randint(0, 9, (2, 10))
    caches = [LatentCache() for _ in model.blocks]
    with torch.no_grad():
        full, _ = model(ids)
        steps = [model(ids[:, :4], kv_caches=caches)[0]]
        steps += [model(ids[:, t : t + 1], kv_caches=caches)[0] for t in range(4, 10)]
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-12, rtol=0)


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
