"""Tests of attnbook.circuits and the smeared-key layer of attnbook.attn_only (chapter 10):
path ablations against the model's own forward pass, token-level circuits on planted
weights, the repeat-loss grid's layout, and a constant writer that leaves the logits alone."""

import pytest
import torch

from attnbook.attn_only import AttnOnlyConfig, AttnOnlyTransformer, SmearedKeyAttention
from attnbook.circuits import (
    constant_writer,
    ov_circuit,
    path_ablation,
    repeat_loss_grid,
    token_k_circuit,
    top1_diagonal,
)
from attnbook.hooks import ablate_heads, attention_weights, head_outputs


def _model(n_layer: int = 2, **kwargs) -> AttnOnlyTransformer:
    torch.manual_seed(3)
    return AttnOnlyTransformer(AttnOnlyConfig(10, 9, n_layer, 2, 8, **kwargs))


def _idx() -> torch.Tensor:
    return torch.randint(0, 10, (4, 9), generator=torch.Generator().manual_seed(0))


def test_path_ablation_of_nothing_and_of_everything_matches_the_model():
    model, idx = _model(), _idx()
    logits, weights = path_ablation(model, idx, 1, "")
    torch.testing.assert_close(logits, model(idx)[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights, attention_weights(model, idx)[1])
    # all three paths: layer 1 sees the stream of a zero-ablated head 0.1, but the direct
    # path to the logits keeps what head 0.1 wrote
    logits, weights = path_ablation(model, idx, 1, "qkv")
    with ablate_heads(model, {(0, 1): 0.0}):
        torch.testing.assert_close(weights, attention_weights(model, idx)[1])
        z = head_outputs(model, idx)[1]  # layer 1's heads when 0.1 writes nothing
    x0 = model.residual(idx)
    full, _ = model.layers[0](x0, is_causal=True, need_weights=False)
    layer1 = model.layers[1].W_o(z.flatten(-2))
    torch.testing.assert_close(
        logits, model.unembed(x0 + full + layer1), atol=1e-5, rtol=1e-5
    )


def test_path_ablation_moves_only_the_paths_named():
    model, idx = _model(), _idx()
    base = attention_weights(model, idx)[1]
    _, by_values = path_ablation(model, idx, 0, "v")
    torch.testing.assert_close(by_values, base)  # values do not change the pattern
    _, by_keys = path_ablation(model, idx, 0, "k")
    _, by_queries = path_ablation(model, idx, 0, "q")
    assert not torch.allclose(by_keys, base) and not torch.allclose(by_queries, base)
    assert not torch.allclose(by_keys, by_queries)
    # keys only: layer 1's queries and values read the whole stream, its keys the stream
    # without what head 0.0 wrote (that head's columns of W_o times its output)
    x0 = model.residual(idx)
    x1 = x0 + model.layers[0](x0, is_causal=True)[0]
    wrote = head_outputs(model, idx)[0][:, :, 0] @ model.layers[0].W_o.weight[:, :4].T
    for name, args in (("k", (x1, x1 - wrote, x1)), ("q", (x1 - wrote, x1, x1))):
        out, want = model.layers[1](*args, is_causal=True)
        logits, got = path_ablation(model, idx, 0, name)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(logits, model.unembed(x1 + out))
    with pytest.raises(ValueError, match="paths"):
        path_ablation(model, idx, 0, "x")
    with pytest.raises(ValueError, match="head"):
        path_ablation(model, idx, 2, "k")
    with pytest.raises(ValueError, match="2 layers"):
        path_ablation(_model(1), idx, 0, "k")


def test_token_circuits_and_top1_on_planted_weights():
    model = _model()
    with torch.no_grad():
        model.tok_emb.weight.zero_()
        model.tok_emb.weight[:, :8] = torch.eye(10)[:, :8]  # token t -> e_t (t < 8)
        model.unembed.weight.copy_(model.tok_emb.weight)
        for attn in model.layers:
            attn.qkv_weight.zero_()
            attn.W_o.weight.zero_()
        # head 0.1 writes its input unchanged (values and output are identities)
        model.layers[0].W_v.weight[4:8] = torch.eye(8)[4:8]
        model.layers[0].W_o.weight[4:8, 4:8] = torch.eye(4)
        # head 1.0 matches a query token to the same key direction
        model.layers[1].W_q.weight[0:4] = torch.eye(8)[4:8]
        model.layers[1].W_k.weight[0:4] = torch.eye(8)[4:8]
    M = token_k_circuit(model, 0, 1)
    assert M.shape == (10, 10)
    want = torch.zeros(10, 10)
    want[4:8, 4:8] = torch.eye(4)
    torch.testing.assert_close(M, want)
    assert top1_diagonal(M, skip=(0, 1, 2, 3, 8, 9)) == 1.0
    assert top1_diagonal(token_k_circuit(model, 0, 0), skip=(0, 1, 2, 3, 8, 9)) == 0.25
    ov = ov_circuit(model, 0, 1)  # copies tokens 4..7
    torch.testing.assert_close(ov, want)
    with pytest.raises(ValueError, match="reader"):
        token_k_circuit(model, 2, 0)


def test_top1_diagonal_counts_rows_and_skips():
    M = torch.eye(4)
    M[2] = torch.tensor([0.0, 5.0, 1.0, 0.0])  # row 2 prefers column 1
    assert top1_diagonal(M, skip=()) == 0.75
    assert top1_diagonal(M, skip=(1,)) == 1.0  # without column 1, row 2 is right
    with pytest.raises(ValueError, match="square"):
        top1_diagonal(torch.zeros(2, 3))


def test_repeat_loss_grid_layout_and_a_copying_model():
    model = _model()
    grid = repeat_loss_grid(
        model, [2, 4], [0, 2], 10, 8, torch.Generator().manual_seed(0)
    )
    assert grid.shape == (2, 2)
    assert (
        torch.isnan(grid[1, 1]) and not torch.isnan(grid[:, 0]).any()
    )  # 1 + 2 + 8 > 9

    class Oracle(torch.nn.Module):  # is sure that token t + 1 is token t + 1 - 3
        config = AttnOnlyConfig(10, 9)

        def forward(self, idx):
            logits = torch.full((*idx.shape, 10), -30.0)
            logits[:, 2:].scatter_(-1, idx[:, :-2, None], 30.0)
            return logits, None

    grid = repeat_loss_grid(
        Oracle(), [3], [0, 2], 10, 4, torch.Generator().manual_seed(0)
    )
    assert (grid < 1e-6).all()


def test_constant_writer_keeps_the_logits_and_splits_zero_from_mean_ablation():
    model, idx = _model(), _idx()
    vector = torch.full((4,), 3.0)
    shifted = constant_writer(model, 1, vector)
    torch.testing.assert_close(shifted(idx)[0], model(idx)[0], atol=1e-4, rtol=1e-4)
    z = head_outputs(shifted, idx)[1][:, :, 1]
    torch.testing.assert_close(z, head_outputs(model, idx)[1][:, :, 1] + vector)
    with ablate_heads(model, {(1, 1): 0.0}):
        plain_zero = model(idx)[0]
    with ablate_heads(shifted, {(1, 1): 0.0}):
        shifted_zero = shifted(idx)[0]
    assert not torch.allclose(plain_zero, shifted_zero, atol=1e-2)
    with ablate_heads(model, {(1, 1): head_outputs(model, idx)[1][:, :, 1].mean(0)}):
        plain_mean = model(idx)[0]
    with ablate_heads(shifted, {(1, 1): z.mean(0)}):
        torch.testing.assert_close(shifted(idx)[0], plain_mean, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="d_head"):
        constant_writer(model, 1, torch.zeros(3))


def test_smeared_keys_mix_each_key_with_the_one_before():
    model = _model(1, smear_keys=True)
    attn = model.layers[0]
    assert isinstance(attn, SmearedKeyAttention)
    torch.testing.assert_close(attn.smear_weights(), torch.full((2,), 0.5))
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        attn.smear.copy_(
            torch.tensor([30.0, -30.0])
        )  # head 0: own key, head 1: previous
        _, w = attn(x, is_causal=True)
        q, k, _ = attn._qkv(x)
    scores = q @ k.transpose(-2, -1) / 2.0  # d_k = 4
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    own = torch.softmax(scores[:, 0].masked_fill(~causal, float("-inf")), -1)
    torch.testing.assert_close(w[:, 0], own, atol=1e-5, rtol=1e-5)
    before = torch.cat([k[:, 1, :1], k[:, 1, :-1]], dim=-2)  # key j - 1
    prev = q[:, 1] @ before.transpose(-2, -1) / 2.0
    torch.testing.assert_close(
        w[:, 1],
        torch.softmax(prev.masked_fill(~causal, float("-inf")), -1),
        atol=1e-5,
        rtol=1e-5,
    )
    assert model(torch.zeros(1, 4, dtype=torch.long))[0].shape == (1, 4, 10)
