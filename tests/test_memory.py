"""attnbook.memory.peak_tensor_bytes (chapter 8) against allocations whose size is known."""

from __future__ import annotations

import pytest
import torch

from attnbook.memory import peak_tensor_bytes


def test_one_tensor_is_counted_to_the_byte():
    result, peak = peak_tensor_bytes(lambda: torch.zeros(1000, 250))  # 250,000 float32
    assert peak == 1_000_000 and result.shape == (1000, 250)


def test_the_peak_is_the_largest_total_alive_at_once():
    def two_alive_then_one() -> torch.Tensor:
        a = torch.ones(1000)  # 4,000 bytes
        b = a * 2  # 4,000 more: 8,000 alive
        del a
        c = torch.ones(500, dtype=torch.float64)  # 4,000: still 8,000 alive with b
        return b + c[:1].sum()

    _, peak = peak_tensor_bytes(two_alive_then_one)
    assert peak == 12_008  # b, c, the one-number sum (8) and the result (4,000) at once


def test_views_in_place_results_and_inputs_made_before_cost_nothing():
    x = torch.zeros(1000)  # made before: not counted

    def views() -> torch.Tensor:
        y = x.view(10, 100).t()  # a view of x: no new storage
        y.add_(1.0)  # in place: no new storage
        return y

    assert peak_tensor_bytes(views)[1] == 0


def test_the_score_matrix_of_naive_attention_is_seen():
    q = torch.randn(1, 1, 256, 16)
    _, peak = peak_tensor_bytes(lambda: torch.softmax(q @ q.transpose(-2, -1), -1) @ q)
    assert peak >= 2 * 256 * 256 * 4  # the scores and their softmax, alive together


def test_fn_must_be_callable():
    with pytest.raises(TypeError, match="fn must be a callable"):
        peak_tensor_bytes(42)  # type: ignore[arg-type]
