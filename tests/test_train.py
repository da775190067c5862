"""Tests of attnbook.train (chapter 6): a tiny model on a tiny repetitive text learns."""

import math

import pytest
import torch

from attnbook.gpt import GPT, GPTConfig
from attnbook.ngram import unigram_loss
from attnbook.text import CharTokenizer, split_train_val
from attnbook.device import evaluating
from attnbook.train import (
    TrainConfig,
    lr_at,
    train,
    train_loop,
)


def test_learning_rate_schedule():
    cfg = TrainConfig(max_iters=100, warmup_iters=10, learning_rate=1e-3, min_lr=1e-4)
    assert math.isclose(lr_at(0, cfg), 1e-4) and math.isclose(lr_at(9, cfg), 1e-3)
    assert math.isclose(lr_at(100, cfg), 1e-4) and lr_at(50, cfg) < lr_at(20, cfg)


def test_unigram_baseline_of_uniform_text_is_log_vocab():
    data = torch.arange(4).repeat(100)
    assert math.isclose(unigram_loss(data, data, 4), math.log(4), rel_tol=1e-9)


def test_a_short_run_beats_the_unigram_baseline():
    text = "the quick brown fox jumps over the lazy dog. " * 60
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.2)
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=tok.vocab_size, block_size=16, n_layer=1, n_head=2, n_embd=16
        )
    )
    cfg = TrainConfig(
        max_iters=80,
        batch_size=8,
        learning_rate=1e-2,
        warmup_iters=5,
        eval_interval=40,
        eval_iters=4,
        progress=False,
    )
    result = train(model, train_data, val_data, cfg)
    assert [r["iter"] for r in result.history] == [0, 40, 80]
    assert result.tokens_per_second > 0 and result.iters == 80
    baseline = unigram_loss(train_data, val_data, tok.vocab_size)
    assert result.final_val_loss < 0.5 * baseline
    assert not model.training
    # every step's batch loss is kept, from about ln V down to about the final estimates
    steps = result.step_losses
    assert len(steps) == 80 and all(isinstance(x, float) for x in steps)
    assert abs(steps[0] - math.log(tok.vocab_size)) < 0.5
    assert max(steps[-10:]) < 0.5 * baseline


def test_time_budget_stops_early(monkeypatch):
    """A fake clock makes every step take one second: max_seconds=3.5 stops after step 4,
    whatever the machine's speed (and a broken budget ends at max_iters, not never)."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(
        "attnbook.train_log.time.perf_counter", lambda: float(next(ticks))
    )
    data = torch.randint(0, 5, (500,))
    model = GPT(GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=1, n_embd=8))
    result = train(
        model,
        data,
        data,
        TrainConfig(
            max_iters=50,
            max_seconds=3.5,
            eval_iters=1,
            eval_interval=1000,
            progress=False,
        ),
    )
    assert result.iters == 4 and result.history[-1]["iter"] == 4


@pytest.mark.parametrize(
    "field, value",
    [
        ("eval_interval", 0),
        ("eval_iters", 0),
        ("max_iters", -1),
        ("batch_size", 0),
        ("warmup_iters", -5),
        ("learning_rate", -1e-3),
        ("grad_clip", -1.0),
        ("max_seconds", 0),
    ],
)
def test_config_rejects_bad_values_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value})


def test_evaluating_restores_the_mode_even_after_an_exception():
    model = torch.nn.Linear(2, 2)
    model.train()
    with pytest.raises(RuntimeError, match="boom"):
        with evaluating(model):
            assert not model.training and not torch.is_grad_enabled()
            raise RuntimeError("boom")
    assert model.training and torch.is_grad_enabled()
    model.eval()
    with evaluating(model):
        pass
    assert not model.training


def test_train_loop_is_general_and_reproducible():
    """The same loop fits a regression with a custom loss; the same seed gives the same weights."""
    x = torch.randn(64, 3, generator=torch.Generator().manual_seed(0))
    y = x @ torch.tensor([1.0, -2.0, 0.5])

    def fit(seed):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        cfg = TrainConfig(
            max_iters=150,
            batch_size=16,
            learning_rate=0.1,
            min_lr=0.01,
            warmup_iters=5,
            eval_interval=50,
            seed=seed,
        )
        result = train_loop(
            model,
            lambda g: (x[idx := torch.randint(64, (16,), generator=g)], y[idx]),
            cfg,
            loss_fn=lambda m, b: ((m(b[0]).squeeze(-1) - b[1]) ** 2).mean(),
            evaluate=lambda m: {"mse": float(((m(x).squeeze(-1) - y) ** 2).mean())},
        )
        return model, result

    model, result = fit(0)
    assert [r["iter"] for r in result.history] == [0, 50, 100, 150]
    assert result.final("mse") < 0.01 * result.history[0]["mse"]
    assert not model.training
    again, _ = fit(0)
    other, _ = fit(1)
    assert torch.equal(model.weight, again.weight) and not torch.equal(
        model.weight, other.weight
    )
    with pytest.raises(KeyError, match="no metric 'val_loss'"):
        _ = result.final_val_loss


def test_plot_losses_draws_the_estimates_and_every_step():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnbook.plot import plot_losses
    from attnbook.train import TrainResult

    result = TrainResult(
        history=[
            {"iter": 0, "train_loss": 3.0, "val_loss": 3.1},
            {"iter": 4, "train_loss": 2.0, "val_loss": 2.2},
        ],
        step_losses=[2.9, 2.7, 2.4, 2.1],
    )
    ax = plot_losses(result, baseline=2.5)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["train, per step", "train", "validation", "unigram baseline"]
    assert list(ax.get_lines()[0].get_xdata()) == [1, 2, 3, 4]
    plt.close(ax.figure)


class _Clock:
    """A clock that moves only when a test moves it (`attnbook.train` reads it)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def _clocked_run(monkeypatch, **config):
    """A linear model trained by `train_loop` on a fake clock: every step takes 1 s, every
    evaluation 100 s (which the training time leaves out)."""
    import attnbook.train_log as train_module  # the clock the run's log reads

    clock = _Clock()
    monkeypatch.setattr(train_module, "time", clock)
    x = torch.randn(32, 3, generator=torch.Generator().manual_seed(0))

    def loss_fn(m, batch):
        clock.now += 1.0
        return m(batch[0]).pow(2).mean()

    def evaluate(m):
        clock.now += 100.0
        return {"zero": 0.0}

    torch.manual_seed(0)
    cfg = TrainConfig(batch_size=4, progress=False, **config)
    return train_loop(
        torch.nn.Linear(3, 1),
        lambda g: (x[torch.randint(32, (4,), generator=g)],),
        cfg,
        loss_fn=loss_fn,
        evaluate=evaluate,
    )


def test_training_time_adds_up_every_segment_between_evaluations(monkeypatch):
    result = _clocked_run(monkeypatch, max_iters=7, eval_interval=3)
    assert [(h["iter"], h["seconds"]) for h in result.history] == [
        (0, 0.0),
        (3, 3.0),
        (6, 6.0),
        (7, 7.0),
    ]
    assert result.train_seconds == 7.0 and result.iters == 7


def test_the_time_budget_counts_the_segments_before_the_last_evaluation(monkeypatch):
    """5 s of budget with an evaluation every 2 steps: the run stops after step 5, in its
    third segment, not at max_iters."""
    result = _clocked_run(monkeypatch, max_iters=20, eval_interval=2, max_seconds=5)
    assert result.iters == 5 and result.train_seconds == 5.0
    assert result.history[-1]["iter"] == 5


def test_tokens_per_second_counts_every_token_of_every_window():
    data = torch.randint(0, 5, (400,), generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=1, n_embd=8))
    cfg = TrainConfig(
        max_iters=3, batch_size=4, eval_interval=3, eval_iters=1, progress=False
    )
    result = train(model, data, data, cfg)
    assert result.tokens_per_second == pytest.approx(3 * 4 * 8 / result.train_seconds)


def test_the_steps_run_in_training_mode_and_the_evaluations_in_eval_mode():
    """A model handed over in eval mode still trains with its dropout on: train_loop switches
    it to training mode for the steps, evaluates in eval mode and leaves it in eval mode."""
    modes: list[tuple[str, bool]] = []
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Dropout(0.5))
    model.eval()
    x = torch.randn(4, 3)

    def loss_fn(m, batch):
        modes.append(("step", m.training))
        out = m(batch[0])
        assert bool((out == 0).any())  # dropout zeroes some of the 32 outputs
        return out.pow(2).mean()

    def evaluate(m):
        modes.append(("eval", m.training))
        return {}

    cfg = TrainConfig(max_iters=3, batch_size=4, eval_interval=2, progress=False)
    train_loop(model, lambda g: (x,), cfg, loss_fn=loss_fn, evaluate=evaluate)
    assert modes == [
        ("eval", False),
        ("step", True),
        ("step", True),
        ("eval", False),
        ("step", True),
        ("eval", False),
    ]
    assert not model.training
