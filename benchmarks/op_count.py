#!/usr/bin/env python3
"""Operations per training step: the package's tiny GPT against a minimal nanoGPT-style model.

    python benchmarks/op_count.py                  # nanoGPT's CPU baby GPT (4 x 4 heads x 128, block 64, batch 12)
    python benchmarks/op_count.py --n-layer 6 --n-head 6 --n-embd 384 --block 256 --batch 64
    python benchmarks/op_count.py --nanogpt ../nanoGPT   # also nanoGPT's own model.py

A `TorchDispatchMode` sees every operator that reaches a kernel (below autograd), so it counts
what a step costs in launches, whatever the clock says on a shared machine. Counted:

    forward      one forward pass with gradients (logits and loss);
    step         one whole training step (forward, backward, gradient clipping, AdamW),
                 as (ops of 3 steps - ops of 1 step) / 2, so the first step's lazy optimiser
                 state is left out; the package's step is `train.train_loop` itself;
    products     matrix products among them (mm, addmm, bmm, baddbmm and fused attention
                 kernels, which do two products each and are listed apart).

The reference is written here, in nanoGPT's style: one Linear of 3C outputs for q, k and v,
`scaled_dot_product_attention(is_causal=True)`, pre-LayerNorm blocks, GELU MLP, tied head,
and the same AdamW setting as the package (fused, weight decay on matrices only) and the same
gradient clipping, so that the counts compare the models and not the optimisers.
Deterministic: no timing, and the same counts on every CPU with this torch version.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils._python_dispatch import TorchDispatchMode

from attnbook.gpt import GPT, GPTConfig
from attnbook.train import TrainConfig, train_loop

PRODUCTS = {"mm", "addmm", "bmm", "baddbmm", "addbmm"}


class OpCounter(TorchDispatchMode):
    """Counts the aten operators dispatched inside the `with` block, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ops[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))

    @property
    def total(self) -> int:
        return sum(self.ops.values())

    @property
    def products(self) -> int:
        return sum(n for name, n in self.ops.items() if name in PRODUCTS)

    @property
    def attention_kernels(self) -> int:
        return sum(n for name, n in self.ops.items() if "scaled_dot_product" in name)


# -- the reference: a minimal GPT in nanoGPT's style ------------------------------------------


class RefAttention(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.out = nn.Linear(width, width, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.shape
        q, k, v = (
            t.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            for t in self.qkv(x).split(C, dim=2)
        )  # each (B, H, T, d)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).contiguous().view(B, T, C))


class RefBlock(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width, bias=False)
        self.attn = RefAttention(width, heads)
        self.norm2 = nn.LayerNorm(width, bias=False)
        self.up = nn.Linear(width, 4 * width, bias=False)
        self.down = nn.Linear(4 * width, width, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class RefGPT(nn.Module):
    def __init__(
        self, vocab: int, block: int, layers: int, heads: int, width: int
    ) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(block, width)
        self.blocks = nn.ModuleList(RefBlock(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width, bias=False)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tokens.weight
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tokens(idx) + self.positions(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def reference_steps(model: nn.Module, batch: tuple[Tensor, Tensor], steps: int) -> None:
    """nanoGPT's step: forward, backward, clip to norm 1, AdamW, gradients set to None."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
        lr=1e-3,
        betas=(0.9, 0.99),
        fused=True,
    )
    for _ in range(steps):
        _, loss = model(*batch)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)


def package_steps(model: nn.Module, batch: tuple[Tensor, Tensor], steps: int) -> None:
    """The package's own loop (`train_loop`) for `steps` steps on one fixed batch."""
    cfg = TrainConfig(max_iters=steps, eval_interval=10**9, warmup_iters=1)
    train_loop(model, lambda _: batch, cfg)


def count(fn: Callable[[], object]) -> OpCounter:
    with OpCounter() as counter:
        fn()
    return counter


Steps = Callable[[nn.Module, tuple[Tensor, Tensor], int], None]


def measure(
    name: str,
    build: Callable[[], nn.Module],
    run_steps: Steps,
    batch: tuple[Tensor, Tensor],
    show: bool,
) -> float:
    """Print a model's operators per forward and per training step; return the latter."""
    model = build().train()
    forward = count(lambda: model(*batch))
    one = count(lambda: run_steps(build(), batch, 1))
    three = count(lambda: run_steps(build(), batch, 3))
    per_step = (three.total - one.total) / 2
    products = (three.products - one.products) / 2
    kernels = (three.attention_kernels - one.attention_kernels) / 2
    print(
        f"{name:27s} forward {forward.total:4d} ops, {forward.products:3d} products "
        f"+ {forward.attention_kernels} attention kernels | "
        f"step {per_step:6.1f} ops, {products:5.1f} products + {kernels:.0f} attention kernels"
    )
    if show:
        diff = {k: (three.ops[k] - one.ops[k]) / 2 for k in three.ops}
        for op, n in sorted(diff.items(), key=lambda kv: (-kv[1], kv[0])):
            if n:
                print(f"    {n:6.1f}  {op}")
    return per_step


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n-layer", type=int, default=4)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--n-embd", type=int, default=128)
    parser.add_argument("--block", type=int, default=64)
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--vocab", type=int, default=65)
    parser.add_argument(
        "--show", action="store_true", help="list the operators of each training step"
    )
    parser.add_argument(
        "--nanogpt",
        metavar="PATH",
        help="a checkout of nanoGPT: also count its own model.py under the reference loop",
    )
    args = parser.parse_args()
    L, H, C, T, B, V = (
        args.n_layer,
        args.n_head,
        args.n_embd,
        args.block,
        args.batch,
        args.vocab,
    )
    gen = torch.Generator().manual_seed(0)
    idx = torch.randint(V, (B, T + 1), generator=gen)
    batch = (idx[:, :-1].contiguous(), idx[:, 1:].contiguous())
    print(
        f"torch {torch.__version__}; {L} layers, {H} heads, width {C}, block {T}, batch {B}"
    )
    config = GPTConfig(vocab_size=V, block_size=T, n_layer=L, n_head=H, n_embd=C)
    ref = measure(
        "reference model, its loop",
        lambda: RefGPT(V, T, L, H, C),
        reference_steps,
        batch,
        args.show,
    )
    model = measure(
        "package model, same loop",
        lambda: GPT(config),
        reference_steps,
        batch,
        args.show,
    )
    loop = measure(
        "package model, train_loop",
        lambda: GPT(config),
        package_steps,
        batch,
        args.show,
    )
    if args.nanogpt:
        sys.path.insert(0, str(Path(args.nanogpt).resolve()))
        import model as nanogpt  # nanoGPT's model.py, imported from the checkout

        nano_config = nanogpt.GPTConfig(
            block_size=T,
            vocab_size=V,
            n_layer=L,
            n_head=H,
            n_embd=C,
            dropout=0.0,
            bias=False,
        )

        def build_nanogpt() -> nn.Module:
            with contextlib.redirect_stdout(io.StringIO()):  # it prints its size
                return nanogpt.GPT(nano_config)

        measure(
            "nanoGPT's model.py, ref. loop",
            build_nanogpt,
            reference_steps,
            batch,
            False,
        )
    for what, ops in (("model", model), ("model and train_loop", loop)):
        verdict = "at or below" if ops <= ref else "ABOVE"
        print(
            f"package {what} / reference: {ops:.1f} / {ref:.1f} ops per step "
            f"= {ops / ref:.3f} ({verdict} the reference)"
        )
    print(
        "train_loop's own: a detach per step keeps each step's loss (chapter 6 plots them); "
        "nanoGPT's train.py divides its loss by gradient_accumulation_steps each step"
    )


if __name__ == "__main__":
    main()
