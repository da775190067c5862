"""Reading a text longer than the context: rolling caches, attention sinks, re-encoding
(chapter 9; StreamingLLM, Xiao et al. 2023).

A model with relative positions (RoPE or ALiBi) never sees an absolute position, so it can
keep reading past its `block_size` if its cache is kept to at most `capacity` tokens:

    "rolling"   keep the last `capacity` tokens (evict the oldest)
    "sinks"     keep the first `sinks` tokens of the stream and the last capacity - sinks
    "reencode"  at every step run the model afresh on the last `capacity` tokens (exact
                for a model trained on windows of that length, but capacity times the work)

The cache keeps keys *before* rotation and gives them positions by their slot in the cache
(0 .. n-1), the query the last one, as StreamingLLM does: a sink token then sits at distance
<= capacity - 1 from the query, a distance the model was trained on.
"""

from __future__ import annotations

import importlib.resources
import io
import time
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor

from ._checks import positive_int, tensor
from .gpt import GPT, Block, GPTConfig
from .gqa import repeat_kv
from .multihead import merge_heads, split_heads
from .positional import alibi_bias, apply_rope
from .text import CharTokenizer, load_tiny_shakespeare

__all__ = [
    "StreamingCache",
    "stream_losses",
    "first_token_mass",
    "load_ch9_model",
    "MODES",
]

MODES = ("rolling", "sinks", "reencode")


class StreamingCache:
    """One layer's keys (unrotated) and values, (1, H_kv, n, d) each, n <= capacity; beyond
    it the oldest tokens after the first `sinks` are evicted (chapter 9)."""

    def __init__(self, capacity: int, sinks: int = 0) -> None:
        positive_int("capacity", capacity)
        positive_int("sinks", sinks, allow_zero=True)
        if sinks >= capacity:
            raise ValueError(
                f"sinks={sinks} must be smaller than capacity={capacity}: the cache "
                "must keep room for recent tokens"
            )
        self.capacity, self.sinks = capacity, sinks
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.shape[-2]

    def add(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append one step's k, v (1, H_kv, T_new, d), evict, return what is kept."""
        if self.k is None or self.v is None:
            self.k, self.v = k, v
        else:
            self.k, self.v = (
                torch.cat([self.k, k], dim=-2),
                torch.cat([self.v, v], dim=-2),
            )
        excess = len(self) - self.capacity
        if excess > 0:
            keep = torch.cat(
                [torch.arange(self.sinks), torch.arange(self.sinks + excess, len(self))]
            )
            self.k, self.v = self.k[:, :, keep], self.v[:, :, keep]
        return self.k, self.v


def _block_step(block: Block, x: Tensor, cache: StreamingCache) -> Tensor:
    """One block on the newest token x (1, 1, C), reading and updating its streaming cache."""
    attn = block.attn
    h = block.ln_1(x)
    q = split_heads(attn.W_q(h), attn.n_head)  # (1, H, 1, d)
    k, v = cache.add(
        split_heads(attn.W_k(h), attn.n_kv_head),
        split_heads(attn.W_v(h), attn.n_kv_head),
    )
    n = k.shape[-2]  # (1, H_kv, n, d): positions are the cache slots 0 .. n-1
    bias = None
    if attn.rope:
        q = apply_rope(q, torch.tensor([n - 1]))
        k = apply_rope(k, torch.arange(n))
    if attn.alibi:
        bias = alibi_bias(attn.n_head, 1, n, dtype=q.dtype)  # (H, 1, n)
    group = attn.n_head // attn.n_kv_head
    out = F.scaled_dot_product_attention(
        q, repeat_kv(k, group), repeat_kv(v, group), attn_mask=bias
    )
    x = x + attn.W_o(merge_heads(out))  # (1, 1, C)
    return x + block.mlp(block.ln_2(x))


def _check_model(model: GPT) -> None:
    if not isinstance(model, GPT):
        raise TypeError(f"model must be an attnbook GPT, got {type(model).__name__}")
    if model.config.positions not in ("rope", "alibi", "none"):
        raise ValueError(
            f"streaming needs relative positions (positions 'rope', 'alibi' or 'none'), "
            f"the model has positions={model.config.positions!r}"
        )


@torch.no_grad()
def stream_losses(
    model: GPT, ids: Tensor, capacity: int, mode: str = "rolling", sinks: int = 4
) -> tuple[Tensor, float]:
    """Read `ids` (N,) one token at a time and predict the next (chapter 9).

    mode: "rolling", "sinks" (the first `sinks` tokens kept) or "reencode" (see the module).
    Returns the loss of each prediction (N - 1,) in nats and the seconds per token.
    """
    _check_model(model)
    tensor("ids", ids, "(N,)", dims=(1,))
    if ids.shape[0] < 2:
        raise ValueError(f"ids must hold at least 2 tokens, got {ids.shape[0]}")
    positive_int("capacity", capacity)
    if capacity > model.config.block_size:
        raise ValueError(
            f"capacity={capacity} exceeds the model's block_size={model.config.block_size}"
        )
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    was_training = model.training
    model.eval()
    ids = ids.long()
    losses = torch.empty(ids.shape[0] - 1)
    caches = [
        StreamingCache(capacity, sinks if mode == "sinks" else 0) for _ in model.blocks
    ]
    start = time.perf_counter()
    for t in range(ids.shape[0] - 1):
        if mode == "reencode":
            logits = model(ids[max(0, t + 1 - capacity) : t + 1][None])[0][0, -1]
        else:
            x = model.tok_emb(ids[t : t + 1])[None]  # (1, 1, C)
            for block, cache in zip(model.blocks, caches):
                x = _block_step(cast(Block, block), x, cache)
            logits = model.head(model.ln_f(x))[0, -1]  # (vocab,)
        losses[t] = F.cross_entropy(logits[None], ids[t + 1 : t + 2])
    seconds = (time.perf_counter() - start) / (ids.shape[0] - 1)
    model.train(was_training)
    return losses, seconds


@torch.no_grad()
def first_token_mass(
    model: GPT, ids: Tensor, n_first: int = 1, start: int = 16
) -> tuple[Tensor, float]:
    """Mean attention weight on the first `n_first` keys, per layer and head (chapter 9).

    ids (B, T): windows read from their start. Averaged over the batch and over the queries at
    positions start .. T-1. Returns ((n_layer, H) masses, the mass a uniform causal head would
    give them: the mean of n_first / (i + 1) over the same queries).
    """
    tensor("ids", ids, "(B, T)", dims=(2,))
    positive_int("n_first", n_first)
    positive_int("start", start, allow_zero=True)
    T = ids.shape[1]
    if not n_first <= start < T:
        raise ValueError(
            f"need n_first <= start < T, got n_first={n_first}, start={start}, T={T}"
        )
    maps = model.attention_maps(ids)  # n_layer x (B, H, T, T)
    mass = torch.stack(
        [m[:, :, start:, :n_first].sum(-1).mean(dim=(0, 2)) for m in maps]
    )
    uniform = sum(n_first / (i + 1) for i in range(start, T)) / (T - start)
    return mass, uniform


def load_ch9_model() -> tuple[GPT, CharTokenizer]:
    """The tiny RoPE GPT chapter 9 streams with (trained by benchmarks/serving_model.py,
    weights shipped in float16), in float32 and eval mode, and its tokenizer."""
    raw = (
        importlib.resources.files("attnbook.data")
        .joinpath("ch9_rope_gpt.pt")
        .read_bytes()
    )
    saved = torch.load(io.BytesIO(raw), weights_only=True)
    tok = CharTokenizer.from_text(load_tiny_shakespeare())
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, **saved["config"]))
    model.load_state_dict({name: t.float() for name, t in saved["state_dict"].items()})
    return model.eval(), tok
