"""Bad input to chapter 9's modules (paged, streaming, kvquant, latent), in the format of
tests/test_bad_inputs.py: each row an invalid call, the exception and a pattern of its message."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from attnbook import blocks, caches, kvquant, latent, memory, paged, streaming
from attnbook.gpt import GPT, GPTConfig
from attnbook.multihead import MultiHeadAttention


def row(call: Callable[[], object], error: type[Exception], match: str, id: str):  # noqa: A002
    return pytest.param(call, error, match, id=id)


def t(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.zeros(*shape, dtype=dtype)


def pool() -> blocks.BlockPool:
    return blocks.BlockPool(4, 2, 1, 3)


def gpt(positions: str = "rope") -> GPT:
    return GPT(
        GPTConfig(
            vocab_size=5,
            block_size=8,
            n_layer=1,
            n_head=2,
            n_embd=4,
            positions=positions,
        )
    )


PAGED = [
    row(
        lambda: blocks.BlockPool(4, 0, 1, 3),
        ValueError,
        "block_size must be a positive int, got 0",
        "block-size-0",
    ),
    row(
        lambda: blocks.BlockPool(4, 2.0, 1, 3),
        TypeError,
        "block_size must be an int",
        "block-size-float",
    ),
    row(
        lambda: blocks.BlockPool(0, 2, 1, 3),
        ValueError,
        "num_blocks must be a positive int",
        "no-blocks",
    ),
    row(
        lambda: blocks.BlockPool(4, 2, 1, 3, n_layer=0),
        ValueError,
        "n_layer must be a positive int",
        "pool-no-layers",
    ),
    row(
        lambda: blocks.BlockPool(4, 2, 1, 3, dtype=torch.long),
        TypeError,
        "dtype must be a floating-point",
        "pool-int-dtype",
    ),
    row(
        lambda: pool().release([0]),
        ValueError,
        r"cannot release block 0 1 time\(s\): it has 0 reference",
        "release-free-block",
    ),
    row(
        lambda: pool().share([7]),
        ValueError,
        r"cannot share block 7: blocks are ints in \[0, 4\)",
        "share-outside",
    ),
    row(
        lambda: pool().write(
            1, torch.tensor([0]), torch.tensor([0]), t(1, 1, 3), t(1, 1, 3)
        ),
        ValueError,
        "layer must be < 1",
        "write-layer",
    ),
    row(
        lambda: pool().write(
            0, torch.tensor([0]), torch.tensor([0]), t(1, 2, 3), t(1, 2, 3)
        ),
        ValueError,
        r"k and v must both be \(N=1, n_head=1, d_head=3\)",
        "write-heads",
    ),
    row(
        lambda: pool().copy(1),
        ValueError,
        "cannot copy block 1",
        "copy-free-block",
    ),
    row(
        lambda: paged.gather_blocks(pool().k[0], torch.tensor([[0, 4]])),
        ValueError,
        r"tables point outside the pool: indices must be in \[0, 4\)",
        "table-outside",
    ),
    row(
        lambda: paged.gather_blocks(pool().k[0], torch.tensor([[-1]])),
        ValueError,
        "point outside the pool",
        "table-negative",
    ),
    row(
        lambda: paged.gather_blocks(pool().k[0], torch.tensor([[0.0]])),
        TypeError,
        "tables must hold integer",
        "table-float",
    ),
    row(
        lambda: paged.gather_blocks(pool().k[0], torch.tensor([0])),
        ValueError,
        r"tables must have shape \(B, n_blocks\)",
        "table-1d",
    ),
    row(
        lambda: paged.gather_blocks(t(4, 2, 3), torch.tensor([[0]])),
        ValueError,
        r"pool_tensor must have shape \(num_blocks, H, block_size, d\)",
        "pool-rank",
    ),
    row(
        lambda: blocks.BlockTable("pool"),
        TypeError,
        "pool must be a BlockPool",
        "table-not-pool",
    ),
    row(
        lambda: blocks.BlockTable(pool()).grow(0),
        ValueError,
        "n must be a positive int",
        "grow-0",
    ),
    row(
        lambda: blocks.BlockTable(pool()).reserve(9),
        RuntimeError,
        "5 blocks needed, 4 free",
        "reserve-too-much",
    ),
    row(
        lambda: paged.PagedKVCache("pool"),
        TypeError,
        "table must be a BlockTable or a BlockPool",
        "cache-not-pool",
    ),
    row(
        lambda: paged.PagedKVCache(pool(), layer=1),
        ValueError,
        "layer=1 is outside the pool's 1 layers",
        "cache-layer",
    ),
    row(
        lambda: paged.PagedKVCache(pool()).append(t(1, 2, 1, 3), t(1, 2, 1, 3)),
        ValueError,
        r"must both be \(1, H=1, T_new, d=3\)",
        "cache-wrong-heads",
    ),
    row(
        lambda: paged.PagedKVCache(pool()).append(t(2, 1, 1, 3), t(2, 1, 1, 3)),
        ValueError,
        r"\(1, H=1, T_new, d=3\)",
        "cache-batch-2",
    ),
    row(
        lambda: paged.PagedBatchCache(
            pool(), 0, torch.tensor([[0]]), torch.tensor([1])
        ).append(t(1, 1, 1, 4), t(1, 1, 1, 4)),
        ValueError,
        r"must both be \(B=1, H=1, T, d=3\)",
        "batch-cache-d",
    ),
    row(
        lambda: paged.PagedBatchCache(
            pool(), 0, torch.tensor([[0]]), torch.tensor([2])
        ).append(t(1, 1, 3, 3), t(1, 1, 3, 3)),
        ValueError,
        r"each length must be >= T=3",
        "batch-cache-T",
    ),
    row(
        lambda: paged.PagedBatchCache(
            pool(), 0, torch.tensor([[0]]), torch.tensor([3])
        ),
        ValueError,
        "each length at most the 2 slots",
        "batch-cache-length-past-table",
    ),
    row(
        lambda: paged.PagedBatchCache(
            pool(), 0, torch.tensor([[0]]), torch.tensor([1, 1])
        ),
        ValueError,
        "one row per sequence",
        "batch-cache-rows",
    ),
    row(
        lambda: paged.PagedBatchCache(
            pool(), 2, torch.tensor([[0]]), torch.tensor([1])
        ),
        ValueError,
        "layer=2 is outside the pool's 1 layers",
        "batch-cache-layer",
    ),
    row(
        lambda: paged.PagedBatchCache(
            pool(), 0, torch.tensor([[0]]), torch.tensor([1])
        ).mask(None),
        ValueError,
        "give each row's positions",
        "batch-cache-no-positions",
    ),
    row(
        lambda: memory.reserved_vs_paged([3, 9], 8, 4, 10),
        ValueError,
        "a length of 9 exceeds max_len=8",
        "length-over-max",
    ),
    row(
        lambda: memory.reserved_vs_paged([], 8, 4, 10),
        ValueError,
        "at least one sequence",
        "no-lengths",
    ),
    row(
        lambda: memory.reserved_vs_paged([3], 8, 0, 10),
        ValueError,
        "block_size must be a positive int",
        "reserved-block-0",
    ),
]

STREAMING = [
    row(
        lambda: streaming.StreamingCache(4, 4),
        ValueError,
        "sinks=4 must be smaller than capacity=4",
        "sinks-fill-cache",
    ),
    row(
        lambda: streaming.StreamingCache(0),
        ValueError,
        "capacity must be a positive int",
        "capacity-0",
    ),
    row(
        lambda: streaming.stream_losses(gpt("learned"), torch.arange(4), 4),
        ValueError,
        "streaming needs relative positions",
        "learned-positions",
    ),
    row(
        lambda: streaming.stream_losses("model", torch.arange(4), 4),
        TypeError,
        "model must be an attnbook GPT",
        "not-a-gpt",
    ),
    row(
        lambda: streaming.stream_losses(gpt(), torch.arange(4), 9),
        ValueError,
        "capacity=9 exceeds the model's block_size=8",
        "capacity-over-block",
    ),
    row(
        lambda: streaming.stream_losses(gpt(), torch.arange(4), 4, mode="evict"),
        ValueError,
        "mode must be one of",
        "bad-mode",
    ),
    row(
        lambda: streaming.stream_losses(gpt(), torch.arange(1), 4),
        ValueError,
        "at least 2 tokens",
        "one-token",
    ),
    row(
        lambda: streaming.stream_losses(
            gpt(), torch.zeros(2, 1, 3, dtype=torch.long), 4
        ),
        ValueError,
        r"ids must have shape \(N,\) or \(B, N\)",
        "ids-3d",
    ),
    row(
        lambda: streaming.first_token_mass(
            gpt(), torch.zeros(1, 8, dtype=torch.long), n_first=3, start=2
        ),
        ValueError,
        "need n_first <= start < T",
        "mass-start",
    ),
    row(
        lambda: streaming.load_ch9_model("sinks"),
        ValueError,
        "kind must be one of",
        "model-kind",
    ),
]

KVQUANT = [
    row(
        lambda: kvquant.quantize(t(2, 3), 3, -1),
        ValueError,
        r"bits must be one of \(2, 4, 8\), got 3",
        "bits-3",
    ),
    row(
        lambda: kvquant.quantize(t(2, 3), 16, -1),
        ValueError,
        r"bits must be one of \(2, 4, 8\)",
        "bits-16",
    ),
    row(
        lambda: kvquant.quantize(t(2, 3), 8.0, -1),
        TypeError,
        "bits must be an int",
        "bits-float",
    ),
    row(
        lambda: kvquant.quantize(t(2, 3), True, -1),
        TypeError,
        "bits must be an int",
        "bits-bool",
    ),
    row(
        lambda: kvquant.quantize(t(2, 3, dtype=torch.long), 8, -1),
        TypeError,
        "x must be a floating-point",
        "x-int",
    ),
    row(
        lambda: kvquant.quantize(t(2, 3), 8, 2),
        ValueError,
        r"dim must be an int in \[-2, 2\)",
        "dim-out",
    ),
    row(
        lambda: kvquant.quantize(t(2, 0), 8, -1),
        ValueError,
        "no entries along dim=-1",
        "empty-axis",
    ),
    row(
        lambda: kvquant.dequantize(t(2, 3), t(1, 3), t(1, 3)),
        TypeError,
        "codes must be uint8",
        "codes-float",
    ),
    row(
        lambda: kvquant.pack_codes(t(2, 3, dtype=torch.uint8), 4),
        ValueError,
        "last axis must be a multiple of 2",
        "pack-odd",
    ),
    row(
        lambda: kvquant.pack_codes(t(2, 6, dtype=torch.uint8), 2),
        ValueError,
        "packed 4 to a byte: the last axis must be a multiple of 4",
        "pack-2-bit-6",
    ),
    row(
        lambda: kvquant.pack_codes(torch.full((1, 4), 4, dtype=torch.uint8), 2),
        ValueError,
        r"2-bit codes must be in 0 \.\. 3",
        "pack-2-bit-range",
    ),
    row(
        lambda: kvquant.pack_codes(t(1, 4), 2),
        TypeError,
        "codes must be uint8",
        "pack-float",
    ),
    row(
        lambda: kvquant.unpack_codes(t(1, 4), 2),
        TypeError,
        "packed must be uint8",
        "unpack-float",
    ),
    row(
        lambda: caches.QuantizedKVCache(3),
        ValueError,
        r"bits must be one of \(2, 4, 8\), got 3",
        "cache-bits-3",
    ),
    row(
        lambda: caches.QuantizedKVCache(2).append(t(1, 2, 3, 6), t(1, 2, 3, 6)),
        ValueError,
        "head width d=6 must be a multiple of 4",
        "cache-2-bit-width",
    ),
    row(
        lambda: _grown(caches.QuantizedKVCache(4, 2)).append(
            t(1, 3, 1, 4), t(1, 3, 1, 4)
        ),
        ValueError,
        "does not fit the cached keys",
        "cache-heads-change",
    ),
    row(
        lambda: caches.Float8KVCache().append(t(1, 2, 3, 4), t(1, 2, 2, 4)),
        ValueError,
        "k and v must have the same shape",
        "fp8-kv-shapes",
    ),
    row(
        lambda: caches.LatentCache().append(t(1, 3, 4), t(1, 2, 2)),
        ValueError,
        "must have the same B and T_new",
        "latent-cache-lengths",
    ),
    row(
        lambda: caches.LatentCache().append(t(1, 2, 3, 4), t(1, 2, 2)),
        ValueError,
        r"latents must have shape \(B, T_new, d_latent\)",
        "latent-cache-4d",
    ),
    row(
        lambda: caches.QuantizedKVCache(8, 0),
        ValueError,
        "group must be a positive int",
        "cache-group-0",
    ),
    row(
        lambda: caches.QuantizedKVCache(8, 8, residual=12),
        ValueError,
        "residual=12 must be a multiple of group=8",
        "residual-not-whole-groups",
    ),
    row(
        lambda: caches.QuantizedKVCache(8, 8, residual=0),
        ValueError,
        "residual must be a positive int",
        "residual-0",
    ),
    row(
        lambda: caches.QuantizedKVCache(8, keys_per="head"),
        ValueError,
        "keys_per must be 'channel' or 'token'",
        "keys-per-head",
    ),
    row(
        lambda: caches.QuantizedKVCache(8).append(t(1, 2, 3, 4), t(1, 2, 3, 5)),
        ValueError,
        "k and v must have the same shape",
        "cache-kv-shapes",
    ),
]

LATENT = [
    row(
        lambda: latent.MultiHeadLatentAttention(8, 2, 4, 3),
        ValueError,
        "d_rope=3 must be even",
        "d-rope-odd",
    ),
    row(
        lambda: latent.MultiHeadLatentAttention(8, 3, 4, 2),
        ValueError,
        "not divisible by n_head=3",
        "heads",
    ),
    row(
        lambda: latent.MultiHeadLatentAttention(8, 2, 0, 2),
        ValueError,
        "d_latent must be a positive int",
        "latent-0",
    ),
    row(
        lambda: latent.MultiHeadLatentAttention(8, 2, 4, 2)(t(1, 3, 7)),
        ValueError,
        r"query must be \(B, T, d_model=8\)",
        "query-width",
    ),
    row(
        lambda: latent.MultiHeadLatentAttention(8, 2, 4, 2)(
            t(1, 3, 8), is_causal=False
        ),
        ValueError,
        "causal self-attention only",
        "not-causal",
    ),
    row(
        lambda: latent.MultiHeadLatentAttention(8, 2, 4, 2)(
            t(1, 3, 8), kv_cache=latent.KVCache()
        ),
        TypeError,
        "kv_cache must be a LatentCache",
        "plain-cache",
    ),
    row(
        lambda: latent.cache_numbers_per_token("MLA", 2, 2, 4),
        ValueError,
        "needs d_latent and d_rope",
        "mla-no-latent",
    ),
    row(
        lambda: latent.cache_numbers_per_token("GQA", 2, 4, 4, n_kv_head=3),
        ValueError,
        "n_kv_head=3 must divide n_head=4",
        "gqa-groups",
    ),
    row(
        lambda: latent.cache_numbers_per_token("MoE", 2, 2, 4),
        ValueError,
        "kind must be one of",
        "kind",
    ),
    row(
        lambda: GPTConfig(vocab_size=5, n_head=2, n_embd=4, attention="mla"),
        ValueError,
        "attention='mla' needs a causal config with positions='rope', rope_dims",
        "mla-config-positions",
    ),
    row(
        lambda: GPTConfig(
            vocab_size=5,
            n_head=2,
            n_embd=8,
            positions="rope",
            attention="mla",
            d_latent=4,
            rope_dims=2,
            n_kv_head=1,
        ),
        ValueError,
        "n_kv_head=1 is for attention='mha'.*shares no key/value heads",
        "mla-config-kv-heads",
    ),
    row(
        lambda: GPTConfig(
            vocab_size=5, n_head=2, n_embd=4, attention="latent", positions="rope"
        ),
        ValueError,
        "attention must be one of .'mha', 'mla'.",
        "config-attention-kind",
    ),
    row(
        lambda: GPTConfig(vocab_size=5, n_head=2, n_embd=8, rope_dims=2),
        ValueError,
        "rope_dims needs positions='rope'",
        "partial-not-rope",
    ),
    row(
        lambda: GPTConfig(
            vocab_size=5, n_head=2, n_embd=8, positions="rope", rope_dims=3
        ),
        ValueError,
        "rope_dims=3 must be even and at most d_head=4",
        "partial-odd",
    ),
    row(
        lambda: GPTConfig(
            vocab_size=5, n_head=2, n_embd=8, positions="rope", rope_dims=6
        ),
        ValueError,
        "at most d_head=4",
        "partial-wide",
    ),
    row(
        lambda: GPTConfig(vocab_size=5, n_head=2, n_embd=8, d_latent=4),
        ValueError,
        "d_latent is for attention='mla' only",
        "mha-latent",
    ),
    row(
        lambda: MultiHeadAttention(8, 2, rope_dims=2),
        ValueError,
        "rope_dims=2 needs rope=True",
        "mha-rope-dims-no-rope",
    ),
    row(
        lambda: MultiHeadAttention(8, 2, rope=True, rope_dims=0),
        ValueError,
        "rope_dims must be a positive int",
        "mha-rope-dims-0",
    ),
    row(
        lambda: latent.attention_flops(2, 4, 8, 2, 0, 3, absorbed=True),
        ValueError,
        "n_new must be a positive int",
        "flops-no-new",
    ),
    row(
        lambda: latent.attention_flops(2, 4, 8, 2, 1, -1, absorbed=True),
        ValueError,
        "n_cached must be >= 0",
        "flops-negative-cached",
    ),
]


def _grown(cache: caches.KVCache) -> caches.KVCache:
    cache.append(t(1, 2, 3, 4), t(1, 2, 3, 4))
    return cache


TABLES = [PAGED, STREAMING, KVQUANT, LATENT]


@pytest.mark.parametrize(
    ("call", "error", "match"), [r for table in TABLES for r in table]
)
def test_bad_input_gets_a_clear_error(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
