"""Tests of attnbook.masks (chapter 4)."""

import pytest
import torch
import torch.nn.functional as F

from attnbook.attention import scaled_dot_product_attention
from attnbook.masks import (
    causal_mask,
    combine_masks,
    from_additive,
    padding_mask,
    padding_mask_from_lengths,
    to_additive,
    to_torch_mha_mask,
)


def test_causal_mask_is_lower_triangular_true_means_attend():
    m = causal_mask(4)
    assert m.dtype == torch.bool and m.shape == (4, 4)
    assert torch.equal(
        m, torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]).bool()
    )
    with pytest.raises(ValueError, match="positive int"):
        causal_mask(0)


def test_causal_mask_agrees_with_sdpa_is_causal():
    q, k, v = (
        torch.randn(2, 3, 5, 4, generator=torch.Generator().manual_seed(s))
        for s in range(3)
    )
    ours, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(5))
    torch.testing.assert_close(
        ours, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-6, rtol=0
    )
    assert torch.all(w.triu(1) == 0)


def test_padding_masks_from_ids_and_from_lengths_agree():
    tokens = torch.tensor([[5, 6, 7, 0], [8, 0, 0, 0]])
    by_id = padding_mask(tokens, pad_id=0)
    by_len = padding_mask_from_lengths([3, 1], max_len=4)
    assert by_id.shape == (2, 1, 4)
    assert torch.equal(by_id, by_len)
    assert torch.equal(
        padding_mask_from_lengths(torch.tensor([2, 3])),
        torch.tensor([[[1, 1, 0]], [[1, 1, 1]]]).bool(),
    )


def test_padding_mask_errors():
    with pytest.raises(ValueError, match=r"\(B, T\) tensor"):
        padding_mask(torch.tensor([1, 2, 0]), pad_id=0)
    with pytest.raises(ValueError, match="does not fit"):
        padding_mask_from_lengths([5], max_len=3)
    with pytest.raises(ValueError, match="non-negative"):
        padding_mask_from_lengths([-1, 2])


def test_combining_causal_and_padding():
    pad = padding_mask_from_lengths([3, 2], max_len=4)  # (2, 1, 4)
    both = combine_masks(causal_mask(4), pad, None)
    assert both.shape == (2, 4, 4)
    assert torch.equal(both[1, 3], torch.tensor([True, True, False, False]))
    assert torch.equal(both[0, 1], torch.tensor([True, True, False, False]))
    assert combine_masks(None, None) is None
    with pytest.raises(ValueError, match="do not broadcast"):
        combine_masks(causal_mask(3), causal_mask(4))
    with pytest.raises(TypeError, match="boolean"):
        combine_masks(causal_mask(3).float())


def test_additive_round_trip_and_equivalence_in_softmax():
    m = combine_masks(causal_mask(4), padding_mask_from_lengths([4, 3]))
    add = to_additive(m)
    assert set(add.unique().tolist()) == {0.0, float("-inf")}
    assert torch.equal(from_additive(add), m)
    scores = torch.randn(2, 4, 4)
    torch.testing.assert_close(
        torch.softmax(scores + add, -1),
        torch.softmax(scores.masked_fill(~m, float("-inf")), -1),
    )
    with pytest.raises(ValueError, match="NaN"):
        from_additive(torch.tensor([0.0, float("nan")]))


def test_torch_mha_reads_booleans_the_other_way_round():
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(1, 5, 8)
    mask = causal_mask(5)
    _, w = mha(x, x, x, attn_mask=to_torch_mha_mask(mask))
    assert torch.all(w[0].triu(1) == 0)
    # the classic bug: attnbook's mask passed as is
    _, w_wrong = mha(x, x, x, attn_mask=mask)
    assert torch.all(w_wrong[0, 0, 1:] > 0)  # the first token now sees only the future
    # and the last one sees nothing at all: no weight it could use
    last = w_wrong[0, -1]
    # NaN or zeros, by version
    assert not torch.isfinite(last).all() or torch.all(last == 0)


def test_from_additive_reads_finite_large_negatives_as_blocked():
    """The issue's example: a key masked with the common -1e9 convention is blocked, not allowed."""
    assert torch.equal(
        from_additive(torch.tensor([[0.0, -1e9], [0.0, 0.0]])),
        torch.tensor([[True, False], [True, True]]),
    )
    finfo_min = torch.finfo(torch.float16).min
    assert torch.equal(
        from_additive(torch.tensor([0.0, finfo_min], dtype=torch.float16)),
        torch.tensor([True, False]),
    )
    assert torch.equal(
        from_additive(torch.tensor([0.0, -10.0]), threshold=-5.0),
        torch.tensor([True, False]),
    )


def test_position_mask_is_the_causal_and_banded_masks_by_positions() -> None:
    from attnbook.masks import position_mask, sliding_window_mask

    for T, T_k in ((1, 1), (3, 7), (6, 6)):
        pos_q = torch.arange(T_k - T, T_k)
        assert torch.equal(position_mask(pos_q, torch.arange(T_k)), causal_mask(T, T_k))
    for window in (1, 2, 5, 9):
        pos = torch.arange(7)
        assert torch.equal(
            position_mask(pos, pos, window), sliding_window_mask(7, window)
        )
    # a ragged batch: row b's one query at position lengths[b] - 1
    lengths = torch.tensor([1, 4, 2])
    got = position_mask((lengths - 1)[:, None], torch.arange(4))
    assert got.shape == (3, 1, 4)
    assert got[:, 0].tolist() == [[1, 0, 0, 0], [1, 1, 1, 1], [1, 1, 0, 0]]
