"""Two marked letters, two questions: a task for a trained multi-head layer (chapter 3).

A sequence holds ``length`` letters from an alphabet of ``n_letters``. Exactly one letter is
marked as the *first* answer (written in upper case, ``A``) and another, at a different
position, as the *second* answer (written with a star, ``a*``). Every position must answer
both questions: which letter carries the first mark, and which the second? The right
attention is known in advance: one distribution on the first-marked key and one on the
second-marked key, for every query.

The model gives a token the sum of a letter vector and a mark vector (none, first,
second). So a head that spreads its weight evenly over the two marked keys returns the
sum of the two letters' values plus a part that does not depend on the letters: it cannot
say which letter carried which mark. A correct layer must weight the marks unevenly, at
least for some letters. One head can: its keys contain the letter vectors, so its split
may depend on the letters (chapter 3 trains one as a control). Two heads can divide the
work, one mark each, and chapter 3 measures what that buys (speed, reliability, length).
Token ids: ``0 .. n-1`` plain letters, ``n + c`` letter ``c`` with the first mark,
``2n + c`` letter ``c`` with the second mark.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnbook.multihead import MultiHeadAttention
from attnbook.train import plain_adam, train_loop

__all__ = [
    "pair_names",
    "marked_pair_batch",
    "TwoQuestionLayer",
    "train_two_questions",
    "weight_on_marks",
]


def pair_names(n_letters: int) -> list[str]:
    """Names of the ``3 * n_letters`` ids: ``a, b, ...``, then ``A, B, ...``, then ``a*, b*, ...``.

    Chapter 3.
    """
    if not 2 <= n_letters <= 26:
        raise ValueError(f"n_letters must be between 2 and 26, got {n_letters}")
    lower = [chr(ord("a") + c) for c in range(n_letters)]
    return lower + [name.upper() for name in lower] + [name + "*" for name in lower]


def marked_pair_batch(
    batch_size: int,
    length: int,
    n_letters: int,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Random sequences with two marked letters each (chapter 3).

    Returns ``(tokens, marked, answers)`` with shapes (B, T), (B, 2) and (B, 2): the token
    ids, the positions of the first- and second-marked tokens (always different), and the
    letters (0 .. n_letters-1) they carry, which every position must predict.
    """
    if batch_size < 1 or length < 2 or n_letters < 2:
        raise ValueError(
            f"need batch_size >= 1, length >= 2 and n_letters >= 2, got "
            f"batch_size={batch_size}, length={length}, n_letters={n_letters}"
        )
    # (B, T)
    letters = torch.randint(n_letters, (batch_size, length), generator=generator)
    first = torch.randint(length, (batch_size,), generator=generator)  # (B,)
    shift = torch.randint(1, length, (batch_size,), generator=generator)  # never 0
    marked = torch.stack([first, (first + shift) % length], dim=1)  # (B, 2), distinct
    rows = torch.arange(batch_size)[:, None]
    answers = letters[rows, marked]  # (B, 2)
    tokens = letters.clone()
    # first mark +n, second +2n
    tokens[rows, marked] += n_letters * torch.tensor([1, 2])
    return tokens, marked, answers


class TwoQuestionLayer(nn.Module):
    """Embedding (letter vector + mark vector) -> `MultiHeadAttention` with ``n_head``
    heads (with biases) -> one linear read-out per question. No positions: the task needs
    none.

    ``forward(tokens)`` takes (B, T) ids and returns logits (B, T, 2, n_letters) and the
    heads' weights (B, H, T, T).

    Chapter 3.
    """

    def __init__(self, n_letters: int, d_model: int = 16, n_head: int = 2) -> None:
        super().__init__()
        if n_letters < 2:
            raise ValueError(f"need n_letters >= 2, got {n_letters}")
        self.n_letters = n_letters
        self.letter = nn.Embedding(n_letters, d_model)
        self.mark = nn.Embedding(3, d_model)  # none, first mark, second mark
        self.attn = MultiHeadAttention(d_model, n_head, bias=True)
        self.readout = nn.Linear(d_model, 2 * n_letters)

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        if tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(
                f"tokens must be a (B, T) tensor of ids, got {tuple(tokens.shape)}"
            )
        n = self.n_letters
        x = self.letter(tokens % n) + self.mark(tokens // n)  # (B, T, d_model)
        mixed, weights = self.attn(x)  # (B, T, d_model), (B, H, T, T)
        logits = self.readout(mixed).unflatten(-1, (2, self.n_letters))  # (B, T, 2, n)
        return logits, weights


def weight_on_marks(
    model: TwoQuestionLayer, tokens: Tensor, marked: Tensor, answers: Tensor
) -> tuple[Tensor, Tensor]:
    """Mean weight each head puts on the first- and the second-marked key, (H, 2), and the
    accuracy of each question over all positions, (2,).

    Chapter 3.
    """
    with torch.no_grad():
        logits, weights = model(tokens)  # (B, T, 2, n), (B, H, T, T)
    rows = torch.arange(len(tokens))[:, None]
    # (B, 2, H, T): weight on each mark
    on_marks = weights.permute(0, 3, 1, 2)[rows, marked]
    per_head = on_marks.mean(dim=(0, 3)).T  # (H, 2)
    correct = logits.argmax(-1) == answers[:, None, :]  # (B, T, 2)
    return per_head, correct.double().mean(dim=(0, 1))


def train_two_questions(
    model: TwoQuestionLayer,
    steps: int = 400,
    batch_size: int = 64,
    length: int = 8,
    lr: float = 0.02,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` on fresh random batches with the package's loop (`train_loop`) at a
    constant learning rate (plain Adam, as `lookup.train_lookup_head`). Returns the loss of
    every step.

    Chapter 3.
    """
    config = plain_adam(steps, batch_size, lr, seed)

    def next_batch(gen: torch.Generator) -> tuple[Tensor, Tensor]:
        tokens, _, answers = marked_pair_batch(batch_size, length, model.n_letters, gen)
        # (B, T, 2): every position
        return tokens, answers[:, None, :].expand(-1, length, -1)

    def loss_fn(m: nn.Module, batch: tuple[Tensor, ...]) -> Tensor:
        tokens, target = batch
        logits, _ = m(tokens)  # (B, T, 2, n)
        return nn.functional.cross_entropy(
            logits.reshape(-1, model.n_letters), target.reshape(-1)
        )

    return train_loop(model, next_batch, config, loss_fn=loss_fn).step_losses
