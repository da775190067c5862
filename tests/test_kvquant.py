"""attnbook.kvquant and the quantised caches of attnbook.caches (chapter 9): the round trip
within half a step, packing 2, 4 and 8-bit codes, the quantised cache against the plain one."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from prop_helpers import SEEDS, randn

from attnbook.gpt import GPT, GPTConfig
from attnbook.caches import Float8KVCache, KVCache, QuantizedKVCache
from attnbook.kvquant import (
    dequantize,
    pack_codes,
    quantize,
    unpack_codes,
)

pytestmark = pytest.mark.usefixtures("one_thread")
BITS = st.sampled_from([2, 4, 8])


@given(
    SEEDS,
    BITS,
    st.integers(1, 9),
    st.integers(1, 9),
    st.sampled_from([-1, -2]),
    st.floats(1e-3, 1e3),
    st.sampled_from([torch.float32, torch.float64]),
)
@settings(max_examples=80, deadline=None)
def test_round_trip_error_is_within_half_a_step(
    seed: int, bits: int, T: int, d: int, dim: int, size: float, dtype: torch.dtype
) -> None:
    x = randn(seed, 2, T, d, dtype=dtype) * size
    x[0, 0, 0] *= 20  # an outlier
    codes, scale, lo = quantize(x, bits, dim)
    assert codes.dtype == torch.uint8 and int(codes.max()) <= 2**bits - 1
    assert scale.shape[dim] == 1 and lo.shape == scale.shape
    err = (dequantize(codes, scale, lo) - x).abs()
    # the rounding of lo + code * scale itself
    eps = torch.finfo(dtype).eps * 4 * x.abs().amax()
    assert (err <= scale / 2 + eps).all()
    # the extremes of each slice are reproduced (code 0 and code 2^b - 1)
    torch.testing.assert_close(
        dequantize(codes, scale, lo).amin(dim=dim, keepdim=True), lo
    )


def test_keys_per_channel_and_values_per_token_reduce_over_the_right_axis() -> None:
    # (T=2, d=2): channel 1 is the outlier
    k = torch.tensor([[1.0, 100.0], [3.0, 300.0]])
    _, scale, _ = quantize(k, 8, dim=-2)
    torch.testing.assert_close(scale, torch.tensor([[2.0, 200.0]]) / 255)
    _, scale, _ = quantize(k, 8, dim=-1)
    torch.testing.assert_close(scale, torch.tensor([[99.0], [297.0]]) / 255)


def test_a_constant_slice_is_exact() -> None:
    x = torch.full((3, 4), 2.5)
    codes, scale, lo = quantize(x, 4, -1)
    assert torch.equal(dequantize(codes, scale, lo), x)


def test_packing_puts_the_first_code_in_the_lowest_bits() -> None:
    codes = torch.tensor([[1, 2, 3, 0, 2, 2, 0, 1]], dtype=torch.uint8)
    assert pack_codes(codes, 2).tolist() == [[1 | 2 << 2 | 3 << 4, 2 | 2 << 2 | 1 << 6]]
    assert pack_codes(codes, 4).tolist() == [[1 | 2 << 4, 3, 2 | 2 << 4, 1 << 4]]
    assert torch.equal(pack_codes(codes, 8), codes)
    assert torch.equal(unpack_codes(pack_codes(codes, 2), 2), codes)


@given(SEEDS, BITS, st.integers(1, 5))
def test_packing_round_trips_in_bits_over_8_bytes(
    seed: int, bits: int, runs: int
) -> None:
    codes = torch.randint(
        0,
        2**bits,
        (3, 8 // bits * runs),
        generator=torch.Generator().manual_seed(seed),
        dtype=torch.uint8,
    )
    packed = pack_codes(codes, bits)
    assert packed.numel() == codes.numel() * bits // 8
    assert torch.equal(unpack_codes(packed, bits), codes)


@given(
    SEEDS,
    BITS,
    st.integers(1, 4),
    st.integers(1, 3),
    st.lists(st.integers(1, 7), min_size=1, max_size=4),
)
@settings(max_examples=40, deadline=None)
def test_the_cache_holds_the_quantised_keys_and_values(
    seed: int, bits: int, group: int, groups: int, steps: list[int]
) -> None:
    """KIVI's cache: keys quantised R = groups x group at a time, once R have gathered, in
    groups of `group` per channel; values quantised per token once they leave the window of
    the newest R; everything newer in full precision."""
    B, H, d, R = 2, 2, 4, groups * group
    cache, plain = QuantizedKVCache(bits, group, residual=R), KVCache()
    for i, n in enumerate(steps):
        k, v = randn(seed + 2 * i, B, H, n, d), randn(seed + 2 * i + 1, B, H, n, d)
        got_k, got_v = cache.append(k, v)
        want_k, want_v = plain.append(k, v)
    T = sum(steps)
    assert got_k.shape == got_v.shape == (B, H, T, d) and len(cache) == T
    done, old = T // R * R, max(T - R, 0)  # keys quantised, values quantised
    # the newest keys and values: full precision
    assert torch.equal(got_k[:, :, done:], want_k[:, :, done:])
    assert torch.equal(got_v[:, :, old:], want_v[:, :, old:])
    # each complete group: per channel, within half a step
    for g in range(0, done, group):
        _, scale, _ = quantize(want_k[:, :, g : g + group], bits, -2)
        assert (
            (got_k[:, :, g : g + group] - want_k[:, :, g : g + group]).abs()
            <= scale / 2 + 1e-12
        ).all()
    if old:
        _, scale, _ = quantize(want_v[:, :, :old], bits, -1)
        assert (
            (got_v[:, :, :old] - want_v[:, :, :old]).abs() <= scale / 2 + 1e-12
        ).all()
        assert not torch.equal(got_v[:, :, :old], want_v[:, :, :old]) or bits == 8
    # what it holds: packed codes of the old values and the done keys, float64 scales and
    # minima (per token for values, per group and channel for keys), the newest in full
    held = ([cache.v_quantised[0]] if old else []) + (
        [cache.k_quantised[0]] if done else []
    )
    assert all(t.dtype == torch.uint8 for t in held)
    assert cache.k_residual.shape == (B, H, T - done, d)
    assert cache.v_residual.shape == (B, H, T - old, d)
    codes = bits * B * H * (old + done) * d // 8
    scales = 2 * 8 * (B * H * old + B * H * d * (done // group))
    full = B * H * (T - done + T - old) * d * 8
    assert cache.nbytes == codes + scales + full
    assert cache.k is None and cache.v is None  # no dequantised copy is kept


@given(SEEDS, BITS, st.integers(1, 4), st.integers(2, 12))
@settings(max_examples=30, deadline=None)
def test_decoding_token_by_token_is_causal(
    seed: int, bits: int, group: int, T: int
) -> None:
    """What attention reads at step t depends on keys and values 0..t only: a later token
    never enters the scale of an earlier group (the cache quantises complete groups)."""
    k, v = randn(seed, 1, 2, T, 4), randn(seed + 1, 1, 2, T, 4)
    cache, seen = QuantizedKVCache(bits, group), []
    for t in range(T):
        seen.append(cache.append(k[:, :, t : t + 1], v[:, :, t : t + 1]))
    for t in range(T):  # the same tokens, the cache rebuilt: step t reads as before
        again = QuantizedKVCache(bits, group)
        for s in range(t + 1):
            got = again.append(k[:, :, s : s + 1], v[:, :, s : s + 1])
        assert torch.equal(got[0], seen[t][0]) and torch.equal(got[1], seen[t][1])
        # and keys read at step t are the keys read later, for the complete groups
        done = (t + 1) // group * group
        assert torch.equal(seen[t][0][:, :, :done], seen[-1][0][:, :, :done])


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_per_token_and_per_channel_keys_take_equal_bytes_when_group_is_d(
    bits: int,
) -> None:
    """One scale per 16 numbers either way: a token's 16 channels or a channel's 16 tokens."""
    k = torch.randn(1, 4, 40, 16)
    by_channel, by_token = (
        QuantizedKVCache(bits, 16),
        QuantizedKVCache(bits, 16, "token"),
    )
    for t in range(40):
        by_channel.append(k[:, :, t : t + 1], k[:, :, t : t + 1])
        by_token.append(k[:, :, t : t + 1], k[:, :, t : t + 1])
    assert by_channel.nbytes == by_token.nbytes
    # float32: 32 keys and 24 values as codes with 2 x 4 bytes per 16 numbers, the newest
    # 8 keys and 16 values in full precision
    per_16 = 16 * bits // 8 + 8
    assert by_channel.nbytes == 4 * (32 * per_16 + 24 * per_16 + (8 + 16) * 16 * 4)


def test_a_gpt_reading_an_8_bit_cache_stays_close_to_the_plain_one() -> None:
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=11,
            block_size=32,
            n_layer=2,
            n_head=2,
            n_embd=16,
            positions="rope",
        )
    ).eval()
    ids = torch.randint(0, 11, (2, 32))
    with torch.no_grad():
        plain = model(ids)[0]
        eight = model(ids, kv_caches=[QuantizedKVCache(8, 16) for _ in model.blocks])[0]
        four = model(ids, kv_caches=[QuantizedKVCache(4, 16) for _ in model.blocks])[0]
    err8, err4 = (eight - plain).abs().max(), (four - plain).abs().max()
    assert 0 < err8 < err4 < 0.5


@given(SEEDS, BITS, st.lists(st.integers(1, 5), min_size=1, max_size=3))
@settings(max_examples=30, deadline=None)
def test_keys_per_token_are_quantised_like_the_values_once_their_group_is_done(
    seed: int, bits: int, steps: list[int]
) -> None:
    cache, plain = QuantizedKVCache(bits, 4, keys_per="token"), KVCache()
    for i, n in enumerate(steps):
        k, v = randn(seed + 2 * i, 1, 2, n, 4), randn(seed + 2 * i + 1, 1, 2, n, 4)
        got_k, _ = cache.append(k, v)
        want_k, _ = plain.append(k, v)
    done = len(cache) // 4 * 4
    codes, scale, lo = quantize(want_k, bits, -1)
    torch.testing.assert_close(
        got_k[:, :, :done], dequantize(codes, scale, lo)[:, :, :done]
    )
    assert torch.equal(got_k[:, :, done:], want_k[:, :, done:])


def test_the_float8_cache_holds_one_byte_per_number() -> None:
    k, v = torch.randn(2, 1, 2, 5, 8) * 3
    cache = Float8KVCache()
    got_k, got_v = cache.append(k, v)
    assert got_k.dtype == torch.float32 and cache.k.dtype == torch.float8_e4m3fn
    assert cache.nbytes == k.numel() + v.numel()
    torch.testing.assert_close(got_v, v.to(torch.float8_e4m3fn).float())
    # e4m3 keeps 3 mantissa bits: relative error at most 2^-4
    assert ((got_k - k).abs() <= k.abs() / 16 + 2**-9).all()
