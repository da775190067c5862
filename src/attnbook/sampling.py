"""Drawing the next token from a model's logits (chapter 6): temperature, top-k and top-p
(nucleus) sampling, the one sampler of `GPT.generate` and the serving engine (chapter 9).
`attnbook.gpt` re-exports it."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["sample_next_token"]


def sample_next_token(
    logits: Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
    top_p: float | None = None,
) -> Tensor:
    """Sample one token id per row of `logits` (B, vocab) -> (B, 1) (chapter 6).

    Temperature divides the logits *before* the softmax (lower = sharper); `top_k` keeps the
    k largest logits (ties at the k-th value kept) and sets the rest to -inf. `top_p`
    (nucleus sampling) then keeps the most probable tokens until their probabilities add up to
    at least p (the likeliest token always stays), and renormalises over them.
    """
    if temperature <= 0:
        raise ValueError(
            f"temperature must be > 0, got {temperature} (for greedy decoding use top_k=1)"
        )
    if logits.dim() != 2:
        raise ValueError(f"logits must be (B, vocab), got shape {tuple(logits.shape)}")
    if top_p is not None:
        if isinstance(top_p, bool) or not isinstance(top_p, (int, float)):
            raise TypeError(
                f"top_p must be a number in (0, 1] or None, got {type(top_p).__name__}"
            )
        if not 0.0 < top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    logits = logits / temperature
    if top_k is not None:
        if not 1 <= top_k:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        k = min(top_k, logits.shape[-1])
        kth = torch.topk(logits, k, dim=-1).values[:, -1:]  # (B, 1): the k-th largest
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)  # (B, vocab)
    if top_p is not None and top_p < 1.0:
        sorted_probs, order = torch.sort(probs, dim=-1, descending=True)  # (B, vocab)
        mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs  # of likelier ones
        # the nucleus is already complete before this token
        drop_sorted = mass_before >= top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)  # in vocabulary order
        probs = probs.masked_fill(drop, 0.0)
        probs = probs / probs.sum(dim=-1, keepdim=True)
    # a CPU generator
    if generator is not None and generator.device.type != probs.device.type:
        # (B, 1)
        return torch.multinomial(probs.cpu(), 1, generator=generator).to(probs.device)
    return torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
