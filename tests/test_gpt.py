"""Tests of attnbook.gpt (chapter 6)."""

import pytest
import torch

from attnbook.gpt import GPT, Block, GPTConfig, sample_next_token
from attnbook.hooks import with_attention_weights
from attnbook.masks import causal_mask
from attnbook.multihead import KVCache


def tiny(vocab=11, block=16, seed=0, **kw):
    torch.manual_seed(seed)
    return GPT(
        GPTConfig(
            vocab_size=vocab, block_size=block, n_layer=2, n_head=2, n_embd=16, **kw
        )
    ).eval()


def test_config_errors():
    with pytest.raises(ValueError, match="not divisible"):
        GPTConfig(vocab_size=10, n_embd=10, n_head=3)
    with pytest.raises(ValueError, match="vocab_size must be a positive int, got 0"):
        GPTConfig(vocab_size=0)


def test_shapes_loss_and_parameter_count():
    m = tiny()
    idx = torch.randint(0, 11, (3, 10))
    logits, loss = m(idx, idx)
    assert logits.shape == (3, 10, 11) and loss.shape == ()
    # ~uniform at init
    assert abs(loss.item() - torch.log(torch.tensor(11.0)).item()) < 0.3
    # attention, MLP, two LayerNorm gains
    per_block = 4 * 16 * 16 + 2 * 16 * 64 + 2 * 16
    # tied embedding/head, positions, final LN
    expected = 11 * 16 + 16 * 16 + 2 * per_block + 16
    assert m.num_parameters() == expected
    assert m.head.weight is m.tok_emb.weight


def test_causal_no_peeking():
    m = tiny()
    a = torch.randint(0, 11, (1, 12))
    b = a.clone()
    b[0, 7:] = (b[0, 7:] + 1) % 11
    la, lb = m(a)[0], m(b)[0]
    torch.testing.assert_close(la[:, :7], lb[:, :7])
    assert not torch.allclose(la[:, 7:], lb[:, 7:])


def test_attention_maps_are_causal_and_match_the_fast_path():
    m = tiny()
    idx = torch.randint(0, 11, (2, 9))
    maps = m.attention_maps(idx)
    assert len(maps) == 2 and maps[0].shape == (2, 2, 9, 9)
    for w in maps:
        assert torch.all(w.masked_select(~causal_mask(9)) == 0)
        torch.testing.assert_close(w.sum(-1), torch.ones(2, 2, 9))


def test_clear_errors_for_bad_input():
    m = tiny(block=8)
    with pytest.raises(ValueError, match="longer than the model's block_size=8"):
        m(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match=r"token ids must be in \[0, 11\)"):
        m(torch.tensor([[3, 11]]))
    with pytest.raises(ValueError, match=r"\(B, T\) tensor of token ids"):
        m(torch.zeros(5, dtype=torch.long))


@pytest.mark.parametrize(
    "temperature, top_k, top_p",
    [
        (1.0, None, None),
        (0.7, 3, None),
        (1.5, 1, None),
        (1.2, None, 0.6),
        (1.0, 5, 0.9),
    ],
)
def test_generation_with_cache_gives_exactly_the_uncached_tokens(
    temperature, top_k, top_p
):
    m = tiny(block=16)
    prompt = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(1))
    # past block_size
    kw = dict(max_new_tokens=30, temperature=temperature, top_k=top_k, top_p=top_p)
    with_cache = m.generate(
        prompt, generator=torch.Generator().manual_seed(2), use_cache=True, **kw
    )
    without = m.generate(
        prompt, generator=torch.Generator().manual_seed(2), use_cache=False, **kw
    )
    assert with_cache.shape == (2, 35)
    assert torch.equal(with_cache, without)
    assert torch.equal(with_cache[:, :5], prompt)


def test_sampling_temperature_and_top_k():
    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0]])
    g = torch.Generator().manual_seed(0)
    draws = torch.cat(
        [sample_next_token(logits, top_k=2, generator=g) for _ in range(300)]
    )
    assert set(draws.flatten().tolist()) == {0, 1}
    g = torch.Generator().manual_seed(0)
    cold = torch.cat(
        [sample_next_token(logits, temperature=0.05, generator=g) for _ in range(50)]
    )
    assert set(cold.flatten().tolist()) == {0}
    assert torch.equal(sample_next_token(logits, top_k=1), torch.tensor([[0]]))
    a = sample_next_token(
        logits.repeat(5, 1), generator=torch.Generator().manual_seed(3)
    )
    b = sample_next_token(
        logits.repeat(5, 1), generator=torch.Generator().manual_seed(3)
    )
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        sample_next_token(logits, temperature=0)
    with pytest.raises(ValueError, match="top_k must be >= 1"):
        sample_next_token(logits, top_k=0)


def nucleus(probs: list[float], p: float) -> set[int]:
    """The nucleus by its definition: the likeliest tokens, one at a time, until their
    probabilities add up to at least p."""
    order = sorted(range(len(probs)), key=lambda i: -probs[i])
    kept, mass = set(), 0.0
    for i in order:
        kept.add(i)
        mass += probs[i]
        if mass >= p:
            break
    return kept


@pytest.mark.parametrize("p", [0.3, 0.5, 0.75, 0.9, 0.99])
def test_top_p_keeps_the_nucleus_with_renormalised_frequencies(p):
    probs = [0.4, 0.05, 0.25, 0.2, 0.1]  # deliberately not sorted
    logits = torch.tensor(probs).log()[None]  # (1, 5)
    kept = nucleus(probs, p)
    n = 20_000
    draws = sample_next_token(
        logits.expand(n, 5), top_p=p, generator=torch.Generator().manual_seed(0)
    )
    observed = torch.bincount(draws[:, 0], minlength=5).double() / n
    assert set(draws.unique().tolist()) == kept
    mass = sum(probs[i] for i in kept)
    # renormalised over the nucleus; 4 standard errors at n = 20,000 is < 0.015
    for i in kept:
        assert abs(observed[i].item() - probs[i] / mass) < 0.015


def test_top_p_edge_cases_and_order_of_the_knobs():
    logits = torch.tensor([[3.0, 1.0, 0.0, -2.0]])
    g = torch.Generator().manual_seed(0)
    tiny_p = torch.cat(
        [sample_next_token(logits, top_p=1e-6, generator=g) for _ in range(30)]
    )
    assert set(tiny_p.flatten().tolist()) == {0}  # the likeliest token always stays
    g1, g2 = torch.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    full = sample_next_token(logits.repeat(50, 1), top_p=1.0, generator=g1)
    plain = sample_next_token(logits.repeat(50, 1), generator=g2)
    assert torch.equal(full, plain)  # p = 1 changes nothing
    # temperature acts first: at tau = 0.1 the top token alone holds > 0.99 of the mass
    g = torch.Generator().manual_seed(0)
    cold = sample_next_token(
        logits.repeat(200, 1), temperature=0.1, top_p=0.99, generator=g
    )
    assert set(cold.flatten().tolist()) == {0}
    # top-k first, then the nucleus of what is left: k = 3 then p = 0.999 keeps three tokens
    g = torch.Generator().manual_seed(0)
    both = sample_next_token(logits.repeat(4000, 1), top_k=3, top_p=0.999, generator=g)
    assert set(both.flatten().tolist()) == {0, 1, 2}
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\]"):
        sample_next_token(logits, top_p=0.0)
    with pytest.raises(TypeError, match="top_p must be a number"):
        sample_next_token(logits, top_p="0.9")  # type: ignore[arg-type]


def test_block_with_a_key_mask_and_without_the_causal_mask():
    """The one block serves chapter 7 too: not causal, padded keys get weight exactly 0, and
    the real positions do not notice the padding."""
    torch.manual_seed(0)
    block = Block(GPTConfig(vocab_size=5, n_embd=8, n_head=2, causal=False)).eval()
    x = torch.randn(1, 6, 8)
    # (1, 9, 8): three padding positions
    padded = torch.cat([x, torch.randn(1, 3, 8)], dim=1)
    key_mask = torch.tensor([[True] * 6 + [False] * 3]).unsqueeze(1)  # (1, 1, 9)
    (out, [w]), (alone, [w_alone]) = (
        with_attention_weights(block, padded, None, key_mask),  # read by hooks
        with_attention_weights(block, x),
    )
    torch.testing.assert_close(out, block(padded, key_mask=key_mask))  # the same pass
    assert w.shape == (1, 2, 9, 9) and torch.all(w[..., 6:] == 0)
    torch.testing.assert_close(out[:, :6], alone, atol=1e-6, rtol=0)
    torch.testing.assert_close(w[..., :6, :6], w_alone, atol=1e-6, rtol=0)
    upper = torch.ones(6, 6, dtype=torch.bool).triu(1)
    assert torch.all(w_alone[..., upper] > 0)  # not causal: later keys are read too


def test_rope_block_scores_depend_on_offsets_only_and_cache_matches():
    torch.manual_seed(0)
    m = tiny(positions="rope")
    idx = torch.randint(0, 11, (1, 10))
    full, _ = m(idx)
    caches = [KVCache() for _ in m.blocks]
    m(idx[:, :7], kv_caches=caches)
    step, _ = m(idx[:, 7:8], kv_caches=caches)
    torch.testing.assert_close(step[0, -1], full[0, 7], atol=1e-5, rtol=0)
    attn = m.blocks[0].attn
    x = torch.randn(1, 5, 16)
    # the same tokens, three places later
    shifted = torch.cat([torch.randn(1, 3, 16), x], dim=1)
    _, w = attn(x)
    # (1, 1, 8)
    _, w_shifted = attn(shifted, mask=torch.tensor([[[False] * 3 + [True] * 5]]))
    torch.testing.assert_close(w[0], w_shifted[0, :, 3:, 3:], atol=1e-5, rtol=0)


def test_sinusoidal_means_the_table_added_and_scaling_is_its_own_option():
    """One meaning of "sinusoidal" (the fixed table added); sqrt(C) scaling is
    `GPTConfig.scale_embeddings`, on by default with sinusoidal positions only, off in the
    car classifier."""
    import dataclasses
    import math

    from attnbook.cars import AttentionClassifier

    config = GPTConfig(vocab_size=11, n_embd=16, n_head=2, positions="sinusoidal")
    assert config.embedding_scale == math.sqrt(16)
    assert dataclasses.replace(config, positions="learned").embedding_scale is None
    assert dataclasses.replace(config, scale_embeddings=False).embedding_scale is None
    assert (
        dataclasses.replace(
            config, positions="rope", scale_embeddings=True
        ).embedding_scale
        == 4.0
    )
    torch.manual_seed(0)
    model = GPT(config).eval()
    idx = torch.randint(0, 11, (2, 7))
    expected = model.tok_emb(idx) * 4.0 + model.pos_emb.pe[:7]
    torch.testing.assert_close(model._embed(idx), expected)
    torch.testing.assert_close(model._embed(idx[:, 3:], offset=3), expected[:, 3:])
    classifier = AttentionClassifier(11, positions="sinusoidal", d_model=16)
    # the table is added to unscaled embeddings
    assert classifier.config.embedding_scale is None


def test_gpt_dropout_also_drops_attention_weights():
    """GPTConfig.dropout reaches the attention weights (nanoGPT's baby GPT drops them too):
    with the residual and MLP dropouts switched off, training mode still changes the output."""
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=7, block_size=8, n_layer=1, n_head=2, n_embd=8, dropout=0.4
        )
    )
    assert all(block.attn.dropout == 0.4 for block in model.blocks)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0  # only the attention dropout is left
    idx = torch.randint(0, 7, (2, 8))
    model.eval()
    plain = model(idx)[0]
    model.train()
    assert not torch.allclose(model(idx)[0], plain)


def test_gpt_dropout_drops_the_attention_sublayers_output_before_the_residual_add():
    """Block.dropout, after attention (nanoGPT's resid_dropout): with the attention-weight
    and MLP dropouts switched off, training mode still changes the output."""
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=7, block_size=8, n_layer=1, n_head=2, n_embd=8, dropout=0.4
        )
    )
    kept = {id(block.dropout) for block in model.blocks}
    for block in model.blocks:
        block.attn.dropout = 0.0
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout) and id(module) not in kept:
            module.p = 0.0  # only the residual dropout after attention is left
    idx = torch.randint(0, 7, (2, 8))
    model.eval()
    plain = model(idx)[0]
    model.train()
    assert not torch.allclose(model(idx)[0], plain)


def test_init_draws_the_numbers_it_drew_with_separate_projections():
    """Fingerprint of the tiny GPT's attention weights at seed 0, recorded with the three
    separate W_q, W_k, W_v layers before they were fused (n_kv_head=1: unequal widths)."""
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=16, n_kv_head=1
        )
    )
    attn = model.blocks[1].attn
    sums = [
        float(lin.weight.detach().double().sum())
        for lin in (attn.W_q, attn.W_k, attn.W_v, attn.W_o)
    ]
    recorded = [-0.154670951, 0.026525039855, -0.048368254051, 0.097323817754]
    assert sums == pytest.approx(recorded, abs=1e-11, rel=0)


def test_chapter9_weights_are_saved_in_the_fused_layout():
    """The shipped checkpoints hold qkv_weight as the model does (no conversion on load)."""
    import importlib.resources
    import io

    from attnbook.streaming import WEIGHTS, load_ch9_model

    for kind, name in WEIGHTS.items():
        raw = importlib.resources.files("attnbook.data").joinpath(name).read_bytes()
        saved = torch.load(io.BytesIO(raw), weights_only=True)["state_dict"]
        model, _ = load_ch9_model(kind)
        assert sorted(saved) == sorted(model.state_dict())
        fused = model.blocks[0].attn.qkv_weight
        assert torch.equal(fused, saved["blocks.0.attn.qkv_weight"].float())


def test_a_training_step_dispatches_no_more_operators_than_a_minimal_reference():
    """benchmarks/op_count.py at a tiny size: counted operators (TorchDispatchMode, not time)
    of one step of forward, backward, clipping and AdamW. The model under the reference's own
    loop matches the minimal nanoGPT-style model exactly, matrix products included; the
    package's train_loop adds one operator (the detach that keeps each step's loss)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "op_count.py"
    spec = importlib.util.spec_from_file_location("op_count", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ids = torch.randint(11, (2, 9), generator=torch.Generator().manual_seed(0))
    batch = (ids[:, :-1].contiguous(), ids[:, 1:].contiguous())
    config = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16)

    def per_step(build, run):
        one = bench.count(lambda: run(build(), batch, 1))
        three = bench.count(lambda: run(build(), batch, 3))
        return three.total - one.total, three.products - one.products  # two steps

    ref_ops, ref_products = per_step(
        lambda: bench.RefGPT(11, 8, 2, 2, 16), bench.reference_steps
    )
    ops, products = per_step(lambda: GPT(config), bench.reference_steps)
    loop_ops, _ = per_step(lambda: GPT(config), bench.package_steps)
    assert ops <= ref_ops and products == ref_products
    assert loop_ops <= ref_ops + 2  # + one detach per step
