"""Reading a text longer than the context: rolling caches, attention sinks, re-encoding
(chapter 9; StreamingLLM, Xiao et al. 2023).

A model with relative positions (RoPE or ALiBi) never sees an absolute position, so it can
keep reading past its `block_size` if its cache is kept to at most `capacity` tokens:

    "rolling"         keep the last `capacity` tokens (evict the oldest)
    "sinks"           keep the first `sinks` tokens of the stream and the last capacity - sinks
    "reencode"        at every step run the model afresh on the last `capacity` tokens (exact
                      for a model trained on windows of that length, but capacity times the
                      work)
    "reencode-sinks"  the same on the first `sinks` tokens and the last capacity - sinks: the
                      windows a model trained with a start token saw, if sinks = 1

The cache (`caches.StreamingCache`) keeps keys *before* rotation, and the model's attention
gives them positions by their slot in the cache (0 .. n-1), the query the last one, as
StreamingLLM does: a sink token
then sits at distance <= capacity - 1 from the query, a distance the model was trained on.

Two models are shipped (`load_ch9_model`): one trained on windows cut anywhere in the text,
and one whose every training window began with a start token, where a sink can form.
"""

from __future__ import annotations

import importlib.resources
import io

import torch
import torch.nn.functional as F
from torch import Tensor

from ._checks import positive_int, tensor
from .caches import StreamingCache
from .device import evaluating
from .gpt import GPT, GPTConfig
from .hooks import with_attention_weights
from .text import CharTokenizer, load_tiny_shakespeare

__all__ = [
    "StreamingCache",
    "stream_losses",
    "first_token_mass",
    "stream_attention",
    "load_ch9_model",
    "MODES",
    "WEIGHTS",
]

MODES = ("rolling", "sinks", "reencode", "reencode-sinks")
#: The shipped models of chapter 9 and their weights (benchmarks/serving_model.py).
WEIGHTS = {
    "plain": "ch9_rope_gpt.pt",
    "start-token": "ch9_sink_gpt.pt",
    "start-token-long": "ch9_sink_gpt_long.pt",
}


def _check_model(model: GPT) -> None:
    if not isinstance(model, GPT):
        raise TypeError(f"model must be an attnbook GPT, got {type(model).__name__}")
    if model.config.positions not in ("rope", "alibi", "none"):
        raise ValueError(
            f"streaming needs relative positions (positions 'rope', 'alibi' or 'none'), "
            f"the model has positions={model.config.positions!r}"
        )


def stream_losses(
    model: GPT, ids: Tensor, capacity: int, mode: str = "rolling", sinks: int = 4
) -> Tensor:
    """Read `ids` (N,), or B streams (B, N) side by side, one token at a time and predict the
    next (chapter 9).

    mode: one of `MODES` (see the module); `sinks` counts the first tokens kept by "sinks"
    and "reencode-sinks". Returns the loss of each prediction in nats, (N - 1,) or
    (B, N - 1).
    """
    _check_model(model)
    tensor("ids", ids, "(N,) or (B, N)", dims=(1, 2))
    if ids.shape[-1] < 2:
        raise ValueError(f"ids must hold at least 2 tokens, got {ids.shape[-1]}")
    positive_int("capacity", capacity)
    if capacity > model.config.block_size:
        raise ValueError(
            f"capacity={capacity} exceeds the model's block_size={model.config.block_size}"
        )
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    kept = sinks if mode in ("sinks", "reencode-sinks") else 0
    streams = ids.long().view(-1, ids.shape[-1])  # (B, N)
    losses = torch.empty(streams.shape[0], streams.shape[1] - 1)
    caches = [StreamingCache(capacity, kept) for _ in model.blocks]
    with evaluating(model):
        for t in range(streams.shape[1] - 1):
            if mode.startswith("reencode"):
                recent = max(kept, t + 1 - (capacity - kept))  # the first recent token
                window = torch.cat(
                    [streams[:, : min(kept, t + 1)], streams[:, recent : t + 1]], dim=1
                )
                logits = model(window)[0][:, -1]  # (B, vocab)
            else:
                # the newest tokens (B, 1) through GPT.forward; each layer's cache
                # reads and evicts, keys placed by their slot
                logits = model(streams[:, t : t + 1], kv_caches=caches)[0][:, -1]
            losses[:, t] = F.cross_entropy(logits, streams[:, t + 1], reduction="none")
    return losses.view(*ids.shape[:-1], -1)


@torch.no_grad()
def stream_attention(model: GPT, ids: Tensor, capacity: int, sinks: int = 0) -> Tensor:
    """Read `ids` (N,) one token at a time through a `StreamingCache` of `capacity` tokens
    (the first `sinks` kept for good) and return every query's weights by position in the
    text, (n_layer, H, N, N): row t holds query t's weights on the tokens it still has in
    the cache, and 0 on the later ones and on those already evicted (chapter 9)."""
    _check_model(model)
    tensor("ids", ids, "(N,)", dims=(1,))
    positive_int("capacity", capacity)
    if capacity > model.config.block_size:
        raise ValueError(
            f"capacity={capacity} exceeds the model's block_size={model.config.block_size}"
        )
    N = ids.shape[0]
    caches = [StreamingCache(capacity, sinks) for _ in model.blocks]
    maps = torch.zeros(len(model.blocks), model.config.n_head, N, N)
    with evaluating(model):
        for t in range(N):
            held = torch.arange(t + 1)  # the positions the cache holds after token t
            if t + 1 > capacity:
                recent = torch.arange(t + 1 - (capacity - sinks), t + 1)
                held = torch.cat([torch.arange(sinks), recent])
            new = ids[t : t + 1].long()[None]  # (1, 1)
            # one GPT.forward, each layer's weights (1, H, 1, n) read by hooks
            weights = with_attention_weights(model, new, None, caches)[1]
            for layer, w in enumerate(weights):
                assert w.shape[-1] == len(held)
                maps[layer, :, t, held] = w[0, :, 0]
    return maps


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
    with evaluating(model):
        maps = model.attention_maps(ids)  # n_layer x (B, H, T, T)
    mass = torch.stack(
        [m[:, :, start:, :n_first].sum(-1).mean(dim=(0, 2)) for m in maps]
    )
    uniform = sum(n_first / (i + 1) for i in range(start, T)) / (T - start)
    return mass, uniform


def load_ch9_model(kind: str = "plain") -> tuple[GPT, CharTokenizer]:
    """A tiny RoPE GPT of chapter 9 (trained by benchmarks/serving_model.py, weights shipped
    in float16), in float32 and eval mode, and its tokenizer.

    kind "plain": trained on 64-character windows cut anywhere in the text. kind
    "start-token": every training window was a start token and 63 characters; its vocabulary
    has one more id than the tokenizer's, `tok.vocab_size`, the start token.
    "start-token-long": the same trained for 4000 steps instead of 1500."""
    if kind not in WEIGHTS:
        raise ValueError(f"kind must be one of {tuple(WEIGHTS)}, got {kind!r}")
    raw = (
        importlib.resources.files("attnbook.data").joinpath(WEIGHTS[kind]).read_bytes()
    )
    saved = torch.load(io.BytesIO(raw), weights_only=True)
    tok = CharTokenizer.from_text(load_tiny_shakespeare())
    start_id = saved.get("start_id")
    if start_id not in (None, tok.vocab_size):
        raise ValueError(
            f"{WEIGHTS[kind]} has start token {start_id}, expected none "
            f"or {tok.vocab_size}"
        )
    vocab_size = tok.vocab_size + (start_id is not None)
    model = GPT(GPTConfig(vocab_size=vocab_size, **saved["config"]))
    model.load_state_dict({name: t.float() for name, t in saved["state_dict"].items()})
    return model.eval(), tok
