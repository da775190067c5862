"""benchmarks/gpt_ablations.py (chapter 6's ablations): every variant builds, runs a forward
and a backward pass through `GPT.forward` (the keywords it passes to each block included), and
the variants that change the blocks compute something other than the chapter's model."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import torch

pytestmark = pytest.mark.usefixtures("one_thread")

VOCAB = 20


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "gpt_ablations.py"
    spec = importlib.util.spec_from_file_location("gpt_ablations", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def forward(bench: ModuleType, variant: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits (2, 16, VOCAB) and loss of `variant` (seed 0) on fixed random ids; the loss is
    back-propagated."""
    torch.manual_seed(0)
    model = bench.build(variant, VOCAB)
    ids = torch.randint(VOCAB, (2, 17), generator=torch.Generator().manual_seed(1))
    logits, loss = model(ids[:, :-1], ids[:, 1:])
    loss.backward()
    return logits.detach(), loss.detach()


def test_every_variant_runs_a_forward_and_a_backward_pass(bench: ModuleType) -> None:
    for variant in bench.VARIANTS:
        logits, loss = forward(bench, variant)
        assert logits.shape == (2, 16, VOCAB), variant
        assert torch.isfinite(loss), variant


def test_the_block_variants_change_what_the_model_computes(bench: ModuleType) -> None:
    base, _ = forward(bench, "base")
    for variant in ("post-ln", "no-residuals", "no-layernorm"):
        logits, _ = forward(bench, variant)
        assert not torch.allclose(logits, base), variant


def test_a_post_ln_block_ends_with_its_layernorm(bench: ModuleType) -> None:
    torch.manual_seed(0)
    model = bench.build("post-ln", VOCAB)
    x = torch.randn(2, 8, 128)
    y = model.blocks[0](x)
    torch.testing.assert_close(y.mean(-1), torch.zeros(2, 8), atol=1e-5, rtol=0)


def test_an_unknown_variant_is_refused(bench: ModuleType) -> None:
    with pytest.raises(ValueError, match="unknown variant 'post-LN'"):
        bench.build("post-LN", VOCAB)
