"""Bad input to attnbook.layers and to GPTConfig's block options (chapter 8), in the format of
tests/test_bad_inputs.py: each row an invalid call, the exception and a pattern of its message."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from attnbook.gpt import GPTConfig
from attnbook.layers import RMSNorm, SwiGLU, norm_layer, swiglu_hidden


def row(call: Callable[[], object], error: type[Exception], match: str, id: str):  # noqa: A002
    return pytest.param(call, error, match, id=id)


def t(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.zeros(*shape, dtype=dtype)


LAYERS = [
    row(lambda: RMSNorm(0), ValueError, "n_embd must be a positive int", "rms-width-0"),
    row(lambda: RMSNorm(8.0), TypeError, "n_embd must be an int", "rms-width-float"),
    row(lambda: RMSNorm(8, eps=0.0), ValueError, "eps must be a finite", "rms-eps-0"),
    row(lambda: RMSNorm(8, eps=-1e-5), ValueError, "eps must be", "rms-eps-negative"),
    row(
        lambda: RMSNorm(8)([1.0] * 8),
        TypeError,
        "x must be a torch.Tensor",
        "rms-x-list",
    ),
    row(
        lambda: RMSNorm(8)(t(2, 6)),
        ValueError,
        r"last dimension n_embd=8, got shape \(2, 6\)",
        "rms-x-width",
    ),
    row(
        lambda: RMSNorm(8)(t(2, 8, dtype=torch.long)),
        TypeError,
        "x must be a floating-point",
        "rms-x-integer",
    ),
    row(
        lambda: RMSNorm(8)(torch.tensor(1.0)),
        ValueError,
        r"x must have shape \(\.\.\., n_embd\)",
        "rms-x-scalar",
    ),
    row(lambda: swiglu_hidden(0), ValueError, "n_embd must be a positive", "hidden-0"),
    row(lambda: SwiGLU(0), ValueError, "n_embd must be a positive", "swiglu-width-0"),
    row(lambda: SwiGLU(8, hidden=0), ValueError, "hidden must be a positive", "h-0"),
    row(lambda: SwiGLU(8, hidden=2.5), TypeError, "hidden must be an int", "h-float"),
    row(
        lambda: SwiGLU(8)(t(3, 4)),
        ValueError,
        r"last dimension n_embd=8, got shape \(3, 4\)",
        "swiglu-x-width",
    ),
    row(
        lambda: SwiGLU(8)(t(3, 8, dtype=torch.int32)),
        TypeError,
        "x must be a floating-point",
        "swiglu-x-integer",
    ),
    row(
        lambda: norm_layer("batchnorm", 8),
        ValueError,
        r"norm must be one of \('layernorm', 'rmsnorm'\), got 'batchnorm'",
        "norm-layer-kind",
    ),
    row(
        lambda: GPTConfig(vocab_size=10, norm="batchnorm"),
        ValueError,
        r"norm must be one of \('layernorm', 'rmsnorm'\), got 'batchnorm'",
        "config-norm",
    ),
    row(
        lambda: GPTConfig(vocab_size=10, mlp="relu"),
        ValueError,
        r"mlp must be one of \('gelu', 'swiglu'\), got 'relu'",
        "config-mlp",
    ),
]


@pytest.mark.parametrize(("call", "error", "match"), LAYERS)
def test_bad_input_gets_a_clear_error(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()
