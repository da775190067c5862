"""Bad input to every public function: one table per module. Each row is an invalid call a user
can make, the exception it must raise (TypeError for a wrong type or dtype, ValueError for a
wrong shape, size or value) and a pattern its message must match: the message names the
argument and what was expected, instead of a NaN or a traceback from deep inside torch."""

from __future__ import annotations

from collections.abc import Callable

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from torch import nn

from attnbook import (
    attention,
    blockwise,
    data,
    gqa,
    masks,
    memory,
    multihead,
    plot,
    positional,
    text,
)


def row(call: Callable[[], object], error: type[Exception], match: str, id: str):  # noqa: A002
    return pytest.param(call, error, match, id=id)


def check(call: Callable[[], object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()
    plt.close("all")


def t(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.zeros(*shape, dtype=dtype)


sdpa = attention.scaled_dot_product_attention
ATTENTION = [
    row(
        lambda: sdpa([[1.0]], t(2, 4), t(2, 4)),
        TypeError,
        "q must be a torch.Tensor",
        "q-not-tensor",
    ),
    row(
        lambda: sdpa(t(4), t(2, 4), t(2, 4)),
        ValueError,
        r"q must have at least 2 dimensions.*\(4,\)",
        "q-rank-1",
    ),
    row(
        lambda: sdpa(t(3, 4), t(5, 3), t(5, 3)),
        ValueError,
        "same width d_k: q has 4",
        "d_k-mismatch",
    ),
    row(
        lambda: sdpa(t(3, 4), t(5, 4), t(6, 4)),
        ValueError,
        "same number of tokens: k has 5",
        "T_k-mismatch",
    ),
    row(
        lambda: sdpa(t(2, 3, 4), t(3, 5, 4), t(3, 5, 4)),
        ValueError,
        "do not broadcast",
        "batch-mismatch",
    ),
    row(
        lambda: sdpa(t(3, 4, dtype=torch.long), t(5, 4), t(5, 4)),
        TypeError,
        "q must be a floating-point",
        "q-integer",
    ),
    row(
        lambda: sdpa(t(3, 4), t(5, 4, dtype=torch.float64), t(5, 4)),
        TypeError,
        "same dtype",
        "mixed-dtypes",
    ),
    row(
        lambda: sdpa(t(3, 0), t(5, 0), t(5, 4)),
        ValueError,
        r"at least one feature \(d_k >= 1\)",
        "d_k-zero",
    ),
    row(
        lambda: sdpa(t(3, 4), t(0, 4), t(0, 4)),
        ValueError,
        r"at least one token \(T_k >= 1\)",
        "no-keys",
    ),
    row(
        lambda: sdpa(t(3, 4), t(5, 4), t(5, 4), t(3, 5)),
        TypeError,
        "mask must be boolean.*float32",
        "mask-float",
    ),
    row(
        lambda: sdpa(t(3, 4), t(5, 4), t(5, 4), [[True]]),
        TypeError,
        "mask must be a boolean torch.Tensor",
        "mask-list",
    ),
    row(
        lambda: sdpa(t(3, 4), t(5, 4), t(5, 4), t(4, 5, dtype=torch.bool)),
        ValueError,
        r"mask of shape \(4, 5\) does not broadcast.*T_q=3, T_k=5",
        "mask-shape",
    ),
    row(
        lambda: attention.SelfAttention(0, 4),
        ValueError,
        "d_in must be a positive int, got 0",
        "d_in-zero",
    ),
    row(
        lambda: attention.SelfAttention(4, -1),
        ValueError,
        "d_out must be a positive int, got -1",
        "d_out-negative",
    ),
    row(
        lambda: attention.SelfAttention(2.5, 4),
        TypeError,
        "d_in must be an int",
        "d_in-float",
    ),
    row(
        lambda: attention.SelfAttention(3, 4)(t(3)),
        ValueError,
        r"x must be a tensor of shape \(\.\.\., T, d_in=3\)",
        "x-rank-1",
    ),
    row(
        lambda: attention.SelfAttention(3, 4)(t(2, 5)),
        ValueError,
        "expects d_in=3",
        "x-width",
    ),
    row(
        lambda: attention.SelfAttention(3, 4)([[0.0] * 3]),
        TypeError,
        "x must be a torch.Tensor",
        "x-list",
    ),
]

MASKS = [
    row(
        lambda: masks.causal_mask(0),
        ValueError,
        "T must be a positive int, got 0",
        "causal-zero",
    ),
    row(
        lambda: masks.causal_mask(-3),
        ValueError,
        "T must be a positive int, got -3",
        "causal-negative",
    ),
    row(
        lambda: masks.causal_mask(4.0),
        TypeError,
        "T must be an int, got float",
        "causal-float",
    ),
    row(
        lambda: masks.causal_mask(True),
        TypeError,
        "T must be an int, got bool",
        "causal-bool",
    ),
    row(
        lambda: masks.padding_mask(t(3, dtype=torch.long), 0),
        ValueError,
        r"tokens must have shape \(B, T\)",
        "padding-rank-1",
    ),
    row(
        lambda: masks.padding_mask([[1, 0]], 0),
        TypeError,
        "tokens must be a torch.Tensor",
        "padding-list",
    ),
    row(
        lambda: masks.padding_mask(t(2, 3), 0),
        TypeError,
        "tokens must hold integer ids",
        "padding-float-ids",
    ),
    row(
        lambda: masks.padding_mask(t(2, 3, dtype=torch.long), 0.5),
        TypeError,
        "pad_id must be an int",
        "padding-pad_id",
    ),
    row(
        lambda: masks.padding_mask_from_lengths([[1, 2]]),
        ValueError,
        "lengths must be a 1-D sequence of ints",
        "lengths-2d",
    ),
    row(
        lambda: masks.padding_mask_from_lengths([1.5]),
        ValueError,
        "lengths must be a 1-D sequence of ints",
        "lengths-float",
    ),
    row(
        lambda: masks.padding_mask_from_lengths("ab"),
        TypeError,
        "lengths must be a 1-D sequence of ints",
        "lengths-string",
    ),
    row(
        lambda: masks.padding_mask_from_lengths([2, -1]),
        ValueError,
        "lengths must be non-negative",
        "lengths-negative",
    ),
    row(
        lambda: masks.padding_mask_from_lengths([5], max_len=3),
        ValueError,
        "length of 5 does not fit in max_len=3",
        "lengths-too-long",
    ),
    row(
        lambda: masks.padding_mask_from_lengths([0], max_len=-1),
        ValueError,
        "max_len must be >= 0",
        "max_len-negative",
    ),
    row(
        lambda: masks.combine_masks(t(3, 3, dtype=torch.bool), t(3, 3)),
        TypeError,
        r"masks\[1\] must be boolean",
        "combine-float",
    ),
    row(
        lambda: masks.combine_masks([[True]]),
        TypeError,
        r"masks\[0\] must be a boolean torch.Tensor",
        "combine-list",
    ),
    row(
        lambda: masks.combine_masks(
            t(3, 3, dtype=torch.bool), t(2, 4, dtype=torch.bool)
        ),
        ValueError,
        r"shapes \[\(3, 3\), \(2, 4\)\] do not broadcast",
        "combine-shapes",
    ),
    row(
        lambda: masks.to_additive(t(3, 3)),
        TypeError,
        "mask must be boolean",
        "to_additive-float",
    ),
    row(
        lambda: masks.to_additive(t(3, 3, dtype=torch.bool), torch.long),
        TypeError,
        "dtype must be a floating-point",
        "to_additive-int-dtype",
    ),
    row(
        lambda: masks.from_additive(torch.tensor([0.0, -1.0])),
        ValueError,
        "found -1.0, a soft bias",
        "from_additive-soft-bias",
    ),
    row(
        lambda: masks.from_additive(torch.tensor([0.0, 2.0])),
        ValueError,
        "found 2.0, a soft bias",
        "from_additive-positive",
    ),
    row(
        lambda: masks.from_additive(torch.tensor([0.0, float("inf")])),
        ValueError,
        "found inf",
        "from_additive-plus-inf",
    ),
    row(
        lambda: masks.from_additive(torch.tensor([0.0, float("nan")])),
        ValueError,
        "must not hold NaN",
        "from_additive-nan",
    ),
    row(
        lambda: masks.from_additive(torch.tensor([0, -1])),
        TypeError,
        "additive must be a floating-point",
        "from_additive-int",
    ),
    row(
        lambda: masks.from_additive(t(2), threshold=0.0),
        ValueError,
        "threshold must be a negative number",
        "from_additive-threshold",
    ),
    row(
        lambda: masks.to_torch_mha_mask(t(3, 3)),
        TypeError,
        "mask must be boolean",
        "to_torch-float",
    ),
]

MHA = multihead.MultiHeadAttention
MULTIHEAD = [
    row(
        lambda: multihead.split_heads(torch.randn(5, 8), 2),
        ValueError,
        r"x must have shape \(B, T, d_model\), got \(5, 8\)",
        "split-rank-2",
    ),
    row(
        lambda: multihead.split_heads([[0.0]], 1),
        TypeError,
        "x must be a torch.Tensor",
        "split-list",
    ),
    row(
        lambda: multihead.split_heads(t(2, 3, 8), 0),
        ValueError,
        "n_head must be a positive int",
        "split-zero",
    ),
    row(
        lambda: multihead.split_heads(t(2, 3, 8), 2.0),
        TypeError,
        "n_head must be an int",
        "split-float",
    ),
    row(
        lambda: multihead.split_heads(t(2, 3, 10), 4),
        ValueError,
        "d_model=10 is not divisible by n_head=4",
        "split-indivisible",
    ),
    row(
        lambda: multihead.merge_heads(t(2, 3, 4)),
        ValueError,
        r"x must have shape \(B, H, T, d_k\)",
        "merge-rank-3",
    ),
    row(
        lambda: MHA(10, 4),
        ValueError,
        "d_model=10 is not divisible by n_head=4",
        "init-indivisible",
    ),
    row(
        lambda: MHA(0, 1),
        ValueError,
        "d_model must be a positive int, got 0",
        "init-zero",
    ),
    row(
        lambda: MHA(8, -2),
        ValueError,
        "n_head must be a positive int, got -2",
        "init-negative",
    ),
    row(lambda: MHA(8, 2.0), TypeError, "n_head must be an int", "init-float"),
    row(
        lambda: MHA(8, 2)(t(8)),
        ValueError,
        r"query must be \(B, T, d_model=8\) or \(T, d_model\), got \(8,\)",
        "query-rank-1",
    ),
    row(
        lambda: MHA(8, 2)([[0.0] * 8]),
        TypeError,
        "query must be a torch.Tensor",
        "query-list",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 3, 8), t(2, 3, 6)),
        ValueError,
        r"key must be \(B, T, d_model=8\)",
        "key-width",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 0, 8)),
        ValueError,
        "query must hold at least one token",
        "no-tokens",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 3, 8), t(2, 4, 8), t(2, 5, 8)),
        ValueError,
        "must have the same B and T",
        "key-value-T",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 3, 8), t(3, 4, 8)),
        ValueError,
        "different batch sizes",
        "batch-mismatch",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 3, 8), t(4, 8)),
        ValueError,
        "must all be batched",
        "batched-and-unbatched",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 4, 8), mask=t(4, 4)),
        TypeError,
        "mask must be boolean",
        "mask-float",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 4, 8), mask=t(3, 3, dtype=torch.bool)),
        ValueError,
        r"mask of shape \(3, 3\) does not broadcast to \(B, H, T_q, T_k\) = \(2, 2, 4, 4\)",
        "mask-shape",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 4, 8), mask=t(4, dtype=torch.bool)),
        ValueError,
        r"mask of shape \(4,\)",
        "mask-rank-1",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 4, 8), mask=t(3, 4, 4, dtype=torch.bool)),
        ValueError,
        r"mask of shape \(3, 4, 4\)",
        "mask-batch",
    ),
    row(
        lambda: MHA(8, 2)(t(2, 4, 8), kv_cache=[]),
        TypeError,
        "kv_cache must be a KVCache",
        "kv_cache-type",
    ),
    row(
        lambda: multihead.KVCache().append(t(2, 3, 4), t(2, 3, 4)),
        ValueError,
        r"k must have shape \(B, H, T_new, d_k\)",
        "cache-rank",
    ),
    row(
        lambda: multihead.KVCache().append(t(1, 2, 3, 4), t(1, 2, 5, 4)),
        ValueError,
        "k and v must have the same shape",
        "cache-k-v",
    ),
    row(
        lambda: multihead.KVCache(t(1, 2, 3, 4), t(1, 2, 3, 4)).append(
            t(1, 3, 1, 4), t(1, 3, 1, 4)
        ),
        ValueError,
        "does not fit the cached keys",
        "cache-heads",
    ),
    row(
        lambda: MHA.from_torch(nn.Linear(4, 4)),
        TypeError,
        "mha must be a torch.nn.MultiheadAttention",
        "from_torch-type",
    ),
    row(
        lambda: MHA.from_torch(nn.MultiheadAttention(8, 2, kdim=4)),
        ValueError,
        "kdim == vdim == embed_dim",
        "from_torch-kdim",
    ),
]

rope = positional.apply_rope
POSITIONAL = [
    row(
        lambda: positional.position_embedding("absolute", 8, 4),
        ValueError,
        r"positions must be one of \('learned', 'sinusoidal', 'rope', 'alibi', 'none'\), got 'absolute'",
        "scheme-unknown",
    ),
    row(
        lambda: positional.SinusoidalPositionalEncoding(8, 4)(
            torch.zeros(1, 5, 4), offset=4
        ),
        ValueError,
        "sequence length 9 is longer than max_len=8",
        "sinusoidal-offset-too-far",
    ),
    row(
        lambda: masks.causal_mask(5, 4),
        ValueError,
        "T=5 queries cannot be the last positions of T_k=4 keys",
        "causal-more-queries-than-keys",
    ),
    row(
        lambda: attention.attend(t(1, 4, 3, 8), t(1, 3, 3, 8), t(1, 3, 3, 8)),
        ValueError,
        "H must be divisible by H_kv",
        "attend-groups",
    ),
    row(
        lambda: attention.attend(
            t(1, 2, 3, 8), t(1, 2, 3, 8), t(1, 2, 3, 8), dropout_p=1.0
        ),
        ValueError,
        r"dropout_p must be in \[0, 1\)",
        "attend-dropout",
    ),
    row(
        lambda: cars.AttentionClassifier(10, positions="alibi"),
        ValueError,
        "positions='alibi' is implemented for causal models only",
        "classifier-alibi",
    ),
    row(
        lambda: positional.sinusoidal_encoding(0, 8),
        ValueError,
        "seq_len must be a positive int",
        "table-seq_len",
    ),
    row(
        lambda: positional.sinusoidal_encoding(8, 0),
        ValueError,
        "d_model must be a positive int",
        "table-d_model",
    ),
    row(
        lambda: positional.sinusoidal_encoding(8.0, 8),
        TypeError,
        "seq_len must be an int",
        "table-float",
    ),
    row(
        lambda: positional.sinusoidal_encoding(8, 8, base=0),
        ValueError,
        "base must be a finite number > 0",
        "table-base-zero",
    ),
    row(
        lambda: positional.sinusoidal_encoding(8, 8, base=float("nan")),
        ValueError,
        "base must be a finite number > 0",
        "table-base-nan",
    ),
    row(
        lambda: positional.SinusoidalPositionalEncoding(0, 8),
        ValueError,
        "max_len must be a positive int",
        "sin-max_len",
    ),
    row(
        lambda: positional.SinusoidalPositionalEncoding(4, 8)(t(1, 3, 6)),
        ValueError,
        r"x must have shape \(\.\.\., T, d_model=8\), got \(1, 3, 6\)",
        "sin-width",
    ),
    row(
        lambda: positional.SinusoidalPositionalEncoding(4, 8)(t(8)),
        ValueError,
        r"x must have shape",
        "sin-rank-1",
    ),
    row(
        lambda: positional.SinusoidalPositionalEncoding(4, 8)(t(1, 5, 8)),
        ValueError,
        "longer than max_len=4",
        "sin-too-long",
    ),
    row(
        lambda: positional.LearnedPositionalEmbedding(4, 0),
        ValueError,
        "d_model must be a positive int",
        "learned-d_model",
    ),
    row(
        lambda: positional.LearnedPositionalEmbedding(4, 8)(t(1, 2, 8), offset=-1),
        ValueError,
        "offset must be >= 0",
        "learned-offset-negative",
    ),
    row(
        lambda: positional.LearnedPositionalEmbedding(4, 8)(t(1, 3, 8), offset=2),
        ValueError,
        "positions up to 4 requested.*max_len=4",
        "learned-too-long",
    ),
    row(
        lambda: positional.LearnedPositionalEmbedding(4, 8)(t(1, 3, 6)),
        ValueError,
        r"d_model=8\), got \(1, 3, 6\)",
        "learned-width",
    ),
    row(
        lambda: rope(t(10, 8), torch.tensor([3])),
        ValueError,
        r"positions must have shape \(T,\) = \(10,\).*got \(1,\)",
        "rope-one-position-for-ten-tokens",
    ),
    row(
        lambda: rope(t(10, 8), torch.arange(10)[None]),
        ValueError,
        r"positions must have shape \(T,\)",
        "rope-positions-2d",
    ),
    row(
        lambda: rope(t(10, 8), list(range(10))),
        TypeError,
        "positions must be a torch.Tensor",
        "rope-positions-list",
    ),
    row(
        lambda: rope(t(2, 8), torch.tensor([0.0, float("nan")])),
        ValueError,
        "positions must be finite",
        "rope-positions-nan",
    ),
    row(
        lambda: rope(t(2, 8), torch.tensor([True, False])),
        TypeError,
        "positions must be integers or real",
        "rope-positions-bool",
    ),
    row(
        lambda: rope(t(3, 5)),
        ValueError,
        "last dimension of x must be even",
        "rope-odd-width",
    ),
    row(
        lambda: rope(t(8)),
        ValueError,
        r"x must have shape \(\.\.\., T, d\)",
        "rope-rank-1",
    ),
    row(
        lambda: rope(t(3, 8, dtype=torch.long)),
        TypeError,
        "x must be a floating-point",
        "rope-integer-x",
    ),
    row(
        lambda: rope(t(3, 8), base=-2.0),
        ValueError,
        "base must be a finite number > 0",
        "rope-base",
    ),
]

Z = np.zeros
BLOCKWISE = [
    row(
        lambda: blockwise.blockwise_attention(Z(4), Z((3, 4)), Z((3, 2))),
        ValueError,
        "must be 2-D",
        "rank-1",
    ),
    row(
        lambda: blockwise.blockwise_attention(Z((2, 4)), Z((3, 5)), Z((3, 2))),
        ValueError,
        "shapes do not fit",
        "d_k-mismatch",
    ),
    row(
        lambda: blockwise.blockwise_attention(Z((2, 4)), Z((3, 4)), Z((2, 2))),
        ValueError,
        "shapes do not fit",
        "T_k-mismatch",
    ),
    row(
        lambda: blockwise.blockwise_attention(Z((2, 4)), Z((0, 4)), Z((0, 2))),
        ValueError,
        "K needs at least one key",
        "no-keys",
    ),
    row(
        lambda: blockwise.blockwise_attention(
            Z((2, 4)), Z((3, 4)), Z((3, 2)), block_size=0
        ),
        ValueError,
        "block_size must be a positive int",
        "block_size-zero",
    ),
    row(
        lambda: blockwise.blockwise_attention(
            Z((2, 4)), Z((3, 4)), Z((3, 2)), block_size=True
        ),
        TypeError,
        "block_size must be an int, got bool",
        "block_size-bool",
    ),
]

tok = text.CharTokenizer("abc")
TEXT = [
    row(
        lambda: text.load_python_corpus("argparse"),
        TypeError,
        "modules must be a list of module names",
        "corpus-string",
    ),
    row(
        lambda: text.load_python_corpus([3]),
        TypeError,
        "modules must hold module names",
        "corpus-int",
    ),
    row(
        lambda: text.load_python_corpus(["no_such_module_attnbook"]),
        ValueError,
        "no module named",
        "corpus-unknown",
    ),
    row(
        lambda: text.load_python_corpus(["math"]),
        ValueError,
        "no pure-Python source",
        "corpus-compiled",
    ),
    row(
        lambda: text.load_tiny_shakespeare(sha256="abc"),
        ValueError,
        "sha256 must be 64 hexadecimal digits",
        "shakespeare-sha256",
    ),
    row(
        lambda: text.load_tiny_shakespeare(timeout=0),
        ValueError,
        "timeout must be a finite number > 0",
        "shakespeare-timeout",
    ),
    row(
        lambda: text.load_tiny_shakespeare(path="/nonexistent/attnbook.txt"),
        FileNotFoundError,
        "no Tiny Shakespeare file",
        "shakespeare-path",
    ),
    row(
        lambda: text.load_tiny_shakespeare(path="x.txt", download=True),
        ValueError,
        "either path",
        "shakespeare-path-and-download",
    ),
    row(
        lambda: text.load_corpus("shakespear"),
        ValueError,
        "corpus must be one of",
        "corpus-name",
    ),
    row(
        lambda: data.benchmark_record("../text"),
        ValueError,
        "name must be letters, digits",
        "record-path",
    ),
    row(
        lambda: data.benchmark_record("no_such_run"),
        FileNotFoundError,
        "no benchmark record",
        "record-unknown",
    ),
    row(
        lambda: text.CharTokenizer([]),
        ValueError,
        "chars must not be empty",
        "tokenizer-empty",
    ),
    row(
        lambda: text.learn_bpe(["a", "b"], 3),
        TypeError,
        "text must be a str",
        "bpe-learn-list",
    ),
    row(
        lambda: text.learn_bpe("abc", -1),
        ValueError,
        "num_merges must be >= 0",
        "bpe-negative-merges",
    ),
    row(
        lambda: text.learn_bpe("abc", 2.5),
        TypeError,
        "num_merges must be an int",
        "bpe-float-merges",
    ),
    row(
        lambda: text.bpe_segment(b"abc", []),
        TypeError,
        "text must be a str",
        "bpe-segment-bytes",
    ),
    row(
        lambda: text.bpe_segment("abc", [("a",)]),
        ValueError,
        "merges must be pairs",
        "bpe-segment-bad-merge",
    ),
    row(
        lambda: text.CharTokenizer.from_text(""),
        ValueError,
        "chars must not be empty",
        "tokenizer-from-empty-text",
    ),
    row(
        lambda: text.CharTokenizer(["ab", "c"]),
        ValueError,
        "chars must be single characters",
        "tokenizer-long",
    ),
    row(
        lambda: text.CharTokenizer("aba"),
        ValueError,
        "chars must be distinct",
        "tokenizer-duplicate",
    ),
    row(lambda: tok.encode(5), TypeError, "text must be a str", "encode-int"),
    row(
        lambda: tok.encode("abz"),
        ValueError,
        "not in the vocabulary: 'z'",
        "encode-unknown",
    ),
    row(
        lambda: tok.decode([0, 3]),
        ValueError,
        r"token ids outside \[0, 3\): \[3\]",
        "decode-too-large",
    ),
    row(
        lambda: tok.decode([-1]),
        ValueError,
        r"token ids outside \[0, 3\): \[-1\]",
        "decode-negative",
    ),
    row(
        lambda: tok.decode([1.0]),
        TypeError,
        "ids must be integer token ids",
        "decode-float",
    ),
    row(
        lambda: tok.decode(torch.tensor([0.5])),
        TypeError,
        "ids must be a 1-D tensor of integer",
        "decode-tensor",
    ),
    row(
        lambda: tok.decode(t(2, 2, dtype=torch.long)),
        TypeError,
        r"shape \(2, 2\)",
        "decode-2d",
    ),
    row(
        lambda: text.split_train_val(torch.arange(10), 0),
        ValueError,
        r"val_fraction must be in \(0, 1\)",
        "split-zero",
    ),
    row(
        lambda: text.split_train_val(torch.arange(10), float("nan")),
        ValueError,
        r"val_fraction must be in",
        "split-nan",
    ),
    row(
        lambda: text.split_train_val(torch.arange(10), 1.5),
        ValueError,
        r"val_fraction must be in",
        "split-big",
    ),
    row(
        lambda: text.split_train_val(t(2, 5), 0.1),
        ValueError,
        r"data must have shape \(N,\)",
        "split-2d",
    ),
    row(
        lambda: text.split_train_val(torch.arange(1), 0.1),
        ValueError,
        "too short to split",
        "split-short",
    ),
    row(
        lambda: text.get_batch(torch.arange(20), 0, 2),
        ValueError,
        "block_size must be a positive int",
        "batch-block_size",
    ),
    row(
        lambda: text.get_batch(torch.arange(20), 4, -1),
        ValueError,
        "batch_size must be a positive int",
        "batch-batch_size",
    ),
    row(
        lambda: text.get_batch(torch.arange(20), 4.0, 2),
        TypeError,
        "block_size must be an int",
        "batch-float",
    ),
    row(
        lambda: text.get_batch(torch.arange(4), 4, 2),
        ValueError,
        "need more than block_size=4",
        "batch-short",
    ),
    row(
        lambda: text.get_batch(t(4, 5), 2, 2),
        ValueError,
        r"data must have shape \(N,\)",
        "batch-2d",
    ),
]

PLOT = [
    row(
        lambda: plot.attention_heatmap(t(2, 3, 3), ["a", "b", "c"]),
        ValueError,
        r"\(T_q, T_k\) matrix",
        "heatmap-rank-3",
    ),
    row(
        lambda: plot.attention_heatmap(t(3, 3), ["a", "b"]),
        ValueError,
        "2 query tokens and 2 key tokens",
        "heatmap-labels",
    ),
    row(
        lambda: plot.attention_heatmaps([], ["a"]),
        ValueError,
        "weights_list is empty",
        "heatmaps-empty",
    ),
    row(
        lambda: plot.attention_heatmaps([t(2, 2)], ["a", "b"], titles=["x", "y"]),
        ValueError,
        "2 titles for 1 matrices",
        "heatmaps-titles",
    ),
    row(
        lambda: plot.attention_heatmaps([t(2, 2)], ["a", "b"], ncols=0),
        ValueError,
        "ncols must be a positive int",
        "heatmaps-ncols",
    ),
]


# --- gpt, train, cars (chapters 6 and 7) -----------------------------------------------------
from attnbook import cars, gpt, train  # noqa: E402
from attnbook.cars import design as cars_design  # noqa: E402
from attnbook.cars import uncertainty as cars_uncertainty  # noqa: E402


def tiny_gpt() -> gpt.GPT:
    return gpt.GPT(
        gpt.GPTConfig(vocab_size=10, block_size=8, n_layer=1, n_head=2, n_embd=16)
    )


def ids(*shape: int, fill: int = 0) -> torch.Tensor:
    return torch.full(shape, fill, dtype=torch.long)


GPT = [
    row(
        lambda: gpt.GPTConfig(
            vocab_size=10, block_size=8, n_layer=1, n_head=3, n_embd=16
        ),
        ValueError,
        "n_embd=16 is not divisible by n_head=3",
        "config-heads",
    ),
    row(
        lambda: gpt.GPTConfig(
            vocab_size=0, block_size=8, n_layer=1, n_head=2, n_embd=16
        ),
        ValueError,
        "vocab_size must be a positive int, got 0",
        "config-vocab",
    ),
    row(
        lambda: gpt.GPTConfig(
            vocab_size=10, block_size=0, n_layer=1, n_head=2, n_embd=16
        ),
        ValueError,
        "block_size must be a positive int, got 0",
        "config-block",
    ),
    row(
        lambda: tiny_gpt()(ids(1, 9)),
        ValueError,
        "length 9 is longer than the model's block_size=8",
        "forward-too-long",
    ),
    row(
        lambda: tiny_gpt()(ids(1, 4, fill=10)),
        ValueError,
        r"token ids must be in \[0, 10\)",
        "forward-id-range",
    ),
    row(
        lambda: tiny_gpt()(ids(1, 4, fill=-1)),
        ValueError,
        r"token ids must be in \[0, 10\)",
        "forward-negative",
    ),
    row(
        lambda: tiny_gpt()(torch.zeros(1, 4)),
        TypeError,
        "integer token ids",
        "forward-float-ids",
    ),
    row(
        lambda: tiny_gpt()(ids(1, 4, 2)),
        ValueError,
        r"idx must be a \(B, T\) tensor",
        "forward-rank-3",
    ),
    row(
        lambda: tiny_gpt().generate(ids(1, 1), -1),
        ValueError,
        "max_new_tokens must be >= 0, got -1",
        "generate-negative",
    ),
    row(
        lambda: tiny_gpt().generate(ids(1, 1), 2, temperature=0),
        ValueError,
        "temperature must be > 0",
        "generate-temperature",
    ),
    row(
        lambda: gpt.sample_next_token(torch.zeros(1, 10), top_k=0),
        ValueError,
        "top_k must be >= 1",
        "sample-top-k",
    ),
    row(
        lambda: gpt.sample_next_token(torch.zeros(1, 10), top_p=0.0),
        ValueError,
        r"top_p must be in \(0, 1\]",
        "sample-top-p-zero",
    ),
    row(
        lambda: gpt.sample_next_token(torch.zeros(1, 10), top_p=1.5),
        ValueError,
        r"top_p must be in \(0, 1\]",
        "sample-top-p-above-one",
    ),
    row(
        lambda: gpt.sample_next_token(torch.zeros(1, 10), top_p=True),
        TypeError,
        "top_p must be a number",
        "sample-top-p-bool",
    ),
    row(
        lambda: tiny_gpt().generate(ids(1, 1), 2, top_p=-0.1),
        ValueError,
        r"top_p must be in \(0, 1\]",
        "generate-top-p",
    ),
]

TRAIN = [
    row(
        lambda: train.TrainConfig(eval_interval=0),
        ValueError,
        "eval_interval must be a positive int",
        "eval-interval",
    ),
    row(
        lambda: train.TrainConfig(eval_iters=0),
        ValueError,
        "eval_iters must be a positive int",
        "eval-iters",
    ),
    row(
        lambda: train.TrainConfig(max_iters=-1),
        ValueError,
        "max_iters must be a positive int",
        "max-iters",
    ),
    row(
        lambda: train.TrainConfig(batch_size=0),
        ValueError,
        "batch_size must be a positive int",
        "batch-size",
    ),
    row(
        lambda: train.TrainConfig(learning_rate=0),
        ValueError,
        "learning_rate must be > 0",
        "learning-rate",
    ),
]

CARS = [
    row(
        lambda: cars.generate_pairs(0),
        ValueError,
        "n_pairs must be a positive int",
        "pairs-zero",
    ),
    row(
        lambda: cars.make_split("nope", cars.generate_pairs(4), 0),
        ValueError,
        "unknown split 'nope'",
        "split-unknown",
    ),
    row(
        lambda: cars.build_model("nope", 10),
        ValueError,
        "unknown model kind 'nope'",
        "model-unknown",
    ),
    row(
        lambda: cars.AttentionClassifier(10, positions="relative"),
        ValueError,
        "positions must be one of",
        "classifier-positions",
    ),
    row(
        lambda: cars.masked_mean(t(2, 3, 4), torch.ones(2, 4, dtype=torch.bool)),
        ValueError,
        r"x must be \(B, T, D\) and mask the key mask \(B, 1, T\)",
        "masked-mean-shape",
    ),
    row(
        lambda: cars.masked_mean(t(2, 3, 4), torch.ones(2, 1, 3)),
        TypeError,
        "mask must be boolean",
        "masked-mean-float-mask",
    ),
    row(
        lambda: cars_uncertainty.pair_scores("101"),
        ValueError,
        "even-length string",
        "pair-scores-odd",
    ),
    row(
        lambda: cars_uncertainty.sign_test(-1, 3),
        ValueError,
        "non-negative",
        "sign-test-negative",
    ),
    row(
        lambda: cars_uncertainty.bootstrap_interval([]),
        ValueError,
        "at least one run",
        "bootstrap-no-run",
    ),
    row(
        lambda: cars_uncertainty.seed_interval([0.5]),
        ValueError,
        "need 2 to 10 seeds",
        "seed-interval-one",
    ),
    row(
        lambda: cars_design.prefixed_descriptions(cars.generate_pairs(2), [0], 5),
        ValueError,
        "no prefix of 5 tokens",
        "prefix-length",
    ),
]


# -- chapter 8: grouped-query attention, sliding windows, ALiBi, blockwise attention, memory
gqa_attn = gqa.grouped_query_attention
CHAPTER_8 = [
    row(
        lambda: multihead.MultiHeadAttention(12, 4, n_kv_head=3),
        ValueError,
        "n_head=4 is not divisible by n_kv_head=3",
        "mha-kv-heads-divide",
    ),
    row(
        lambda: multihead.MultiHeadAttention(12, 4, n_kv_head=0),
        ValueError,
        "n_kv_head must be a positive int, got 0",
        "mha-kv-heads-zero",
    ),
    row(
        lambda: multihead.MultiHeadAttention(12, 4, n_kv_head=2.0),
        TypeError,
        "n_kv_head must be an int",
        "mha-kv-heads-float",
    ),
    row(
        lambda: multihead.MultiHeadAttention(8, 2, alibi=True)(t(1, 3, 8)),
        ValueError,
        "alibi=True is implemented for causal attention only",
        "mha-alibi-not-causal",
    ),
    row(
        lambda: multihead.MultiHeadAttention(8, 2, n_kv_head=1).to_torch(),
        ValueError,
        "to_torch needs n_kv_head == n_head",
        "mha-gqa-to-torch",
    ),
    row(
        lambda: gpt.GPTConfig(vocab_size=10, n_head=4, n_kv_head=3),
        ValueError,
        "n_kv_head must be a positive int dividing n_head=4",
        "config-kv-heads",
    ),
    row(
        lambda: gpt.GPTConfig(vocab_size=10, positions="relative"),
        ValueError,
        "positions must be one of",
        "config-positions",
    ),
    row(
        lambda: gpt.GPTConfig(vocab_size=10, positions="alibi", causal=False),
        ValueError,
        "implemented for causal models only",
        "config-alibi-not-causal",
    ),
    row(
        lambda: gqa.repeat_kv(t(2, 3, 4), 2),
        ValueError,
        r"x must have shape \(B, H_kv, T, d\)",
        "repeat-rank",
    ),
    row(
        lambda: gqa.repeat_kv(t(1, 2, 3, 4), 0),
        ValueError,
        "n_rep must be a positive int",
        "repeat-zero",
    ),
    row(
        lambda: gqa_attn(t(1, 4, 3, 8), t(1, 3, 3, 8), t(1, 3, 3, 8)),
        ValueError,
        "4 query heads cannot be split into groups over 3",
        "gqa-divisible",
    ),
    row(
        lambda: gqa_attn(t(1, 4, 3, 8), t(1, 2, 3, 8), t(1, 1, 3, 8)),
        ValueError,
        "k and v must have the same number of heads",
        "gqa-kv-heads",
    ),
    row(
        lambda: gqa_attn(t(1, 4, 3, 8, dtype=torch.long), t(1, 2, 3, 8), t(1, 2, 3, 8)),
        TypeError,
        "q must be a floating-point tensor",
        "gqa-integer",
    ),
    row(
        lambda: gqa_attn(t(1, 2, 5, 8), t(1, 2, 3, 8), t(1, 2, 3, 8), is_causal=True),
        ValueError,
        "is_causal needs T_q <= T_k",
        "gqa-causal-long-queries",
    ),
    row(
        lambda: gqa.kv_cache_bytes(10, 12, 0, 64, 2),
        ValueError,
        "n_kv_head must be a positive int",
        "cache-bytes-heads",
    ),
    row(
        lambda: gqa.kv_cache_bytes(-1, 12, 12, 64, 2),
        ValueError,
        "n_tokens must be >= 0",
        "cache-bytes-tokens",
    ),
    row(
        lambda: masks.sliding_window_mask(5, 0),
        ValueError,
        "window must be a positive int, got 0",
        "window-zero",
    ),
    row(
        lambda: masks.sliding_window_mask(5, 2.5),
        TypeError,
        "window must be an int",
        "window-float",
    ),
    row(
        lambda: positional.alibi_slopes(0),
        ValueError,
        "n_head must be a positive int",
        "alibi-heads",
    ),
    row(
        lambda: positional.alibi_bias(2, 5, 3),
        ValueError,
        "T_q=5 queries cannot be the last positions",
        "alibi-more-queries",
    ),
    row(
        lambda: positional.alibi_bias(2, 3, dtype=torch.long),
        TypeError,
        "dtype must be a floating-point",
        "alibi-dtype",
    ),
    row(
        lambda: blockwise.blockwise_sdpa(t(2, 3, 4), t(2, 5, 4), t(2, 5, 4), window=2),
        ValueError,
        "window needs is_causal=True",
        "blockwise-window-not-causal",
    ),
    row(
        lambda: blockwise.blockwise_sdpa(t(2, 3, 4), t(2, 5, 3), t(2, 5, 4)),
        ValueError,
        "shapes do not fit",
        "blockwise-sdpa-shapes",
    ),
    row(
        lambda: blockwise.blockwise_sdpa(
            t(2, 3, 4), t(2, 5, 4), t(2, 5, 4), block_size=0
        ),
        ValueError,
        "block_size must be a positive int",
        "blockwise-sdpa-block",
    ),
    row(
        lambda: blockwise.blockwise_sdpa(
            t(2, 3, 4, dtype=torch.long), t(2, 5, 4), t(2, 5, 4)
        ),
        TypeError,
        "q must be a floating-point tensor",
        "blockwise-sdpa-integer",
    ),
    row(
        lambda: memory.peak_tensor_bytes("not a function"),
        TypeError,
        "fn must be a callable",
        "peak-not-callable",
    ),
]


# --- ngram (chapter 6) ---------------------------------------------------------------------------
from attnbook import ngram  # noqa: E402

NGRAM = [
    row(
        lambda: ngram.ngram_losses([0, 1, 2], ids(5), 3),
        TypeError,
        "train_data must be a torch.Tensor",
        "ngram-list",
    ),
    row(
        lambda: ngram.ngram_losses(ids(5, 2), ids(5), 3),
        ValueError,
        r"train_data must have shape \(N,\)",
        "ngram-rank-2",
    ),
    row(
        lambda: ngram.ngram_losses(t(5), ids(5), 3),
        TypeError,
        "train_data must hold integer token ids",
        "ngram-float-ids",
    ),
    row(
        lambda: ngram.ngram_losses(ids(5), ids(5, fill=3), 3),
        ValueError,
        r"val_data must hold token ids in \[0, 3\)",
        "ngram-id-range",
    ),
    row(
        lambda: ngram.ngram_losses(ids(5), ids(5), 3, max_n=0),
        ValueError,
        "max_n must be a positive int",
        "ngram-max-n-zero",
    ),
    row(
        lambda: ngram.ngram_losses(ids(5), ids(5), 3, discount=0.0),
        ValueError,
        r"discount must be in \(0, 1\)",
        "ngram-discount",
    ),
    row(
        lambda: ngram.ngram_losses(ids(5), ids(5), 100_000, max_n=4),
        ValueError,
        "too large for vocab_size",
        "ngram-overflow",
    ),
    row(
        lambda: ngram.ngram_losses(ids(5), ids(2), 3, max_n=3),
        ValueError,
        "at least max_n=3 tokens",
        "ngram-too-short",
    ),
]


# --- devices (chapter 6, "On a GPU") -------------------------------------------------------------
from attnbook import device  # noqa: E402

DEVICE = [
    row(
        lambda: device.as_device("tpu"),
        ValueError,
        "unknown device 'tpu'",
        "device-unknown",
    ),
    row(
        lambda: device.pick_device("gpu"),
        ValueError,
        "unknown device 'gpu'",
        "pick-device-unknown",
    ),
    row(
        lambda: device.as_device(0),
        TypeError,
        "device must be a str or torch.device",
        "device-int",
    ),
    row(
        lambda: device.as_device("cuda:99"),
        ValueError,
        "device 'cuda:99'",
        "device-no-such-gpu",
    ),
    row(
        lambda: device.check_float64("mps", "apply_rope"),
        ValueError,
        "apply_rope needs float64.*MPS has no",
        "mps-float64",
    ),
    row(
        lambda: text.get_batch(torch.arange(20), 4, 2, device="tpu"),
        ValueError,
        "unknown device 'tpu'",
        "batch-device",
    ),
    row(
        lambda: train.TrainConfig(amp="fp8"),
        ValueError,
        "amp must be one of",
        "amp-unknown",
    ),
    row(
        lambda: train.TrainConfig(compile="yes"),
        TypeError,
        "compile must be True or False",
        "compile-str",
    ),
    row(
        lambda: train.autocast_dtype("fp16", "cpu"),
        ValueError,
        "fp16.*on the CPU use 'bf16' or 'none'",
        "amp-fp16-cpu",
    ),
]


# One test over every table; each row's id says which call it is.
TABLES = [
    ATTENTION,
    MASKS,
    MULTIHEAD,
    POSITIONAL,
    BLOCKWISE,
    TEXT,
    PLOT,
    GPT,
    TRAIN,
    CARS,
    CHAPTER_8,
    NGRAM,
    DEVICE,
]


@pytest.mark.parametrize(
    ("call", "error", "match"), [r for table in TABLES for r in table]
)
def test_bad_input_gets_a_clear_error(call, error, match) -> None:
    check(call, error, match)
