"""Tests of attnbook.device and of the device options of the training loop (chapter 6, "On a
GPU"), on the CPU and on the `meta` device (shapes without data), so that they run in CI.
The tests that need a real GPU are in tests/test_cuda.py (pytest -m cuda); the MPS ones at
the end of this file (pytest -m mps) are skipped where there is none."""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from attnbook import device as attn_device
from attnbook.cars import generate_pairs
from attnbook.cars.experiment import run_seed, with_steps
from attnbook.device import (
    supports_bf16,
    DEVICE_ENV,
    as_device,
    check_float64,
    float64_device,
    model_device,
    pick_device,
    to_device,
)
from attnbook.gpt import GPT, GPTConfig
from attnbook.text import CharTokenizer, get_batch, split_train_val
from attnbook.train import TrainConfig, autocast_dtype, estimate_loss, train, train_loop

ROOT = Path(__file__).resolve().parents[1]
# tiny models: a second thread only waits
pytestmark = pytest.mark.usefixtures("one_thread")
TEXT = "to be, or not to be: that is the question. " * 40


def fake_machine(monkeypatch: pytest.MonkeyPatch, cuda: bool, mps: bool) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(attn_device, "_mps_available", lambda: mps)


@pytest.mark.parametrize(
    "cuda, mps, expected",
    [(True, True, "cuda"), (False, True, "mps"), (False, False, "cpu")],
)
def test_pick_device_prefers_cuda_then_mps_then_cpu(monkeypatch, cuda, mps, expected):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    fake_machine(monkeypatch, cuda, mps)
    assert pick_device() == torch.device(expected)
    assert pick_device("auto") == torch.device(expected)


def test_the_argument_beats_the_environment_variable_which_beats_the_automatic_choice(
    monkeypatch,
):
    fake_machine(monkeypatch, cuda=True, mps=False)
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert pick_device() == torch.device("cpu")
    assert pick_device("meta") == torch.device("meta")
    monkeypatch.setenv(DEVICE_ENV, "auto")
    assert pick_device() == torch.device("cuda")
    monkeypatch.setenv(DEVICE_ENV, "tpu")
    with pytest.raises(ValueError, match=f"{DEVICE_ENV}='tpu'.*unknown device"):
        pick_device()


def test_a_device_this_machine_lacks_is_a_clear_error(monkeypatch):
    fake_machine(monkeypatch, cuda=False, mps=False)
    with pytest.raises(ValueError, match="sees no CUDA GPU"):
        as_device("cuda")
    with pytest.raises(ValueError, match="MPS is not available"):
        as_device("mps")
    with pytest.raises(ValueError, match="not 'xpu'"):
        as_device("xpu")
    assert as_device(torch.device("cpu")) == torch.device("cpu")


def test_mps_has_no_float64():
    check_float64("cpu", "anything")  # no error
    check_float64("meta", "anything")
    with pytest.raises(
        ValueError,
        match="the unigram table needs float64, and Apple's MPS has no float64",
    ):
        check_float64(torch.device("mps"), "the unigram table")


def test_float64_position_tables_are_built_where_float64_exists():
    from attnbook.positional import alibi_bias, apply_rope

    assert float64_device("mps") == torch.device("cpu")
    assert float64_device(None) == torch.device("cpu")
    assert float64_device("meta") == torch.device("meta")
    # the tables follow the input's device and dtype (meta: no numbers, only placement)
    x = torch.empty(2, 3, 5, 8, device="meta", dtype=torch.float16)
    assert apply_rope(x).device.type == "meta" and apply_rope(x).dtype == torch.float16
    bias = alibi_bias(4, 3, 5, dtype=torch.float16, device="meta")
    assert bias.device.type == "meta" and bias.shape == (4, 3, 5)
    assert bias.dtype == torch.float16


def test_to_device_moves_what_is_elsewhere_and_leaves_the_rest():
    a, b = torch.arange(3), torch.ones(2)
    same = to_device((a, b), "cpu")
    assert same[0] is a and same[1] is b
    moved = to_device((a,), torch.device("meta"))
    assert moved[0].device.type == "meta" and moved[0].shape == (3,)
    with pytest.raises(TypeError, match="a batch must hold tensors, got list"):
        to_device(([1, 2],), "cpu")


def test_model_device():
    assert model_device(torch.nn.Linear(2, 2, device="meta")) == torch.device("meta")
    # nothing to ask: the CPU
    assert model_device(torch.nn.ReLU()) == torch.device("cpu")


def test_get_batch_draws_the_same_windows_on_every_device():
    data = torch.arange(100) * 3
    x, y = get_batch(data, 8, 4, torch.Generator().manual_seed(0))
    starts = torch.randint(92, (4,), generator=torch.Generator().manual_seed(0))
    assert torch.equal(x, data[starts[:, None] + torch.arange(8)]) and torch.equal(
        y, x + 3
    )
    x_cpu, y_cpu = get_batch(data, 8, 4, torch.Generator().manual_seed(0), device="cpu")
    assert torch.equal(x_cpu, x) and torch.equal(y_cpu, y)
    for xm in (
        get_batch(data, 8, 4, torch.Generator().manual_seed(0), device="meta")[0],
        get_batch(data.to("meta"), 8, 4, torch.Generator().manual_seed(0))[0],
    ):
        assert (
            xm.device.type == "meta" and xm.shape == (4, 8) and xm.dtype == torch.long
        )


def test_train_loop_runs_where_the_model_is_without_reading_a_number():
    """On `meta` every tensor is a shape: a loop that read a loss (.item(), .numpy(), a bool of
    a tensor) would fail. The batches come from the CPU and are moved once per step."""
    model = torch.nn.Linear(3, 1)
    x, y = torch.randn(32, 3), torch.randn(32)
    cfg = TrainConfig(max_iters=3, batch_size=4, eval_interval=10, step_times=True)
    result = train_loop(
        model,
        lambda g: (x[i := torch.randint(32, (4,), generator=g)], y[i]),
        cfg,
        loss_fn=lambda m, b: ((m(b[0]).squeeze(-1) - b[1]) ** 2).mean(),
        device="meta",
    )
    assert result.iters == 3 and len(result.step_seconds) == 3
    assert all(p.device.type == "meta" for p in model.parameters())


def tiny_run(device=None, **config):
    tok = CharTokenizer.from_text(TEXT)
    train_data, val_data = split_train_val(tok.encode(TEXT), 0.2)
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(
            vocab_size=tok.vocab_size,
            block_size=16,
            n_layer=1,
            n_head=2,
            n_embd=16,
            dropout=0.1,
        )
    )
    cfg = TrainConfig(
        **{
            "max_iters": 8,
            "batch_size": 8,
            "learning_rate": 1e-2,
            "warmup_iters": 2,
            "eval_interval": 4,
            "eval_iters": 2,
            **config,
        }
    )
    return model, train(model, train_data, val_data, cfg, device=device)


def test_device_cpu_and_the_default_give_bit_identical_runs():
    (m1, r1), (m2, r2) = tiny_run(), tiny_run(amp="none", tf32=False)
    rows = [
        [(h["iter"], h["train_loss"], h["val_loss"]) for h in r.history]
        for r in (r1, r2)
    ]
    assert rows[0] == rows[1] and len(rows[0]) == 3
    assert all(torch.equal(a, b) for a, b in zip(m1.parameters(), m2.parameters()))


def test_train_with_an_explicit_cpu_device_is_the_same_run():
    tok = CharTokenizer.from_text(TEXT)
    train_data, val_data = split_train_val(tok.encode(TEXT), 0.2)
    runs = []
    for device in (None, "cpu"):
        torch.manual_seed(0)
        model = GPT(
            GPTConfig(
                vocab_size=tok.vocab_size, block_size=16, n_layer=1, n_head=2, n_embd=16
            )
        )
        cfg = TrainConfig(max_iters=6, batch_size=4, eval_interval=3, eval_iters=2)
        runs.append(
            [
                h["val_loss"]
                for h in train(model, train_data, val_data, cfg, device=device).history
            ]
        )
    assert runs[0] == runs[1]


def test_bf16_autocast_trains_on_the_cpu():
    model, result = tiny_run(amp="bf16")
    assert all(math.isfinite(h["val_loss"]) for h in result.history)
    assert result.final_val_loss < result.history[0]["val_loss"]
    # autocast, not a bf16 model
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_fp16_takes_the_gradient_scaler_path(monkeypatch):
    """fp16 is for GPUs; here the CPU stands in for one, so that the scaler's code runs in CI.
    One scaler per run, enabled only for fp16 (a disabled scaler passes every call through)."""
    import attnbook.device as device_module

    scalers = []
    real_scaler = torch.amp.GradScaler

    def recording_scaler(device_type, enabled=True):
        scalers.append((device_type, enabled))
        return real_scaler(device_type, enabled=enabled)

    monkeypatch.setattr(torch.amp, "GradScaler", recording_scaler)
    tiny_run(max_iters=1)
    assert scalers == [("cpu", False)]
    monkeypatch.setattr(device_module, "autocast_dtype", lambda amp, dev: torch.float16)
    _, result = tiny_run()
    assert scalers[1:] == [("cpu", True)]
    assert all(math.isfinite(h["val_loss"]) for h in result.history)
    assert result.final_val_loss < result.history[0]["val_loss"]


def test_compile_runs_the_steps_through_torch_compile(monkeypatch):
    """torch.compile with the "eager" backend (tracing, no code generation: seconds, not minutes)."""
    real_compile, compiled = torch.compile, []

    def eager_compile(model):
        compiled.append(model)
        return real_compile(model, backend="eager")

    monkeypatch.setattr(torch, "compile", eager_compile)
    model, result = tiny_run(compile=True, max_iters=2, eval_interval=2)
    assert compiled == [model] and result.iters == 2
    assert all(math.isfinite(h["val_loss"]) for h in result.history)


def test_autocast_dtype_per_device(monkeypatch):
    assert (
        autocast_dtype("auto", "cpu") is None and autocast_dtype("none", "cpu") is None
    )
    assert autocast_dtype("bf16", "cpu") == torch.bfloat16
    assert (
        autocast_dtype("auto", "mps") is None
        and autocast_dtype("fp16", "mps") == torch.float16
    )
    monkeypatch.setattr("attnbook.device.supports_bf16", lambda dev: False)
    assert autocast_dtype("auto", "cuda") == torch.float16  # a T4: fp16 with a scaler
    monkeypatch.setattr("attnbook.device.supports_bf16", lambda dev: True)
    assert autocast_dtype("auto", "cuda") == torch.bfloat16
    with pytest.raises(ValueError, match="amp='bf16' needs a cpu, cuda or mps device"):
        autocast_dtype("bf16", "meta")


def test_a_gpu_that_only_emulates_bf16_gets_fp16(monkeypatch):
    """A T4 (compute capability 7.5): PyTorch's is_bf16_supported() is True by default,
    counting emulation; the package asks for native support, or reads the capability."""

    def bf16(including_emulation=True):
        return including_emulation  # what a T4 answers

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", bf16)
    assert not supports_bf16("cuda") and autocast_dtype("auto", "cuda") == torch.float16

    def old_bf16():  # a PyTorch without the argument
        return True

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", old_bf16)
    for capability, native in (((7, 5), False), ((8, 0), True), ((9, 0), True)):
        monkeypatch.setattr(
            torch.cuda, "get_device_capability", lambda d, c=capability: c
        )
        assert supports_bf16("cuda") is native, capability


def test_the_repr_shows_the_device_options_only_when_set():
    assert "amp" not in repr(TrainConfig()) and repr(TrainConfig()).startswith(
        "TrainConfig(max_iters=2000,"
    )
    assert "amp='bf16'" in repr(TrainConfig(amp="bf16")) and "compile=True" in repr(
        TrainConfig(compile=True)
    )


def test_estimate_loss_is_the_mean_of_the_batch_losses():
    data = torch.randint(0, 7, (300,), generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    model = GPT(
        GPTConfig(vocab_size=7, block_size=8, n_layer=1, n_head=1, n_embd=8)
    ).eval()
    g = torch.Generator().manual_seed(3)
    by_hand = [model(*get_batch(data, 8, 4, g))[1].item() for _ in range(5)]
    got = estimate_loss(
        model, data, 8, 4, 5, torch.Generator().manual_seed(3), device="cpu"
    )
    assert got == sum(by_hand) / 5


def test_the_car_experiment_takes_a_device():
    sentences = generate_pairs(60, seed=0)
    config = with_steps(TrainConfig(batch_size=8, learning_rate=5e-3), 6)
    default = run_seed("bag of words", sentences, seed=0, config=config)
    on_cpu = run_seed("bag of words", sentences, seed=0, config=config, device="cpu")
    metrics = [
        [{k: v for k, v in row.items() if k != "seconds"} for row in run.result.history]
        for run in (default, on_cpu)
    ]
    assert (
        metrics[0] == metrics[1]
        and len(metrics[0]) == 2
        and "test_accuracy" in metrics[0][-1]
    )
    assert all(
        torch.equal(a, b)
        for a, b in zip(default.model.parameters(), on_cpu.model.parameters())
    )


def test_the_gpu_benchmark_runs_its_cpu_smoke_preset(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "gpu_gpt", ROOT / "benchmarks" / "gpu_gpt.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    data = tmp_path / "text.txt"
    data.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "run.json"
    record = bench.main(
        [
            "--preset",
            "cpu-smoke",
            "--data",
            str(data),
            "--device",
            "cpu",
            "--sample",
            "5",
            "--out",
            str(out),
        ]
    )
    assert json.loads(out.read_text()) == json.loads(json.dumps(record))
    assert (
        record["steps"] == 3
        and record["step_ms_median"] > 0
        and record["tokens_per_second"] > 0
    )
    assert math.isfinite(record["val_loss"]) and len(record["sample"]) == 5
    assert record["settings"]["n_layer"] == 1 and record["peak_memory_mib"] is None


# --- Apple silicon: run where MPS is available (pytest -m mps) -----------------------------------
@pytest.mark.mps
@pytest.mark.skipif(
    not attn_device._mps_available(),
    reason="needs Apple's MPS (Apple silicon, macOS 12.3+)",
)
@pytest.mark.parametrize("amp", ["none", "fp16"])
def test_training_on_mps(amp):
    model, result = tiny_run(device="mps", amp=amp)
    assert model_device(model).type == "mps"
    assert result.final_val_loss < result.history[0]["val_loss"]
    xb, _ = get_batch(
        torch.arange(100, device="mps"), 8, 4, torch.Generator().manual_seed(0)
    )
    assert xb.device.type == "mps"


@pytest.mark.mps
@pytest.mark.skipif(
    not attn_device._mps_available(),
    reason="needs Apple's MPS (Apple silicon, macOS 12.3+)",
)
@pytest.mark.parametrize("positions", ["rope", "alibi", "sinusoidal"])
def test_position_schemes_run_on_mps_like_on_the_cpu(positions):
    from attnbook.gpt import GPT, GPTConfig

    torch.manual_seed(0)
    config = GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=8)
    model = GPT(replace(config, positions=positions)).eval()
    ids = torch.randint(0, 11, (2, 8))
    with torch.no_grad():
        on_cpu = model(ids)[0]
        on_mps = model.to("mps")(ids.to("mps"))[0].cpu()
    torch.testing.assert_close(on_mps, on_cpu, atol=1e-4, rtol=1e-4)


def test_the_scaler_hands_the_optimiser_the_true_gradients():
    """With fp16 the loss is scaled before the backward pass (against underflow) and the
    gradients unscaled after it, so that clipping and the step see the true ones. The CPU
    stands in for a GPU with an enabled scaler: the gradients equal those of no scaler."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    x = torch.randn(8, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    run = attn_device.TrainingDevice(model, "cpu", amp="none")
    run.backward(model(x).pow(2).mean(), optimizer)
    true = [p.grad.clone() for p in model.parameters()]
    optimizer.zero_grad()
    run.scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    run.backward(model(x).pow(2).mean(), optimizer)
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), true))
    before = model.weight.detach().clone()
    run.step(optimizer)  # finite gradients: the scaler lets SGD take its step
    torch.testing.assert_close(model.weight.detach(), before - 0.1 * true[0])
