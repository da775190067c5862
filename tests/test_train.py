"""Tests of attnbook.train (chapter 6): a tiny model on a tiny repetitive text learns."""
import math

import torch

from attnbook.gpt import GPT, GPTConfig
from attnbook.text import CharTokenizer, split_train_val
from attnbook.train import TrainConfig, lr_at, train, unigram_loss


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
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=16, n_layer=1, n_head=2, n_embd=16))
    cfg = TrainConfig(max_iters=80, batch_size=8, learning_rate=1e-2, warmup_iters=5,
                      eval_interval=40, eval_iters=4, progress=False)
    result = train(model, train_data, val_data, cfg)
    assert [r["iter"] for r in result.history] == [0, 40, 80]
    assert result.tokens_per_second > 0 and result.iters == 80
    baseline = unigram_loss(train_data, val_data, tok.vocab_size)
    assert result.final_val_loss < 0.5 * baseline
    assert not model.training


def test_time_budget_stops_early():
    data = torch.randint(0, 5, (500,))
    model = GPT(GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=1, n_embd=8))
    result = train(model, data, data, TrainConfig(max_iters=10**6, max_seconds=0.5, eval_iters=1,
                                                  eval_interval=10**9, progress=False))
    assert result.iters < 10**6 and result.history[-1]["iter"] == result.iters
