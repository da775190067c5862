"""What one decode step reads and computes (chapter 9): why decoding is memory-bound.

Each decode step adds one token per sequence, and to do it reads every weight once and every
sequence's whole key/value cache. The ratio of arithmetic to bytes read, the arithmetic
intensity, decides whether the step waits on memory or on arithmetic: a GPU that does P
FLOP/s and reads B bytes/s is memory-bound below P / B FLOPs per byte.
"""

from __future__ import annotations

from ._checks import positive_int
from .latent import cache_numbers_per_token

__all__ = ["decode_step_cost"]


def decode_step_cost(
    kind: str,
    n_layer: int,
    n_head: int,
    d_head: int,
    context: int,
    batch: int = 1,
    *,
    n_kv_head: int | None = None,
    d_latent: int | None = None,
    d_rope: int | None = None,
    bytes_per_number: int = 2,
    n_params: int = 0,
) -> dict[str, float]:
    """Bytes read and floating-point operations of one decode step (chapter 9): `batch`
    sequences of `context` cached tokens each add one token.

    Attention reads each sequence's whole cache, `latent.cache_numbers_per_token` numbers per
    token (MHA 2 H d_head, GQA 2 H_kv d_head, MLA d_latent + d_rope, per layer), and per key
    and query head does a score and a weighted sum: 4 d_head operations (MHA, GQA, MQA), or
    in MLA's absorbed form 2 (d_latent + d_rope) + 2 d_latent over the latents. The weights
    (`n_params`, embeddings aside) are read once per step and do 2 operations per parameter
    per sequence. Returns bytes and FLOPs of each part and the arithmetic intensities
    (FLOPs per byte): attention's, and the whole step's.
    """
    for name, value in (("context", context), ("batch", batch)):
        positive_int(name, value)
    positive_int("bytes_per_number", bytes_per_number)
    positive_int("n_params", n_params, allow_zero=True)
    numbers = cache_numbers_per_token(
        kind,
        n_layer,
        n_head,
        d_head,
        n_kv_head=n_kv_head,
        d_latent=d_latent,
        d_rope=d_rope,
    )
    per_key_head = (
        2 * (d_latent + d_rope) + 2 * d_latent  # type: ignore[operator]
        if kind == "MLA"
        else 4 * d_head
    )
    cache_bytes = batch * context * numbers * bytes_per_number
    attention_flops = batch * context * n_layer * n_head * per_key_head
    weight_bytes, weight_flops = n_params * bytes_per_number, 2 * n_params * batch
    return {
        "cache_bytes": cache_bytes,
        "attention_flops": attention_flops,
        "weight_bytes": weight_bytes,
        "weight_flops": weight_flops,
        "attention_intensity": attention_flops / cache_bytes,
        "intensity": (attention_flops + weight_flops) / (cache_bytes + weight_bytes),
    }
