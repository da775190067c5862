"""Tests of attnbook.hooks (chapters 6, 7 and 10): cached weights equal the layer's own (of
chapter 10's attention-only model and of chapter 6's GPT), per-head outputs rebuild the layer's
output, ablation changes exactly one head and leaves no hook."""

import pytest
import torch

from attnbook.attn_only import AttnOnlyConfig, AttnOnlyTransformer
from attnbook.cars.models import AttentionClassifier
from attnbook.gpt import GPT, GPTConfig
from attnbook.multihead import MultiHeadAttention
from attnbook.hooks import (
    ablate_heads,
    attention_layers,
    attention_weights,
    head_outputs,
    with_attention_weights,
)


def _model(dtype=torch.float32) -> AttnOnlyTransformer:
    torch.manual_seed(0)
    cfg = AttnOnlyConfig(vocab_size=11, block_size=12, n_layer=2, n_head=2, d_model=8)
    return AttnOnlyTransformer(cfg).to(dtype)


def _no_hooks(model) -> bool:
    return all(
        not m._forward_hooks and not m._forward_pre_hooks for m in model.modules()
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_attention_weights_are_the_layers_own(dtype):
    model = _model(dtype)
    x = torch.randint(0, 11, (3, 7))
    weights = attention_weights(model, x)
    assert [w.shape for w in weights] == [(3, 2, 7, 7)] * 2
    assert all(w.dtype == dtype for w in weights)
    h = model.residual(x)
    for attn, w in zip(model.layers, weights):
        out, ref = attn(h, is_causal=True, need_weights=True)
        assert torch.allclose(w, ref)
        h = h + out
    assert torch.allclose(weights[0].sum(-1), torch.ones(3, 2, 7, dtype=dtype))
    assert torch.equal(weights[1].triu(1), torch.zeros_like(weights[1]))  # causal
    assert _no_hooks(model)


def test_head_outputs_rebuild_the_layer_output():
    model = _model()
    x = torch.randint(0, 11, (2, 6))
    z = head_outputs(model, x)
    assert [t.shape for t in z] == [(2, 6, 2, 4)] * 2
    out, _ = model.layers[0](model.residual(x), is_causal=True)
    assert torch.allclose(model.layers[0].W_o(z[0].flatten(-2)), out, atol=1e-6)
    assert _no_hooks(model)


def test_zero_and_mean_ablation_touch_one_head():
    model = _model()
    x = torch.randint(0, 11, (4, 6))
    before = head_outputs(model, x)
    with ablate_heads(model, {(0, 1): 0.0}):
        zeroed = head_outputs(model, x)
    assert torch.equal(zeroed[0][:, :, 1], torch.zeros(4, 6, 4))
    assert torch.equal(
        zeroed[0][:, :, 0], before[0][:, :, 0]
    )  # the other head as before
    assert not torch.allclose(zeroed[1], before[1])  # layer 1 reads what layer 0 wrote
    mean = before[0][:, :, 1].mean(0)  # (T, d_head)
    with ablate_heads(model, {(0, 1): mean}):
        meaned = head_outputs(model, x)
    assert torch.allclose(meaned[0][:, :, 1], mean.expand(4, 6, 4))
    assert torch.equal(model(x)[0], model(x)[0]) and _no_hooks(model)


def test_ablation_hooks_are_removed_after_an_error():
    model = _model()
    with pytest.raises(RuntimeError, match="inside"):
        with ablate_heads(model, {(1, 0): 0.0}):
            raise RuntimeError("inside")
    assert _no_hooks(model)


def test_bad_input_is_named():
    model = _model()
    with pytest.raises(ValueError, match="layer must be in"):
        with ablate_heads(model, {(2, 0): 0.0}):
            pass
    with pytest.raises(ValueError, match="head must be in"):
        with ablate_heads(model, {(0, 2): 0.0}):
            pass
    with pytest.raises(ValueError, match="d_head=4"):
        with ablate_heads(model, {(0, 0): torch.zeros(3)}):
            pass
    with pytest.raises(TypeError, match="pairs"):
        with ablate_heads(model, {0: 0.0}):  # type: ignore[dict-item]
            pass
    with pytest.raises(ValueError, match="no MultiHeadAttention"):
        attention_layers(torch.nn.Linear(2, 2))
    assert _no_hooks(model)


def test_hooks_read_the_gpts_own_weights_and_ablate_its_heads():
    """Chapter 6's GPT calls its attention layers as modules: the hooks read the weights
    each block computed from its own input, in one pass that leaves the logits as they are."""
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8))
    gpt.eval()
    x = torch.randint(0, 11, (2, 5))
    plain = gpt(x)[0]
    weights = attention_weights(gpt, x)
    assert [w.shape for w in weights] == [(2, 2, 5, 5)] * 2
    with torch.no_grad():
        h = gpt.drop(gpt._embed(x))
        for block, w in zip(gpt.blocks, weights):
            _, ref = block.attn(block.ln_1(h), is_causal=True, need_weights=True)
            torch.testing.assert_close(w, ref)
            h = block(h)
        torch.testing.assert_close(gpt.head(gpt.ln_f(h)), plain)
    assert all(torch.equal(a, b) for a, b in zip(gpt.attention_maps(x), weights))
    assert head_outputs(gpt, x)[0].shape == (2, 5, 2, 4)  # W_o is called as a module
    with ablate_heads(gpt, {(0, 0): 0.0}):
        assert not torch.allclose(gpt(x)[0], plain)
    assert _no_hooks(gpt)


def test_a_layer_not_called_as_a_module_is_a_clear_error():
    class Bypass(torch.nn.Module):  # runs its layer's forward as a plain function
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(11, 8)
            self.attn = MultiHeadAttention(8, 2)

        def forward(self, idx):
            return MultiHeadAttention.forward(self.attn, self.emb(idx), is_causal=True)

    with pytest.raises(ValueError, match="as modules"):
        attention_weights(Bypass(), torch.randint(0, 11, (1, 5)))


def test_ablation_leaves_what_the_heads_computed_to_earlier_readers():
    # a hook on W_o registered before the ablation keeps the tensor the heads computed: the
    # ablation replaces W_o's input with an edited copy, never editing that tensor in place
    model = _model()
    x = torch.randint(0, 11, (2, 6))
    kept = []
    handle = model.layers[0].W_o.register_forward_pre_hook(
        lambda module, args: kept.append((args[0], args[0].clone()))
    )
    try:
        clean = model(x)[0]
        with ablate_heads(model, {(0, 1): 0.0}):
            ablated = model(x)[0]
    finally:
        handle.remove()
    (_, first), (seen, copy) = kept
    assert torch.equal(seen, copy) and torch.equal(seen, first)
    assert seen[..., 4:].abs().sum() > 0  # head 1 wrote something that was ablated
    assert not torch.allclose(ablated, clean) and _no_hooks(model)


def test_with_attention_weights_returns_the_call_and_its_weights():
    """One call: the model's own output (gradients flowing) and the weights of that pass,
    the same as `attention_weights` reads; chapter 7's classifier returns its maps so."""
    model = _model(torch.float64)
    x = torch.randint(0, 11, (2, 6))
    (logits, _), weights = with_attention_weights(model, x)
    torch.testing.assert_close(logits, model(x)[0])
    assert logits.requires_grad
    assert all(torch.equal(a, b) for a, b in zip(weights, attention_weights(model, x)))
    assert _no_hooks(model)
    classifier = AttentionClassifier(11, n_layers=2, n_head=2, d_model=8)
    ids = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 10]])  # 0: padding
    out, maps = classifier.eval()(ids, return_attention=True)
    torch.testing.assert_close(out, classifier(ids))
    assert [m.shape for m in maps] == [(2, 2, 5, 5)] * 2
    assert torch.equal(maps[1][0, :, :, 3:], torch.zeros(2, 5, 2))  # padded keys
    assert _no_hooks(classifier)
