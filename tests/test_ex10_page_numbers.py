"""The numbers exercise 10's worked-solution page quotes, recomputed from the shipped model.

The page (exercises/explanations/ex10_induction.md) describes what the notebook's last cell
shows and what the classic slips cost. Its numbers depend on training, so they are typed at
their printed rounding and checked here against `trained_chapter_model(0)`, whose weights ship
with the package (one run of the recipe that cell trains): a retrained model or another torch
that moved them would fail this test instead of leaving the page stale.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attnbook.hooks import ablate_heads, attention_weights
from attnbook.induction import (
    copy_losses,
    induction_score,
    loss_per_position,
    previous_token_score,
    repeated_tokens,
)
from attnbook.induction_run import InductionTask, trained_chapter_model
from tools.exercise_tables import EXPLANATIONS


@pytest.fixture(scope="module")
def measured() -> dict[str, float]:
    """What the page quotes, measured: on the last cell's batch (64 sequences, seed 0) and,
    for layer 1's previous-token scores and layer 0's induction scores, on the grader's batch
    (`eval_data`)."""
    task, model = InductionTask(), trained_chapter_model(0)
    n, vocab = task.eval_n, task.vocab_size
    x = repeated_tokens(64, n, vocab, torch.Generator().manual_seed(0))  # (64, 1 + 2n)
    weights = attention_weights(model, x)
    prev = int(previous_token_score(weights[0]).argmax())
    scores = induction_score(weights[1], n).tolist()
    before = copy_losses(loss_per_position(model, x), n)[1]
    with ablate_heads(model, {(0, prev): 0.0}):
        after = copy_losses(loss_per_position(model, x), n)[1]
        broken = induction_score(attention_weights(model, x)[1], n).tolist()
    with torch.no_grad():
        logits = model(x)[0]  # logits[:, t] predict the token at t + 1
    counted = F.cross_entropy(logits[:, n : 2 * n].transpose(1, 2), x[:, n + 1 :])
    grader = attention_weights(model, task.eval_data()[0])  # its n is task.eval_n too
    return {
        "n": n,
        "vocab": vocab,
        "prev": prev,
        "induction": int(torch.tensor(scores).argmax()),
        "scores": scores,
        "broken": broken,
        "before": before,
        "after": after,
        "counted": float(counted),
        "layer1_prev": sorted(previous_token_score(grader[1]).tolist()),
        "layer0_induction": max(induction_score(grader[0], n).tolist()),
    }


def page() -> str:
    text = (EXPLANATIONS / "ex10_induction.md").read_text()
    return " ".join(text.split())  # the page's line breaks fall anywhere in a sentence


def quotes(m: dict[str, float]) -> list[str]:
    """Each sentence part of the page that holds a measured number, at its printed rounding."""
    ln = math.log(m["vocab"] - 1)  # a uniform guess among the tokens after BOS
    rise = (ln - m["before"]) / m["n"]
    a, b = m["scores"]
    c, d = m["broken"]  # layer 1's induction scores with the previous-token head zeroed
    p0, p1 = m["layer1_prev"]
    # layer 0's best induction score rounded up at two decimals: an upper bound
    below = math.ceil(m["layer0_induction"] * 100) / 100
    return [
        f"raises the loss on the repeat by {m['after'] - m['before']:.1f} nats",
        f"with `n = {m['n']}` and the trained model's loss of {m['before']:.2f} nats, by "
        f"({ln:.3f} - {m['before']:.3f}) / {m['n']} = {rise:.3f} nats",
        f"the mean with the first token counted is {m['counted']:.2f}",
        f"about ln {m['vocab'] - 1} = {ln:.1f} nats (a guess among the {m['vocab'] - 1} tokens)",
        f"previous-token scores are {p0:.4f} and {p1:.4f}",
        f"no head of layer 0 has an induction score above {below:.2f}",
        f"nats, {math.log(1 + 4 / math.e):.1f} with five tokens and "
        f"{math.log(1 + (m['vocab'] - 1) / math.e):.1f} with the model's {m['vocab']}",
        f"name head 0.{m['prev']} the previous-token head and head 1.{m['induction']}",
        f"score about the same ({a:.2f} and {b:.2f})",
        f"with head 0.{m['prev']} zeroed, both heads of layer 1 stop working as induction heads "
        f"(their induction scores fall from {a:.2f} and {b:.2f} to {c:.2f} and {d:.2f} on the cell's batch)",
        f"Zeroing head 0.{m['prev']} lifts the loss on the repeat from about "
        f"{m['before']:.1f} nats to about {m['after']:.1f} ({m['before']:.2f} and "
        f"{m['after']:.2f} with the cell's seed 0), close to the {ln:.2f} nats "
        f"(ln {m['vocab'] - 1}) of a uniform guess among the {m['vocab'] - 1} tokens",
    ]


def test_the_page_quotes_what_the_shipped_model_gives(measured):
    text = page()
    missing = [quote for quote in quotes(measured) if quote not in text]
    assert not missing, (
        "the page does not say (or says other numbers than):\n" + "\n".join(missing)
    )


def test_the_page_is_read_whole(measured):
    """The check can fail: a page whose number moved by one in its last digit is caught."""
    quote = quotes(measured)[0]
    moved = quote.replace(f"{measured['after'] - measured['before']:.1f}", "9.9")
    assert moved != quote and moved not in page()


def test_the_rise_follows_from_the_numbers_shown(measured):
    """The page's (ln 63 - loss) / n gives its result from the operands as printed, not only
    from the unrounded values (review 106, F4)."""
    ln, before, n = math.log(measured["vocab"] - 1), measured["before"], measured["n"]
    shown = (float(f"{ln:.3f}") - float(f"{before:.3f}")) / n
    assert f"{shown:.3f}" == f"{(ln - before) / n:.3f}"
