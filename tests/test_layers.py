"""Tests of attnbook.layers (RMSNorm, SwiGLU) and of the GPT built from them (chapter 8)."""

import math

import pytest
import torch
import torch.nn.functional as F

from attnbook.gpt import GPT, MLP, GPTConfig
from attnbook.layers import RMSNorm, SwiGLU, norm_layer, swiglu_hidden
from attnbook.multihead import KVCache


def test_rmsnorm_equals_the_formula_computed_by_hand():
    gen = torch.Generator().manual_seed(0)
    x = 3.0 * torch.randn(2, 5, 8, generator=gen, dtype=torch.float64) + 1.0
    norm = RMSNorm(8, eps=1e-5).double()
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2.0, 8))
    rms = [
        math.sqrt(sum(v * v for v in row) / 8 + 1e-5)
        for row in x.reshape(-1, 8).tolist()
    ]
    expected = [
        [g * v / r for g, v in zip(norm.weight.tolist(), row)]
        for row, r in zip(x.reshape(-1, 8).tolist(), rms)
    ]
    got = norm(x).reshape(-1, 8)
    assert torch.allclose(got, torch.tensor(expected, dtype=torch.float64), atol=1e-12)
    # unlike LayerNorm, the mean is not removed: a constant row keeps its sign and value
    const = torch.full((1, 8), 2.0)
    assert torch.allclose(RMSNorm(8, eps=0.0 + 1e-12)(const), torch.ones(1, 8))
    assert torch.allclose(F.layer_norm(const, (8,)), torch.zeros(1, 8))


def test_rmsnorm_equals_torch_rmsnorm():
    x = torch.randn(3, 7, 16, generator=torch.Generator().manual_seed(1))
    ours, theirs = RMSNorm(16, eps=1e-6), torch.nn.RMSNorm(16, eps=1e-6)
    with torch.no_grad():
        w = torch.rand(16, generator=torch.Generator().manual_seed(2)) + 0.5
        ours.weight.copy_(w)
        theirs.weight.copy_(w)
    assert torch.allclose(ours(x), theirs(x), atol=1e-6)


def test_rmsnorm_is_scale_invariant_and_keeps_half_precision():
    x = torch.randn(4, 32, generator=torch.Generator().manual_seed(3))
    norm = RMSNorm(32)
    assert torch.allclose(norm(x), norm(1000.0 * x), atol=1e-5)
    # normalised in float32, returned in the input's dtype, then times the gain (as LLaMA)
    out = norm.to(torch.bfloat16)(x.to(torch.bfloat16))
    assert out.dtype == torch.bfloat16
    assert torch.allclose(out.float(), norm.float()(x), atol=0.02)
    assert sum(p.numel() for p in norm.parameters()) == 32  # a gain, no bias


@pytest.mark.parametrize("n_embd", [1, 3, 16, 128, 384, 4096])
def test_swiglu_hidden_matches_the_mlp_budget(n_embd):
    h = swiglu_hidden(n_embd)
    assert h == round(8 * n_embd / 3)  # 2/3 of the MLP's 4C, rounded
    # 3 h C weights against the GELU MLP's 8 C^2: at most C apart (|3h - 8C| <= 1)
    assert abs(3 * h * n_embd - 8 * n_embd**2) <= n_embd
    assert swiglu_hidden(128) == 341


def test_swiglu_shapes_formula_and_parameters():
    layer = SwiGLU(16)
    assert (layer.gate.out_features, layer.up.out_features) == (43, 43)
    assert (layer.proj.in_features, layer.proj.out_features) == (43, 16)
    assert all(lin.bias is None for lin in (layer.gate, layer.up, layer.proj))
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(4))
    by_hand = (
        F.silu(x @ layer.gate.weight.T) * (x @ layer.up.weight.T)
    ) @ layer.proj.weight.T
    assert layer(x).shape == (2, 5, 16)
    assert torch.allclose(layer(x), by_hand, atol=1e-6)
    assert layer(torch.randn(16)).shape == (16,)  # any leading dimensions
    config = GPTConfig(vocab_size=5, n_embd=16, n_head=2)
    mlp_params = sum(p.numel() for p in MLP(config).parameters())
    swiglu_params = sum(p.numel() for p in layer.parameters())
    assert (mlp_params, swiglu_params) == (8 * 16 * 16, 3 * 43 * 16)
    assert sum(p.numel() for p in SwiGLU(16, hidden=10).parameters()) == 3 * 10 * 16


def tiny(norm="layernorm", mlp="gelu", seed=0, **kw):
    torch.manual_seed(seed)
    sizes = dict(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=24) | kw
    return GPT(GPTConfig(norm=norm, mlp=mlp, **sizes)).eval()


def test_gpt_builds_the_block_it_is_asked_for():
    default, modern = tiny(), tiny("rmsnorm", "swiglu")
    assert isinstance(default.blocks[0].ln_1, torch.nn.LayerNorm)
    assert isinstance(default.blocks[0].mlp, MLP)
    for norm in (modern.ln_f, modern.blocks[0].ln_1, modern.blocks[1].ln_2):
        assert isinstance(norm, RMSNorm)
    assert isinstance(modern.blocks[1].mlp, SwiGLU)
    # 2 blocks: 8 C^2 MLP weights each against 3 h C, h = 64; the norms weigh the same
    assert default.num_parameters() - modern.num_parameters() == 2 * (
        8 * 24 * 24 - 3 * 64 * 24
    )
    assert tiny("rmsnorm").num_parameters() == default.num_parameters()
    assert norm_layer("layernorm", 8, bias=True).bias is not None
    assert isinstance(norm_layer("rmsnorm", 8, bias=True), RMSNorm)  # never a bias
    assert all(b is None for n, b in modern.named_parameters() if n.endswith("bias"))


def test_swiglu_output_projection_gets_the_scaled_init():
    model = tiny("rmsnorm", "swiglu", n_embd=128, n_head=4)
    proj = model.blocks[0].mlp.proj.weight
    gate = model.blocks[0].mlp.gate.weight
    assert abs(proj.std().item() - 0.02 / math.sqrt(4)) < 0.001
    assert abs(gate.std().item() - 0.02) < 0.001
    assert torch.equal(model.ln_f.weight, torch.ones(128))


def test_modern_block_learns_causal_and_cached_generation_is_exact():
    model = tiny("rmsnorm", "swiglu", dropout=0.1).train()
    idx = torch.randint(0, 11, (2, 12), generator=torch.Generator().manual_seed(5))
    _, loss = model(idx, idx)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())
    model.eval()
    with torch.no_grad():
        full, _ = model(idx)
        changed = idx.clone()
        changed[:, 8:] = (changed[:, 8:] + 1) % 11
        assert torch.equal(model(changed)[0][:, :8], full[:, :8])  # no peeking ahead
        caches = [KVCache() for _ in model.blocks]
        first, _ = model(idx[:, :7], kv_caches=caches)
        rest, _ = model(idx[:, 7:], kv_caches=caches)
        assert torch.allclose(torch.cat([first, rest], 1), full, atol=1e-5)
    gen = dict(max_new_tokens=6, top_k=3)
    a = model.generate(idx[:, :4], generator=torch.Generator().manual_seed(0), **gen)
    b = model.generate(
        idx[:, :4], generator=torch.Generator().manual_seed(0), use_cache=False, **gen
    )
    assert torch.equal(a, b)


def test_swiglu_dropout_acts_in_training_only():
    """SwiGLU drops its output as the GELU MLP does: in training mode about half of it is
    zero at p = 0.5 and the rest doubled; in eval mode nothing is dropped."""
    torch.manual_seed(0)
    layer = SwiGLU(16, dropout=0.5)
    x = torch.randn(4, 5, 16)
    layer.eval()
    plain = layer(x)
    layer.train()
    dropped = layer(x)
    kept = dropped != 0
    assert 0.3 < kept.float().mean() < 0.7
    torch.testing.assert_close(dropped[kept], 2 * plain[kept])
    layer.eval()
    assert torch.equal(layer(x), plain)
