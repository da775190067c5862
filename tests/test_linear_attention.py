"""Unit tests of attnbook.linear_attention (chapter 11): causality, the normaliser, the
delta rule's overwrite and the gate's forgetting, the state's bytes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from attnbook.caches import kv_cache_bytes
from attnbook.linear_attention import (
    delta_rule_parallel,
    delta_rule_recurrent,
    elu_feature_map,
    linear_attention_parallel,
    linear_attention_recurrent,
    state_bytes,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def qkv(T: int = 9, d: int = 4, seed: int = 0) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    return tuple(
        torch.randn(2, 3, T, d, generator=g, dtype=torch.float64) for _ in range(3)
    )


def test_feature_map_is_positive_and_one_plus_x_near_zero() -> None:
    x = torch.linspace(-30, 30, 101, dtype=torch.float64)
    assert (elu_feature_map(x) > 0).all()
    assert torch.allclose(
        elu_feature_map(torch.tensor([0.0, 0.5])), torch.tensor([1.0, 1.5])
    )


@pytest.mark.parametrize("form", ["parallel", "recurrent"])
def test_linear_attention_is_causal(form: str) -> None:
    q, k, v = qkv()
    run = (
        linear_attention_parallel
        if form == "parallel"
        else (lambda *a: linear_attention_recurrent(*a)[0])
    )
    before = run(q, k, v)
    k2, v2 = k.clone(), v.clone()
    k2[:, :, 5:] += 3.0
    v2[:, :, 5:] -= 2.0
    after = run(q, k2, v2)
    torch.testing.assert_close(after[:, :, :5], before[:, :, :5])
    assert not torch.allclose(after[:, :, 5:], before[:, :, 5:])


def test_normaliser_makes_the_weights_sum_to_one() -> None:
    q, k, _ = qkv()
    ones = torch.ones(2, 3, 9, 5, dtype=torch.float64)
    torch.testing.assert_close(
        linear_attention_parallel(q, k, ones), ones, atol=1e-5, rtol=0
    )
    # the first token sees only itself: its output is its own value
    _, _, v = qkv()
    y = linear_attention_parallel(q, k, v)
    torch.testing.assert_close(y[:, :, 0], v[:, :, 0], atol=1e-5, rtol=0)


def test_linear_attention_piles_up_where_the_delta_rule_overwrites() -> None:
    key = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    k = key.expand(1, 1, 2, 3).contiguous()
    v = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=torch.float64)
    beta = torch.ones(1, 1, 2, dtype=torch.float64)
    y, _ = delta_rule_recurrent(k, k, v, beta)
    torch.testing.assert_close(
        y[0, 0, 1], v[0, 0, 1]
    )  # the second write replaced the first
    y_lin, (S, _) = linear_attention_recurrent(k, k, v)
    assert torch.allclose(y_lin[0, 0, 1], torch.tensor([0.5, 0.5], dtype=torch.float64))


def test_beta_zero_writes_nothing_and_alpha_forgets() -> None:
    q, k, v = qkv()
    k = F.normalize(k, dim=-1)
    zero = torch.zeros(2, 3, 9, dtype=torch.float64)
    assert (delta_rule_parallel(q, k, v, zero) == 0).all()
    ones = torch.ones(2, 3, 9, dtype=torch.float64)
    alpha = ones.clone()
    alpha[:, :, 4] = 1e-30  # forget everything before token 4
    gated = delta_rule_parallel(q, k, v, ones, alpha)
    fresh = delta_rule_parallel(q[:, :, 4:], k[:, :, 4:], v[:, :, 4:], ones[:, :, 4:])
    torch.testing.assert_close(gated[:, :, 4:], fresh, atol=1e-12, rtol=0)
    ungated = delta_rule_parallel(q, k, v, ones)
    assert not torch.allclose(ungated[:, :, 4:], fresh)


def test_delta_rule_parallel_has_gradients() -> None:
    q, k, v = (t.clone().requires_grad_() for t in qkv())
    beta = torch.full((2, 3, 9), 0.5, dtype=torch.float64, requires_grad=True)
    alpha = torch.full((2, 3, 9), 0.9, dtype=torch.float64, requires_grad=True)
    delta_rule_parallel(q, F.normalize(k, dim=-1), v, beta, alpha).sum().backward()
    for t in (q, k, v, beta, alpha):
        assert (
            t.grad is not None
            and torch.isfinite(t.grad).all()
            and t.grad.abs().sum() > 0
        )


def test_state_bytes_is_constant_and_the_cache_grows() -> None:
    # 2 layers x 4 heads x (16 x 16 + 16) float32 numbers
    assert state_bytes(2, 4, 16, 16, 4) == 2 * 4 * (256 + 16) * 4
    assert state_bytes(2, 4, 16, 16, 4, normaliser=False) == 2 * 4 * 256 * 4
    assert state_bytes(2, 4, 16, 16, 4, batch_size=3) == 3 * state_bytes(
        2, 4, 16, 16, 4
    )
    # a token's key and value are 2 x 16 numbers a head, the state 16 x 16: equal at 8 tokens
    assert kv_cache_bytes(8, 2, 4, 16, 4) == state_bytes(
        2, 4, 16, 16, 4, normaliser=False
    )
    S = linear_attention_recurrent(*qkv(T=50))[1][0]
    assert S.nbytes == state_bytes(1, 3, 4, 4, 8, normaliser=False, batch_size=2)
