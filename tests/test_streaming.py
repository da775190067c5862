"""attnbook.streaming (chapter 9): streaming caches against the model's own forward pass."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnbook.gpt import GPT, GPTConfig
from attnbook.streaming import (
    StreamingCache,
    first_token_mass,
    load_ch9_model,
    stream_attention,
    stream_losses,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def model(positions: str, n_kv_head: int | None = None) -> GPT:
    torch.manual_seed(1)
    return GPT(
        GPTConfig(
            vocab_size=13,
            block_size=16,
            n_layer=2,
            n_head=4,
            n_embd=16,
            positions=positions,
            n_kv_head=n_kv_head,
        )
    ).eval()


def forward_losses(m: GPT, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        logits = m(ids[None])[0][0]
    return F.cross_entropy(logits[:-1], ids[1:], reduction="none")


@pytest.mark.parametrize(
    ("positions", "n_kv_head"),
    [("rope", None), ("alibi", None), ("rope", 2), ("none", 1)],
)
@pytest.mark.parametrize("mode", ["rolling", "sinks", "reencode", "reencode-sinks"])
def test_a_stream_that_fits_the_cache_is_the_forward_pass(
    positions: str, n_kv_head: int | None, mode: str
) -> None:
    m = model(positions, n_kv_head)
    ids = torch.randint(0, 13, (12,), generator=torch.Generator().manual_seed(0))
    losses = stream_losses(m, ids, capacity=16, mode=mode, sinks=2)
    torch.testing.assert_close(losses, forward_losses(m, ids), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_reencode_runs_the_model_on_the_last_window(positions: str) -> None:
    m = model(positions)
    ids = torch.randint(0, 13, (30,), generator=torch.Generator().manual_seed(2))
    losses = stream_losses(m, ids, capacity=8, mode="reencode")
    for t in (3, 7, 8, 20, 28):
        window = ids[max(0, t + 1 - 8) : t + 2]
        assert losses[t] == pytest.approx(
            forward_losses(m, window)[-1].item(), abs=1e-5
        )


def test_sinks_with_a_cache_of_sinks_plus_window_is_the_model_on_that_text() -> None:
    """With RoPE and cache slots as positions, the sinks cache at step t holds tokens 0..s-1 and
    the last capacity - s: its prediction is the model's on exactly that concatenated text, at
    the first layer (later layers' cached entries were computed from longer contexts)."""
    m = model("rope")
    m.blocks = m.blocks[:1]
    ids = torch.randint(0, 13, (25,), generator=torch.Generator().manual_seed(3))
    losses = stream_losses(m, ids, capacity=6, mode="sinks", sinks=2)
    for t in (5, 9, 23):
        text = torch.cat([ids[:2], ids[t - 3 : t + 1], ids[t + 1 : t + 2]])
        assert losses[t] == pytest.approx(forward_losses(m, text)[-1].item(), abs=1e-5)


@pytest.mark.parametrize("positions", ["rope", "alibi", "none"])
def test_one_layer_streaming_is_reencoding_what_the_cache_keeps(positions: str) -> None:
    """A one-layer model's cached key and value depend on their own token only, so a rolling
    cache is exactly re-encoding the last window, and a sinks cache re-encoding the sinks and
    the last capacity - sinks, on a text three times the capacity; the two differ."""
    m = model(positions)
    m.blocks = m.blocks[:1]
    ids = torch.randint(0, 13, (24,), generator=torch.Generator().manual_seed(5))
    rolling = stream_losses(m, ids, capacity=8, mode="rolling")
    sinks = stream_losses(m, ids, capacity=8, mode="sinks", sinks=3)
    torch.testing.assert_close(rolling, stream_losses(m, ids, 8, "reencode"))
    torch.testing.assert_close(sinks, stream_losses(m, ids, 8, "reencode-sinks", 3))
    assert (
        torch.equal(rolling[:8], sinks[:8])
        and (rolling[8:] - sinks[8:]).abs().max() > 1e-3
    )


@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_a_cache_as_long_as_the_context_streams_past_it(positions: str) -> None:
    """capacity = block_size: GPT.forward counts the cache's slots after eviction, so the
    stream runs on past block_size, and a one-layer model's rolling cache is re-encoding
    the last window; the weights stream_attention reads are those slots' (rows sum to 1)."""
    m = model(positions)
    m.blocks = m.blocks[:1]
    ids = torch.randint(0, 13, (40,), generator=torch.Generator().manual_seed(8))
    rolling = stream_losses(m, ids, capacity=16, mode="rolling")
    torch.testing.assert_close(rolling, stream_losses(m, ids, 16, "reencode"))
    maps = stream_attention(m, ids, capacity=16, sinks=2)  # (1, H, 40, 40)
    torch.testing.assert_close(maps.sum(-1), torch.ones(1, 4, 40))
    # query 39 reads the 2 sinks and the last 14 tokens
    held = torch.cat([torch.arange(2), torch.arange(26, 40)])
    assert (maps[0, :, 39, held] > 0).all() and (maps[0, :, 39, 2:26] == 0).all()


def test_a_streaming_cache_in_a_model_with_absolute_positions_is_refused() -> None:
    m = model("learned")
    caches = [StreamingCache(4) for _ in m.blocks]
    with pytest.raises(ValueError, match="needs relative positions"):
        m(torch.zeros(1, 1, dtype=torch.long), kv_caches=caches)


@pytest.mark.parametrize("mode", ["rolling", "sinks", "reencode-sinks"])
def test_streams_side_by_side_are_each_stream_alone(mode: str) -> None:
    m = model("rope")
    ids = torch.randint(0, 13, (3, 21), generator=torch.Generator().manual_seed(7))
    together = stream_losses(m, ids, capacity=8, mode=mode, sinks=2)
    assert together.shape == (3, 20)
    for b in range(3):
        alone = stream_losses(m, ids[b], capacity=8, mode=mode, sinks=2)
        torch.testing.assert_close(together[b], alone)


def test_reencode_sinks_keeps_the_first_tokens_in_every_window() -> None:
    m = model("rope")
    ids = torch.randint(0, 13, (20,), generator=torch.Generator().manual_seed(6))
    losses = stream_losses(m, ids, capacity=8, mode="reencode-sinks", sinks=1)
    for t in (3, 8, 15):
        window = torch.cat([ids[:1], ids[max(1, t - 6) : t + 2]])
        assert losses[t] == pytest.approx(
            forward_losses(m, window)[-1].item(), abs=1e-5
        )


@given(
    st.integers(1, 6),
    st.integers(0, 5),
    st.lists(st.integers(1, 4), min_size=1, max_size=6),
)
@settings(max_examples=50, deadline=None)
def test_the_cache_keeps_the_sinks_and_the_most_recent(
    capacity: int, sinks: int, steps: list[int]
) -> None:
    if sinks >= capacity:
        sinks = capacity - 1
    cache = StreamingCache(capacity, sinks)
    seen = 0
    for n in steps:
        pos = torch.arange(seen, seen + n, dtype=torch.float32).view(1, 1, n, 1)
        k, _ = cache.append(pos, pos)
        seen += n
        want = list(range(min(sinks, seen))) + list(
            range(max(sinks, seen - (capacity - sinks)), seen)
        )
        if seen <= capacity:
            want = list(range(seen))
        assert k.flatten().tolist() == want


def test_first_token_mass_of_uniform_heads_is_the_uniform_baseline() -> None:
    m = model("rope").train()
    for block in m.blocks:  # zero queries: every head attends uniformly
        torch.nn.init.zeros_(block.attn.W_q.weight)
    ids = torch.randint(0, 13, (2, 16), generator=torch.Generator().manual_seed(4))
    mass, uniform = first_token_mass(m, ids, n_first=2, start=4)
    assert mass.shape == (2, 4) and m.training  # measured in eval mode, mode restored
    torch.testing.assert_close(mass, torch.full((2, 4), uniform))


@pytest.mark.parametrize("kind", ["plain", "start-token", "start-token-long"])
def test_the_shipped_models_load_and_predict_better_than_chance(kind: str) -> None:
    m, tok = load_ch9_model(kind)
    assert m.config.positions == "rope" and not m.training
    start = kind.startswith("start-token")
    assert m.config.vocab_size == tok.vocab_size + start
    ids = tok.encode("ROMEO:\nBut soft, what light through yonder window breaks?\n")
    if start:
        ids = torch.cat([torch.tensor([tok.vocab_size]), ids])
    losses = stream_losses(m, ids, capacity=32, mode="sinks", sinks=1)
    assert losses.mean() < 0.7 * torch.log(torch.tensor(float(tok.vocab_size)))
