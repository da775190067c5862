#!/usr/bin/env python3
"""KIVI's layouts on chapter 9's tiny GPT, decoded token by token (chapter 9).

    python benchmarks/serving_kivi.py --windows 256 \
        --save src/attnbook/data/benchmark_serving_kivi.json    # the record chapter 9 quotes

The shipped model (`streaming.load_ch9_model()`, 4 layers, 4 heads of 16) reads validation
windows of 64 characters one token at a time, every layer's cache one of:

    float32             the plain `KVCache`
    fp8 e4m3            `Float8KVCache`: one byte per number, no scale
    b bits, channel/32  `QuantizedKVCache(b, 32)`: KIVI's layout, keys per channel in groups
                        of 32 tokens, the newest keys and values (fewer than 32) in float32
    b bits, channel/16  the same with groups of 16
    b bits, token/16    keys per token, quantised once their group of 16 is complete: the
                        same residual and exactly the bytes of channel/16 (one float32 scale
                        and minimum per 16 numbers either way), so only the layout differs
    2 bits, ../G, R32   KIVI's residual apart from its group: keys quantised 32 at a time
                        (groups of G = 16 or 8; R = 4G is KIVI's own ratio, G = 32, R = 128)

By default the residual R equals the group G. Keys stay in float32 until R have gathered;
values in a window of the newest R (KIVI's value residual), older ones per token.

for b in 2, 4, 8. Decoding is causal: a key group is quantised when its last token has been
read, so no scale ever sees a later key. Each row records the mean loss (nats per character
over the 64 predictions of every window), the change against float32 with its standard
error over windows (paired: the same windows for every row) and the bytes per token and
layer the cache holds after 64 tokens (`nbytes`, measured); and, per width, the paired
difference token/16 minus channel/16 (the two layouts at equal bytes) with its standard
error. One thread. Not a test.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.caches import Float8KVCache, KVCache, QuantizedKVCache
from attnbook.data import write_benchmark_record
from attnbook.gpt import GPT
from attnbook.streaming import load_ch9_model
from attnbook.text import get_batch, load_tiny_shakespeare, split_train_val

BATCH = 64


def layouts() -> dict[str, Callable[[], KVCache]]:
    """Name -> a function making one layer's cache."""
    rows: dict[str, Callable[[], KVCache]] = {
        "float32": KVCache,
        "fp8 e4m3": Float8KVCache,
    }
    for bits in (8, 4, 2):
        rows[f"{bits} bits, channel/32"] = lambda b=bits: QuantizedKVCache(b, 32)
        rows[f"{bits} bits, channel/16"] = lambda b=bits: QuantizedKVCache(b, 16)
        rows[f"{bits} bits, token/16"] = lambda b=bits: QuantizedKVCache(b, 16, "token")
    # the residual apart from the group (2 bits): R = 32 with groups of 16 and of 8 (R = 4G,
    # KIVI's own ratio, 32 and 128), keys per token at R = 32 for the equal-bytes contrast
    for G, keys in ((16, "channel"), (8, "channel"), (16, "token")):
        rows[f"2 bits, {keys}/{G}, R32"] = lambda G=G, k=keys: QuantizedKVCache(
            2, G, k, residual=32
        )
    return rows


@torch.no_grad()
def decode_losses(
    model: GPT, windows: Tensor, make_cache: Callable[[], KVCache]
) -> tuple[Tensor, float]:
    """Token-by-token losses (B, T - 1) of windows (B, T) and the cache's bytes per token and
    layer after the window (layer 0's; every layer holds as much)."""
    caches = [make_cache() for _ in model.blocks]
    B, T = windows.shape
    losses = torch.empty(B, T - 1)
    for t in range(T - 1):
        logits = model(windows[:, t : t + 1], kv_caches=caches)[0][:, -1]  # (B, vocab)
        losses[:, t] = F.cross_entropy(logits, windows[:, t + 1], reduction="none")
    model(windows[:, T - 1 :], kv_caches=caches)  # the last token enters the cache too
    return losses, caches[0].nbytes / (B * T)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--windows", type=int, default=256, help="a multiple of 64")
    parser.add_argument("--save", default=None, help="write the results as a record")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, tok = load_ch9_model()
    _, val_data = split_train_val(tok.encode(load_tiny_shakespeare()), 0.1)
    g = torch.Generator().manual_seed(2024)
    batches = [
        get_batch(val_data, 64, BATCH, g)[0] for _ in range(args.windows // BATCH)
    ]
    per_window: dict[str, Tensor] = {}
    results = {}
    for name, make in layouts().items():
        runs = [decode_losses(model, w, make) for w in batches]
        per_window[name] = torch.cat([loss.mean(1) for loss, _ in runs])  # (windows,)
        diff = per_window[name] - per_window["float32"]
        results[name] = {
            "loss": per_window[name].mean().item(),
            "change": diff.mean().item(),
            "change_se": (diff.std() / diff.numel() ** 0.5).item()
            if name != "float32"
            else 0.0,
            "bytes_per_token_layer": runs[0][1],
        }
        r = results[name]
        print(
            f"{name:>20}: loss {r['loss']:.4f}, change {r['change']:+.4f} "
            f"+- {r['change_se']:.4f}, {r['bytes_per_token_layer']:.0f} bytes/token/layer",
            flush=True,
        )
    gaps = {}  # per width: keys per token minus keys per channel, at equal bytes
    for bits in (8, 4, 2):
        diff = (
            per_window[f"{bits} bits, token/16"]
            - per_window[f"{bits} bits, channel/16"]
        )
        gaps[str(bits)] = {
            "mean": diff.mean().item(),
            "se": (diff.std() / diff.numel() ** 0.5).item(),
        }
        print(
            f"{bits} bits, token/16 - channel/16: {diff.mean():+.4f} +- {gaps[str(bits)]['se']:.4f}"
        )
    results["token_minus_channel_at_equal_bytes"] = gaps
    contrasts = {  # paired differences of the 2-bit rows: what the residual and group do
        "R16_minus_R32_at_G16": ("2 bits, channel/16", "2 bits, channel/16, R32"),
        "G32_minus_G16_at_R32": ("2 bits, channel/32", "2 bits, channel/16, R32"),
        "G8_minus_G16_at_R32": ("2 bits, channel/8, R32", "2 bits, channel/16, R32"),
        "token_minus_channel_at_R32": (
            "2 bits, token/16, R32",
            "2 bits, channel/16, R32",
        ),
    }
    for name, (a, b) in contrasts.items():
        diff = per_window[a] - per_window[b]
        se = (diff.std() / diff.numel() ** 0.5).item()
        contrasts_out = {
            "mean": diff.mean().item(),
            "se": se,
            "worse": int((diff > 0).sum()),
        }
        results.setdefault("residual_and_group", {})[name] = contrasts_out
        print(f"{name}: {diff.mean():+.4f} +- {se:.4f}")
    if args.save:
        write_benchmark_record(
            args.save,
            "python " + " ".join(sys.argv),
            [2024],
            results,
            windows=args.windows,
            window=64,
            scales_dtype="float32",
        )
        print(f"record written to {args.save}")


if __name__ == "__main__":
    main()
