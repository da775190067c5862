"""Unit tests of attnbook.mqar and attnbook.recall_models (chapter 11): the recall data, the
accuracy measure, causal models of every kind, one short training run."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn

from attnbook.mqar import (
    IGNORE,
    RecallTask,
    mqar_batch,
    recall_accuracy,
    recall_loss,
    train_recall,
)
from attnbook.recall_models import (
    CONTROL_KINDS,
    MODEL_KINDS,
    RecallModel,
    RecallModelConfig,
)

pytestmark = pytest.mark.usefixtures("one_thread")
SMALL = RecallModelConfig(vocab_size=32, d_model=8, n_head=2, n_layer=2)


def test_batch_layout_and_answers() -> None:
    x, y = mqar_batch(5, 7, 32, torch.Generator().manual_seed(3))
    assert x.shape == y.shape == (5, 21) and x.dtype == torch.long
    keys, values = x[:, 0:14:2], x[:, 1:14:2]
    assert ((keys >= 1) & (keys < 16)).all() and ((values >= 16) & (values < 32)).all()
    assert all(len(set(row.tolist())) == 7 for row in keys)  # distinct keys
    assert (y[:, :14] == IGNORE).all()
    for b in range(5):
        stored = dict(zip(keys[b].tolist(), values[b].tolist()))
        assert sorted(x[b, 14:].tolist()) == sorted(stored)  # every key asked once
        for key, answer in zip(x[b, 14:].tolist(), y[b, 14:].tolist()):
            assert stored[key] == answer


def test_batch_is_deterministic_per_seed() -> None:
    a = mqar_batch(4, 16, 256, torch.Generator().manual_seed(7))
    b = mqar_batch(4, 16, 256, torch.Generator().manual_seed(7))
    c = mqar_batch(4, 16, 256, torch.Generator().manual_seed(8))
    assert all(torch.equal(s, t) for s, t in zip(a, b))
    assert not torch.equal(a[0], c[0])


class Oracle(nn.Module):
    """Looks each token up among the earlier pairs: logits 1 at the value that followed it."""

    def __init__(self, vocab: int, wrong: bool = False) -> None:
        super().__init__()
        self.vocab, self.wrong = vocab, wrong

    def forward(self, tokens: Tensor) -> Tensor:
        B, T = tokens.shape
        out = torch.zeros(B, T, self.vocab)
        P = T // 3
        for b in range(B):
            stored = dict(
                zip(
                    tokens[b, 0 : 2 * P : 2].tolist(), tokens[b, 1 : 2 * P : 2].tolist()
                )
            )
            for t in range(2 * P, T):
                value = stored[int(tokens[b, t])]
                out[b, t, value - 1 if self.wrong else value] = 1.0
        return out


def test_recall_accuracy_of_an_oracle_and_of_a_wrong_one() -> None:
    assert recall_accuracy(Oracle(64), 9, 64, n_examples=10, batch_size=4) == 1.0
    assert recall_accuracy(Oracle(64, wrong=True), 9, 64, n_examples=10) == 0.0
    x, y = mqar_batch(3, 5, 64)
    # the loss scores the queries only: an oracle's loss is that of logits 1 vs 0
    loss = recall_loss(Oracle(64), (x, y))
    expected = -torch.log_softmax(torch.tensor([1.0] + [0.0] * 63), 0)[0]
    torch.testing.assert_close(loss, expected)


@pytest.mark.parametrize("kind", MODEL_KINDS + CONTROL_KINDS)
def test_every_model_is_causal_and_of_equal_width(kind: str) -> None:
    torch.manual_seed(0)
    model = RecallModel(kind, SMALL).eval()
    x, _ = mqar_batch(2, 6, 32)
    before = model(x)
    assert before.shape == (2, 18, 32)
    x2 = x.clone()
    x2[:, 10:] = (x2[:, 10:] + 1) % 32
    after = model(x2)
    torch.testing.assert_close(after[:, :10], before[:, :10])
    assert not torch.allclose(after[:, 10:], before[:, 10:])
    assert all(m.W_q.in_features == 8 for m in model.mixers)


def test_layer_stacks_and_state_sizes() -> None:
    assert RecallModel("hybrid", SMALL).layer_kinds == ("gated_delta", "softmax")
    assert RecallModel("softmax", SMALL).state_numbers() == 0
    assert RecallModel("delta", SMALL).state_numbers() == 2 * 2 * 4 * 4
    assert RecallModel("linear", SMALL).state_numbers() == 2 * 2 * (4 * 4 + 4)
    assert RecallModel("hybrid", SMALL).state_numbers() == 2 * 4 * 4
    assert RecallModel("additive", SMALL).state_numbers() == 2 * 2 * 4 * 4
    with pytest.raises(ValueError, match="additive"):
        RecallModel("nonsense", SMALL)


def test_the_additive_control_is_the_delta_layer_without_its_correction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import attnbook.recall_models as recall_models

    torch.manual_seed(3)
    delta = RecallModel("delta", SMALL).eval()
    torch.manual_seed(3)
    additive = RecallModel("additive", SMALL).eval()
    # the same parameters from the same seed: the control starts where the delta rule does
    a, b = delta.state_dict(), additive.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[n], b[n]) for n in a)
    x, _ = mqar_batch(2, 6, 32, torch.Generator().manual_seed(1))
    with torch.no_grad():
        for m in (delta, additive):  # writes of clearly different strengths
            for mixer in m.mixers:
                mixer.beta.bias.fill_(1.0)
        y_delta, y_add = delta(x), additive(x)
    assert not torch.allclose(y_delta, y_add, atol=1e-3)  # the correction matters

    def added(
        q: Tensor, k: Tensor, v: Tensor, beta: Tensor, alpha: Tensor | None
    ) -> Tensor:
        # S_t = S_{t-1} + beta_t k_t^T v_t, read q_t S_t, one token at a time
        S = k.new_zeros(*k.shape[:2], k.shape[-1], v.shape[-1])
        out = []
        for t in range(k.shape[2]):
            S = S + beta[:, :, t, None, None] * (k[:, :, t, :, None] * v[:, :, t, None])
            out.append((q[:, :, t, :, None] * S).sum(-2))
        return torch.stack(out, dim=2)

    monkeypatch.setattr(recall_models, "delta_rule_parallel", added)
    with torch.no_grad():
        torch.testing.assert_close(delta(x), y_add)


def test_a_short_training_run_lowers_the_loss_and_measures_each_size() -> None:
    task = RecallTask(
        vocab_size=32,
        train_pairs=(2, 4),
        eval_pairs=(2, 4),
        eval_examples=16,
        batch_size=16,
        steps=60,
        model=SMALL,
    )
    _, result, accuracy = train_recall("softmax", 0, task)
    assert result.iters == 60 and set(accuracy) == {2, 4}
    first = sum(result.step_losses[:10]) / 10
    last = sum(result.step_losses[-10:]) / 10
    assert last < first


@pytest.mark.parametrize("kind", ["delta", "gated_delta"])
def test_delta_layers_read_silu_unit_keys_with_small_writes_and_an_open_gate(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import attnbook.recall_models as recall_models

    seen: dict[str, Tensor | None] = {}
    real = recall_models.delta_rule_parallel

    def spy(
        q: Tensor, k: Tensor, v: Tensor, beta: Tensor, alpha: Tensor | None
    ) -> Tensor:
        seen.update(q=q, k=k, v=v, beta=beta, alpha=alpha)
        return real(q, k, v, beta, alpha)

    monkeypatch.setattr(recall_models, "delta_rule_parallel", spy)
    torch.manual_seed(0)
    cfg = RecallModelConfig(
        vocab_size=32, d_model=8, n_head=2, n_layer=1, write_bias=-1.5, gate_bias=4.0
    )
    mixer = RecallModel(kind, cfg).mixers[0]
    x = torch.randn(3, 7, 8)
    with torch.no_grad():
        y = mixer(x)
        assert mixer.beta is not None
        mixer.beta.weight.zero_()  # beta is then exactly its initial bias
        if mixer.alpha is not None:
            mixer.alpha.weight.zero_()
        mixer(x)
    assert y.shape == (3, 7, 8)
    q, k, beta, alpha = seen["q"], seen["k"], seen["beta"], seen["alpha"]
    assert q is not None and k is not None and beta is not None
    assert q.shape == k.shape == (3, 2, 7, 4) and beta.shape == (3, 2, 7)
    torch.testing.assert_close(q.norm(dim=-1), torch.ones(3, 2, 7))
    torch.testing.assert_close(k[:, :, 1:].norm(dim=-1), torch.ones(3, 2, 6))
    # SiLU before the norm: q is the unit vector along silu(W_q h), h the convolved input
    h = mixer.conv(x.transpose(1, 2))[..., :7].transpose(1, 2)
    want = nn.functional.normalize(
        nn.functional.silu(mixer._heads(mixer.W_q(h))), dim=-1
    )
    torch.testing.assert_close(q, want)
    torch.testing.assert_close(beta, torch.full_like(beta, 1 / (1 + torch.e**1.5)))
    if kind == "gated_delta":
        assert alpha is not None
        torch.testing.assert_close(
            alpha, torch.full_like(alpha, 1 / (1 + torch.e**-4.0))
        )
    else:
        assert alpha is None


@pytest.mark.parametrize("name", ["write_bias", "gate_bias"])
def test_bad_initial_biases_are_named(name: str) -> None:
    with pytest.raises(TypeError, match=name):
        RecallModelConfig(**{name: "big"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=name):
        RecallModelConfig(**{name: float("nan")})


def test_default_initial_write_is_small_and_gate_open() -> None:
    cfg = RecallModelConfig()
    assert torch.sigmoid(torch.tensor(cfg.write_bias)) < 0.2
    assert torch.sigmoid(torch.tensor(cfg.gate_bias)) > 0.99
