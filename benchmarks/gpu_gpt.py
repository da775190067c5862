#!/usr/bin/env python3
"""The baby GPT on a GPU: step time, tokens/s, peak memory and loss (chapter 6, "On a GPU").

    python benchmarks/gpu_gpt.py                           # nanoGPT's baby GPT, 2000 steps, best device
    python benchmarks/gpu_gpt.py --amp bf16 --compile --steps 5000 --out run.json
    python benchmarks/gpu_gpt.py --profile 20              # then a profile of 20 more steps
    python benchmarks/gpu_gpt.py --preset cpu-smoke --data FILE   # 3 tiny steps on the CPU (tested)

The "baby" preset is nanoGPT's config/train_shakespeare_char.py: 6 layers, 6 heads, width
384, context 256, batch 64, dropout 0.2, no biases, AdamW lr 1e-3 (cosine to 1e-4 at the last
step, 100 warm-up steps), betas (0.9, 0.99), weight decay 0.1, gradient clip 1; vocabulary =
the sorted characters of the text, the first 90 % of it for training (nanoGPT's split).
The same run of nanoGPT, from its repository (data/shakespeare_char/prepare.py first):

    python train.py config/train_shakespeare_char.py --max_iters=2000 --lr_decay_iters=2000 \
        --compile=False        # add --dtype=float16 on a GPU without bf16

Step time: each step is synchronised with the device and timed on its own; the median is over
the steps after --warmup-steps, evaluations excluded. Losses at the end: nanoGPT's estimate,
--eval-iters batches of each split (200). Peak memory: torch.cuda.max_memory_allocated.
MFU as nanoGPT prints it (against an A100's 312 TFLOPS of bf16, whatever the GPU).
Not a test (timing): put the numbers, the command, the device and the versions in the note.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

from attnbook import text as attn_text
from attnbook.device import pick_device, synchronize
from attnbook.gpt import GPT, GPTConfig
from attnbook.text import CharTokenizer, split_train_val
from attnbook.train import AMP_MODES, TrainConfig, autocast_dtype, train

PRESETS: dict[str, dict] = {  # model and run sizes; the optimiser settings are the same
    "baby": dict(
        n_layer=6,
        n_head=6,
        n_embd=384,
        block_size=256,
        batch_size=64,
        steps=2000,
        eval_every=500,
        eval_iters=200,
        warmup_iters=100,
        warmup_steps=20,
    ),
    "cpu-smoke": dict(
        n_layer=1,
        n_head=2,
        n_embd=16,
        block_size=16,
        batch_size=4,
        steps=3,
        eval_every=3,
        eval_iters=2,
        warmup_iters=1,
        warmup_steps=1,
    ),
}
A100_BF16_FLOPS = 312e12  # nanoGPT's MFU denominator


def load_text(path: str | None) -> str:
    """The training text: the file at `path`, else the corpus the package ships."""
    if path is not None:
        return Path(path).read_text(encoding="utf-8")
    load_corpus = getattr(attn_text, "load_corpus", None)  # a shipped Tiny Shakespeare
    if load_corpus is None:
        raise SystemExit(
            "this attnbook ships no corpus: pass --data PATH (Tiny Shakespeare's input.txt)"
        )
    return load_corpus("shakespeare")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", choices=sorted(PRESETS), default="baby")
    parser.add_argument(
        "--data", help="a text file (default: the package's Tiny Shakespeare)"
    )
    parser.add_argument("--steps", type=int, help="training steps (baby: 2000)")
    parser.add_argument(
        "--device", help="cuda, mps, cpu (default: attnbook.device.pick_device())"
    )
    parser.add_argument(
        "--amp",
        choices=AMP_MODES,
        default="auto",
        help="autocast: auto = bf16 on a GPU that has it, fp16 on one that does not",
    )
    parser.add_argument(
        "--compile", action="store_true", help="torch.compile the model"
    )
    parser.add_argument(
        "--no-tf32", action="store_true", help="full float32 matmuls on CUDA"
    )
    parser.add_argument(
        "--eval-every", type=int, help="steps between loss estimates (baby: 500)"
    )
    parser.add_argument(
        "--eval-iters", type=int, help="batches per split and estimate (baby: 200)"
    )
    parser.add_argument(
        "--warmup-steps", type=int, help="steps left out of the median step time"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sample", type=int, default=0, help="characters to sample at the end"
    )
    parser.add_argument(
        "--profile", type=int, default=0, help="profile this many more steps"
    )
    parser.add_argument("--out", help="write the JSON record here")
    args = parser.parse_args(argv)
    for name, value in PRESETS[args.preset].items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    return args


def profile(
    model: GPT,
    train_data: torch.Tensor,
    val_data: torch.Tensor,
    cfg: TrainConfig,
    steps: int,
    device: torch.device,
) -> str:
    """torch.profiler's table of `steps` more training steps (one-batch evaluations around them);
    its last lines compare the host's time (Self CPU) with the GPU's (Self CUDA)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    activities = [ProfilerActivity.CPU] + (
        [ProfilerActivity.CUDA] if device.type == "cuda" else []
    )
    short = TrainConfig(
        **{
            **cfg.__dict__,
            "max_iters": steps,
            "eval_interval": steps,
            "eval_iters": 1,
            "warmup_iters": 0,
            "step_times": False,
        }
    )
    with torch_profile(activities=activities) as prof:
        train(model, train_data, val_data, short, device=device)
    key = "self_device_time_total" if device.type == "cuda" else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=key, row_limit=25)


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    device = pick_device(args.device)
    text = load_text(args.data)
    tok = CharTokenizer.from_text(text)
    train_data, val_data = split_train_val(tok.encode(text), 0.1)
    torch.manual_seed(args.seed)
    config = GPTConfig(
        vocab_size=tok.vocab_size,
        block_size=args.block_size,
        n_layer=args.n_layer,
        n_head=args.n_head,
        n_embd=args.n_embd,
        dropout=0.2,
        bias=False,
    )
    model = GPT(config)  # built on the CPU: the same initial weights on every device
    cfg = TrainConfig(
        max_iters=args.steps,
        batch_size=args.batch_size,
        learning_rate=1e-3,
        min_lr=1e-4,
        warmup_iters=min(args.warmup_iters, args.steps),
        weight_decay=0.1,
        betas=(0.9, 0.99),
        grad_clip=1.0,
        eval_interval=args.eval_every,
        eval_iters=args.eval_iters,
        seed=args.seed,
        amp=args.amp,
        tf32=not args.no_tf32,
        compile=args.compile,
        step_times=True,
    )
    name = (
        torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else platform.processor() or device.type
    )
    print(
        f"{model.num_parameters() / 1e6:.2f} M parameters, vocabulary {tok.vocab_size}, "
        f"{len(train_data):,} training tokens; {device} ({name}), torch {torch.__version__}, "
        f"autocast {autocast_dtype(args.amp, device)}, compile {args.compile}"
    )
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    result = train(model, train_data, val_data, cfg, device=device)
    synchronize(device)
    wall = time.perf_counter() - start
    timed = result.step_seconds[args.warmup_steps :] or result.step_seconds
    step = statistics.median(timed)
    tokens = args.batch_size * args.block_size
    non_embedding = (
        model.num_parameters() - sum(p.numel() for p in model.pos_emb.parameters())
        if model.pos_emb is not None
        else model.num_parameters()
    )
    flops = (
        6 * non_embedding + 12 * args.n_layer * args.n_embd * args.block_size
    ) * tokens
    record = {
        "command": " ".join(
            [
                "python",
                "benchmarks/gpu_gpt.py",
                *(argv if argv is not None else sys.argv[1:]),
            ]
        ),
        "device": str(device),
        "device_name": name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "settings": {k: v for k, v in vars(args).items() if k != "out"},
        "parameters": model.num_parameters(),
        "steps": result.iters,
        "step_ms_median": 1e3 * step,
        "step_ms_mean": 1e3 * statistics.fmean(timed),
        "train_seconds": result.train_seconds,
        "wall_seconds": wall,
        "tokens_per_second": tokens / step,
        "mfu_vs_a100": flops / step / A100_BF16_FLOPS,
        "peak_memory_mib": torch.cuda.max_memory_allocated(device) / 2**20
        if device.type == "cuda"
        else None,
        "train_loss": result.final("train_loss"),
        "val_loss": result.final_val_loss,
        "history": result.history,
    }
    for row in result.history:
        print(
            f"step {row['iter']:5d}  train {row['train_loss']:.4f}  val {row['val_loss']:.4f}"
        )
    peak = (
        f"{record['peak_memory_mib']:,.0f} MiB"
        if record["peak_memory_mib"] is not None
        else "n/a"
    )
    print(
        f"step time {record['step_ms_median']:.2f} ms (median of {len(timed)} steps; mean "
        f"{record['step_ms_mean']:.2f} ms), {record['tokens_per_second']:,.0f} tokens/s, "
        f"MFU {100 * record['mfu_vs_a100']:.1f} % (of an A100), peak memory {peak}, wall {wall:.1f} s"
    )
    if args.sample:
        start_ids = tok.encode("\n" if "\n" in tok.index else tok.chars[0])[None, :].to(
            device
        )  # (1, 1)
        out = model.generate(
            start_ids, args.sample, generator=torch.Generator().manual_seed(args.seed)
        )
        record["sample"] = tok.decode(out[0, 1:])
        print(record["sample"])
    if args.profile:
        record["profile"] = profile(
            model, train_data, val_data, cfg, args.profile, device
        )
        print(record["profile"])
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


if __name__ == "__main__":
    main()
