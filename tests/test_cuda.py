"""The package on a CUDA GPU (chapter 6, "On a GPU"): run with `pytest -m cuda` on a GPU
machine; skipped with a message elsewhere. A few steps each: the device code, not speed."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
import torch

from attnbook.device import model_device, pick_device
from attnbook.gpt import GPT, GPTConfig
from attnbook.text import CharTokenizer, get_batch, split_train_val
from attnbook.ngram import unigram_loss
from attnbook.train import TrainConfig, estimate_loss, train

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

ROOT = Path(__file__).resolve().parents[1]
TEXT = "to be, or not to be: that is the question. " * 200


def data():
    tok = CharTokenizer.from_text(TEXT)
    return tok, *split_train_val(tok.encode(TEXT), 0.2)


def tiny_gpt(vocab_size: int) -> GPT:
    torch.manual_seed(0)
    return GPT(
        GPTConfig(
            vocab_size=vocab_size,
            block_size=32,
            n_layer=2,
            n_head=2,
            n_embd=32,
            dropout=0.1,
        )
    )


def test_pick_device_finds_the_gpu(monkeypatch):
    monkeypatch.delenv("ATTNBOOK_DEVICE", raising=False)
    assert pick_device().type == "cuda"


@pytest.mark.parametrize("on_gpu", [False, True])
def test_get_batch_on_cuda_cuts_the_same_windows_as_on_the_cpu(on_gpu):
    data = torch.arange(1000) * 7
    source = data.cuda() if on_gpu else data
    x, y = get_batch(source, 16, 8, torch.Generator().manual_seed(0), device="cuda")
    x_cpu, y_cpu = get_batch(data, 16, 8, torch.Generator().manual_seed(0))
    assert x.device.type == y.device.type == "cuda"
    assert torch.equal(x.cpu(), x_cpu) and torch.equal(y.cpu(), y_cpu)


@pytest.mark.parametrize(
    "amp, compile", [("none", False), ("bf16", False), ("fp16", False), ("auto", True)]
)
def test_train_on_cuda(amp, compile):
    if amp == "bf16" and not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16")
    tok, train_data, val_data = data()
    model = tiny_gpt(tok.vocab_size)  # on the CPU: train moves it
    cfg = TrainConfig(
        max_iters=40,
        batch_size=16,
        learning_rate=1e-2,
        warmup_iters=4,
        eval_interval=20,
        eval_iters=4,
        amp=amp,
        compile=compile,
        step_times=True,
    )
    result = train(model, train_data, val_data, cfg, device="cuda")
    assert model_device(model).type == "cuda" and len(result.step_seconds) == 40
    assert all(math.isfinite(h["val_loss"]) for h in result.history)
    assert result.final_val_loss < 0.7 * unigram_loss(
        train_data, val_data, tok.vocab_size
    )
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_cuda_and_cpu_agree_in_float32():
    """Without TF32 and autocast, 20 steps on the GPU follow the CPU's to float32 rounding."""
    tok, train_data, val_data = data()
    losses = []
    for device in ("cpu", "cuda"):
        model = tiny_gpt(tok.vocab_size)
        cfg = TrainConfig(
            max_iters=20,
            batch_size=8,
            eval_interval=10,
            eval_iters=4,
            amp="none",
            tf32=False,
        )
        # dropout masks differ between devices: compare without dropout
        for m in model.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        losses.append(
            [
                h["val_loss"]
                for h in train(model, train_data, val_data, cfg, device=device).history
            ]
        )
    assert losses[0] == pytest.approx(losses[1], abs=2e-3)


def test_estimate_loss_and_generation_on_cuda():
    tok, train_data, val_data = data()
    model = tiny_gpt(tok.vocab_size).cuda()
    loss = estimate_loss(
        model,
        val_data.cuda(),
        32,
        8,
        3,
        torch.Generator().manual_seed(0),
        amp="bf16" if torch.cuda.is_bf16_supported() else "fp16",
    )
    # an untrained model: about uniform
    assert math.isclose(loss, math.log(tok.vocab_size), rel_tol=0.1)
    start = tok.encode("t")[None, :].cuda()  # (1, 1) on the model's device
    for generator in (
        torch.Generator().manual_seed(0),
        torch.Generator(device="cuda").manual_seed(0),
    ):
        out = model.generate(start, 40, generator=generator)
        assert out.device.type == "cuda" and out.shape == (1, 41)
    greedy = [model.generate(start, 40, top_k=1, use_cache=c) for c in (True, False)]
    assert torch.equal(greedy[0], greedy[1])
    assert len(tok.decode(greedy[0][0])) == 41


def test_the_gpu_benchmark_runs_a_few_steps(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "gpu_gpt", ROOT / "benchmarks" / "gpu_gpt.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = tmp_path / "text.txt"
    path.write_text(TEXT, encoding="utf-8")
    record = bench.main(
        [
            "--preset",
            "cpu-smoke",
            "--device",
            "cuda",
            "--data",
            str(path),
            "--steps",
            "5",
        ]
    )
    assert record["device"].startswith("cuda") and record["peak_memory_mib"] > 0
    assert math.isfinite(record["val_loss"])
