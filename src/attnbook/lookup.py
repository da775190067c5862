"""A lookup table, and one head trained to read it (chapter 1).

The task: a sequence holds ``n_keys`` *entries*, one per letter ``a, b, ...`` in a random
order, each storing a random digit ``0 .. n_values-1`` (written ``c2``: letter ``c`` holds
2), followed by ``n_keys`` *questions*, one per letter in another random order (written
``c?``: which digit does ``c`` hold?). Every question must answer with the digit stored
under its letter. Which key a question should attend to depends on the question itself:
``c?`` must look at the entry of ``c`` and ``a?`` at the entry of ``a``, so the right weight
matrix is known in advance and differs from row to row.

Token ids: a token is a letter and a *slot*, the digit it stores or ``?`` (slot
``n_values``): ``id = letter * (n_values + 1) + slot``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .attention import SelfAttention
from .train import plain_adam, train_loop

__all__ = [
    "lookup_batch",
    "lookup_names",
    "LookupHead",
    "train_lookup_head",
    "lookup_scores",
]


def _check_sizes(n_keys: int, n_values: int) -> None:
    if not 2 <= n_keys <= 26 or not 2 <= n_values <= 10:
        raise ValueError(
            f"need 2 <= n_keys <= 26 and 2 <= n_values <= 10, got "
            f"n_keys={n_keys}, n_values={n_values}"
        )


def lookup_names(n_keys: int, n_values: int) -> list[str]:
    """Names of the ``n_keys * (n_values + 1)`` token ids: ``a0, a1, ..., a?, b0, ...``.

    Chapter 1.
    """
    _check_sizes(n_keys, n_values)
    slots = [str(v) for v in range(n_values)] + ["?"]
    return [chr(ord("a") + c) + s for c in range(n_keys) for s in slots]


def lookup_batch(
    batch_size: int,
    n_keys: int,
    n_values: int,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Random lookup tables, each followed by one question per letter (chapter 1).

    Returns ``(tokens, source, answer)`` with shapes (B, 2 n_keys), (B, n_keys) and
    (B, n_keys): the token ids (entries first, then questions), the position of the entry
    each question must read, and the digit stored there, which the question must predict.
    """
    _check_sizes(n_keys, n_values)
    if batch_size < 1:
        raise ValueError(f"need batch_size >= 1, got {batch_size}")
    B, slot_q = batch_size, n_values  # slot_q: the "?" slot
    stored = torch.randint(
        n_values, (B, n_keys), generator=generator
    )  # digit of letter c
    entry_letter = torch.rand(B, n_keys, generator=generator).argsort(-1)  # (B, n_keys)
    asked = torch.rand(B, n_keys, generator=generator).argsort(
        -1
    )  # letter per question
    entries = entry_letter * (n_values + 1) + stored.gather(1, entry_letter)
    questions = asked * (n_values + 1) + slot_q
    source = entry_letter.argsort(-1).gather(1, asked)  # where each asked letter sits
    answer = stored.gather(1, asked)  # (B, n_keys)
    return torch.cat([entries, questions], dim=1), source, answer


class LookupHead(nn.Module):
    """Token embedding -> one self-attention head -> linear read-out to the digits.

    A token's vector is the sum of its letter's vector and its slot's vector (a digit or
    ``?``), so ``c2`` and ``c?`` share the part that says "c". ``forward(tokens)`` takes
    (B, T) ids and returns logits (B, T, n_values) and the head's weights (B, T, T). No
    positions are given to the model: the task needs none.

    Chapter 1.
    """

    def __init__(self, n_keys: int, n_values: int, d_model: int = 16) -> None:
        super().__init__()
        _check_sizes(n_keys, n_values)
        if d_model < 1:
            raise ValueError(f"need d_model >= 1, got {d_model}")
        self.n_keys, self.n_values = n_keys, n_values
        self.letter = nn.Embedding(n_keys, d_model)
        self.slot = nn.Embedding(n_values + 1, d_model)  # digits, then "?"
        self.head = SelfAttention(d_model, d_model)
        self.readout = nn.Linear(d_model, n_values)

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        if tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(
                f"tokens must be a (B, T) tensor of ids, got {tuple(tokens.shape)}"
            )
        letter, slot = tokens // (self.n_values + 1), tokens % (self.n_values + 1)
        x = self.letter(letter) + self.slot(slot)  # (B, T, d_model)
        mixed, weights = self.head(x)  # (B, T, d_model), (B, T, T)
        return self.readout(mixed), weights  # (B, T, n_values), (B, T, T)


def lookup_scores(
    model: LookupHead, tokens: Tensor, source: Tensor, answer: Tensor
) -> dict:
    """Accuracy of the questions and the mean weight each question puts on its entry.

    Chapter 1.
    """
    with torch.no_grad():
        logits, weights = model(tokens)  # (B, T, n_values), (B, T, T)
    n = model.n_keys
    correct = logits[:, n:].argmax(-1) == answer  # (B, n_keys): the questions only
    on_source = weights[:, n:].gather(2, source[..., None])  # (B, n_keys, 1)
    return {
        "accuracy": correct.double().mean().item(),
        "weight_on_entry": on_source.mean().item(),
    }


def train_lookup_head(
    model: LookupHead,
    steps: int = 300,
    batch_size: int = 64,
    lr: float = 0.02,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` on fresh random tables with the package's loop (`train_loop`), plain
    Adam at a constant rate; the loss is the cross-entropy of the questions' answers (the
    entries' outputs are not scored). Returns the loss of every step.

    Chapter 1.
    """
    config = plain_adam(steps, batch_size, lr, seed)
    n = model.n_keys

    def next_batch(gen: torch.Generator) -> tuple[Tensor, Tensor]:
        tokens, _, answer = lookup_batch(batch_size, n, model.n_values, gen)
        return tokens, answer  # (B, 2 n_keys), (B, n_keys)

    def loss_fn(m: nn.Module, batch: tuple[Tensor, ...]) -> Tensor:
        tokens, answer = batch
        logits, _ = m(tokens)  # (B, T, n_values)
        return nn.functional.cross_entropy(
            logits[:, n:].reshape(-1, model.n_values), answer.reshape(-1)
        )

    return train_loop(model, next_batch, config, loss_fn=loss_fn).step_losses
