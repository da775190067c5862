"""Tests of attnbook.blockwise (chapter 2)."""

import numpy as np
import pytest
import torch

from attnbook.attention import scaled_dot_product_attention
from attnbook.blockwise import blockwise_attention


@pytest.mark.parametrize("block_size", [1, 7, 64, 1000])
def test_equals_full_attention(block_size):
    rng = np.random.default_rng(0)
    Q, K, V = (
        rng.normal(size=(33, 16)),
        rng.normal(size=(130, 16)),
        rng.normal(size=(130, 5)),
    )
    ref, _ = scaled_dot_product_attention(*(torch.tensor(a) for a in (Q, K, V)))
    np.testing.assert_allclose(
        blockwise_attention(Q, K, V, block_size), ref.numpy(), atol=1e-10
    )


def test_stable_when_a_late_block_has_huge_scores():
    rng = np.random.default_rng(1)
    Q, K, V = (
        rng.normal(size=(4, 8)),
        rng.normal(size=(20, 8)),
        rng.normal(size=(20, 3)),
    )
    K[-1] *= 500  # the maximum arrives in the last block
    out = blockwise_attention(Q, K, V, block_size=5)
    ref, _ = scaled_dot_product_attention(*(torch.tensor(a) for a in (Q, K, V)))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, ref.numpy(), atol=1e-10)


def test_clear_errors():
    with pytest.raises(ValueError, match="shapes do not fit"):
        blockwise_attention(np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 1)))
    with pytest.raises(ValueError, match="block_size"):
        blockwise_attention(
            np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), block_size=0
        )
    with pytest.raises(ValueError, match="2-D"):
        blockwise_attention(np.ones(3), np.ones((4, 3)), np.ones((4, 1)))


def test_blockwise_sdpa_window_edges_on_a_grid_of_small_blocks():
    """Every (T, block, window) of a small grid, where the band's edge falls inside a key
    block in many ways: blockwise_sdpa equals `attend` with the sliding-window mask (a block
    that straddles the edge treated as inside the band is wrong in 13 of these 40)."""
    import itertools

    from attnbook.attention import attend
    from attnbook.blockwise import blockwise_sdpa
    from attnbook.masks import sliding_window_mask

    g = torch.Generator().manual_seed(0)
    for T, block, window in itertools.product((5, 11), range(2, 6), range(2, 7)):
        q, k, v = torch.randn(3, 1, 2, T, 4, dtype=torch.float64, generator=g)
        got = blockwise_sdpa(q, k, v, block_size=block, is_causal=True, window=window)
        want, _ = attend(q, k, v, sliding_window_mask(T, window))
        torch.testing.assert_close(got, want, msg=f"T={T} block={block} w={window}")
        # the last 3 queries only (decoding a few tokens with a cache)
        got = blockwise_sdpa(
            q[..., -3:, :], k, v, block_size=block, is_causal=True, window=window
        )
        torch.testing.assert_close(got, want[..., -3:, :])
