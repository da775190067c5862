"""attnbook.config (chapters 6-9): the config is the model. `GPT(config)` builds every
variant the course trains, nothing is swapped after construction, and the shipped weights
load into the models their configs describe with the outputs they had before the configs
described partial RoPE and latent attention."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from attnbook.caches import KVCache, LatentCache
from attnbook.config import GPTConfig
from attnbook.gpt import GPT
from attnbook.hooks import ablate_heads, head_outputs, with_attention_weights
from attnbook.latent import MultiHeadLatentAttention
from attnbook.multihead import MultiHeadAttention
from attnbook.streaming import load_ch9_model

pytestmark = pytest.mark.usefixtures("one_thread")

SMALL = dict(vocab_size=9, block_size=12, n_layer=2, n_head=2, n_embd=16)
MLA = GPTConfig(**SMALL, positions="rope", attention="mla", d_latent=8, rope_dims=4)


def test_each_block_holds_the_attention_its_config_names() -> None:
    mla = GPT(MLA)
    assert all(isinstance(b.attn, MultiHeadLatentAttention) for b in mla.blocks)
    assert {(b.attn.d_latent, b.attn.d_rope) for b in mla.blocks} == {(8, 4)}
    partial = GPT(GPTConfig(**SMALL, positions="rope", rope_dims=4))
    assert all(isinstance(b.attn, MultiHeadAttention) for b in partial.blocks)
    assert {b.attn.rope_dims for b in partial.blocks} == {4}
    full = GPT(GPTConfig(**SMALL, positions="rope"))
    assert {b.attn.rope_dims for b in full.blocks} == {8}  # all of d_head


def test_a_model_that_rotates_keys_never_says_positions_none() -> None:
    with pytest.raises(ValueError, match="positions='rope'"):
        replace(MLA, positions="none")
    with pytest.raises(ValueError, match="rope_dims"):
        replace(MLA, rope_dims=None)
    with pytest.raises(ValueError, match="d_latent"):
        replace(MLA, d_latent=None)
    with pytest.raises(ValueError, match="rope_dims needs positions='rope'"):
        GPTConfig(**SMALL, positions="none", rope_dims=2)
    assert MLA.d_head == 8 and replace(MLA, rope_dims=12).rope_dims == 12  # MLA adds it


def test_each_layer_makes_the_cache_it_reads() -> None:
    assert {type(b.attn.new_cache()) for b in GPT(MLA).blocks} == {LatentCache}
    assert [type(c) for c in GPT(MLA).new_caches()] == [LatentCache] * 2
    assert {type(b.attn.new_cache()) for b in GPT(GPTConfig(**SMALL)).blocks} == {
        KVCache
    }


def test_an_mla_model_generates_with_its_caches_as_without() -> None:
    """`generate`'s default (cached) path on a latent model: its own caches, the tokens of
    the uncached path, also past block_size where the cache is rebuilt."""
    torch.manual_seed(0)
    model = GPT(MLA).eval()
    idx = torch.tensor([[1, 2, 3], [4, 5, 6]])
    ids = [
        model.generate(idx, 14, generator=torch.Generator().manual_seed(1), use_cache=u)
        for u in (True, False)
    ]
    assert torch.equal(ids[0], ids[1]) and ids[0].shape == (2, 17)
    assert len(set(ids[0][:, 3:].flatten().tolist())) > 2  # sampled, not one token


def test_the_hooks_read_an_mla_models_weights_and_heads() -> None:
    """The one reader (`hooks`) on a latent model: causal weights whose rows sum to one,
    from the same pass (logits unchanged), and heads that can be ablated."""
    torch.manual_seed(0)
    model = GPT(MLA).eval()
    idx = torch.tensor([[1, 5, 2, 7, 3, 8]])
    with torch.no_grad():
        plain = model(idx)[0]
        (logits, _), weights = with_attention_weights(model, idx)
    torch.testing.assert_close(logits, plain, atol=0, rtol=0)
    maps = model.attention_maps(idx)
    assert len(maps) == 2 and all(w.shape == (1, 2, 6, 6) for w in maps)
    for w, again in zip(weights, maps):
        torch.testing.assert_close(w, again)
        assert torch.all(w.triu(1) == 0)
        torch.testing.assert_close(w.sum(-1), torch.ones(1, 2, 6))
    assert [z.shape for z in head_outputs(model, idx)] == [(1, 6, 2, 8)] * 2
    with torch.no_grad(), ablate_heads(model, {(0, 1): 0.0}):
        assert not torch.allclose(model(idx)[0], plain)


def test_latent_and_partial_rotary_models_keep_their_state_dict_keys() -> None:
    """The keys `latent.mla_gpt` gave its model before the config described it, so a
    checkpoint saved then loads now (read off that version)."""
    per_block = ["W_dkv", "W_kr", "W_o", "W_q", "W_qr", "W_uk", "W_uv"]
    expected = {"head.weight", "ln_f.weight", "tok_emb.weight"} | {
        f"blocks.{i}.{name}.weight"
        for i in range(2)
        for name in [f"attn.{w}" for w in per_block]
        + ["ln_1", "ln_2", "mlp.fc", "mlp.proj"]
    }
    assert set(GPT(MLA).state_dict()) == expected
    rope = GPTConfig(**SMALL, positions="rope")
    torch.manual_seed(0)
    full = GPT(rope)
    torch.manual_seed(0)
    partial = GPT(replace(rope, rope_dims=4))
    assert full.state_dict().keys() == partial.state_dict().keys()
    assert all(
        torch.equal(p, q) for p, q in zip(full.parameters(), partial.parameters())
    )
    # the output `latent.partial_rope_gpt(rope, 4)` gave for this seed before
    x = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8, 0, 1]])
    with torch.no_grad():
        total = partial.double()(x)[0].sum().item()
    assert total == pytest.approx(1.6231720481, rel=1e-8)


# logits of the shipped chapter-9 models on IDS, read off the version before this change:
# (sum over all logits, the last position's first four), float32 on one thread
SHIPPED = {
    "plain": (-715.304201, [1.2026476, 3.2917256, -1.8090836, -5.0927191]),
    "start-token": (-674.119460, [-0.1721039, 2.4190879, -0.5266153, -4.8311028]),
    "start-token-long": (-471.818993, [1.5761899, 4.0872560, -0.9479357, -7.5654359]),
}
IDS = torch.tensor([[1, 5, 9, 2, 7, 3, 8, 4, 6, 0, 11, 13]])


@pytest.mark.parametrize("kind", SHIPPED)
def test_the_shipped_weights_load_with_their_outputs_unchanged(kind: str) -> None:
    model, _ = load_ch9_model(kind)  # a strict load_state_dict: every key matches
    assert model.config.attention == "mha" and model.config.rope_dims is None
    with torch.no_grad():
        logits = model(IDS)[0].double()
    total, last = SHIPPED[kind]
    assert logits.sum().item() == pytest.approx(total, abs=1e-3)
    torch.testing.assert_close(
        logits[0, -1, :4], torch.tensor(last, dtype=torch.float64), atol=1e-5, rtol=0
    )
