"""A task whose right attention pattern is known, and one head trained on it (chapter 1).

The "marked letter" task: a sequence of ``length`` letters from an alphabet of
``n_letters``, exactly one of which is *marked* (written in upper case). Every position
must answer the same question: which letter is marked? One head of self-attention solves it
if every query puts its weight on the marked token and the value of that token says which
letter it is, so the right weight matrix is known in advance: a bright column at the marked
position. Token ids: ``0 .. n_letters-1`` are the plain letters, ``n_letters + c`` is
letter ``c`` marked.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .attention import SelfAttention
from .train import TrainConfig, train_loop

__all__ = [
    "marked_letter_batch",
    "plain_adam",
    "token_names",
    "LookupHead",
    "train_lookup_head",
    "lookup_scores",
]


def token_names(n_letters: int) -> list[str]:
    """Names of the ``2 * n_letters`` token ids: ``a, b, ...`` then the marked ``A, B, ...``."""
    if not 1 <= n_letters <= 26:
        raise ValueError(f"n_letters must be between 1 and 26, got {n_letters}")
    lower = [chr(ord("a") + c) for c in range(n_letters)]
    return lower + [name.upper() for name in lower]


def marked_letter_batch(
    batch_size: int,
    length: int,
    n_letters: int,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Random sequences with one marked letter each.

    Returns ``(tokens, marked_position, answer)`` with shapes (B, T), (B,) and (B,):
    token ids as described in the module docstring, the position of the marked token, and
    the letter (0 .. n_letters-1) it carries, which every position must predict.
    """
    if batch_size < 1 or length < 2 or n_letters < 2:
        raise ValueError(
            f"need batch_size >= 1, length >= 2 and n_letters >= 2, got "
            f"batch_size={batch_size}, length={length}, n_letters={n_letters}"
        )
    # (B, T)
    letters = torch.randint(n_letters, (batch_size, length), generator=generator)
    marked = torch.randint(length, (batch_size,), generator=generator)  # (B,)
    rows = torch.arange(batch_size)
    answer = letters[rows, marked]  # (B,)
    tokens = letters.clone()
    tokens[rows, marked] += n_letters  # the marked token gets its upper-case id
    return tokens, marked, answer


class LookupHead(nn.Module):
    """Token embedding -> one self-attention head (with biases) -> linear read-out.

    The query bias gives every token a shared "look for the mark" direction, which makes
    training reliable (without it one letter's query can get stuck pointing elsewhere).

    ``forward(tokens)`` takes (B, T) ids and returns logits (B, T, n_letters) and the
    head's weights (B, T, T). No positions are given to the model: the task needs none.
    """

    def __init__(self, n_letters: int, d_model: int = 16) -> None:
        super().__init__()
        if n_letters < 2 or d_model < 1:
            raise ValueError(
                f"need n_letters >= 2 and d_model >= 1, got {n_letters}, {d_model}"
            )
        self.n_letters = n_letters
        self.embed = nn.Embedding(2 * n_letters, d_model)
        self.head = SelfAttention(d_model, d_model, bias=True)
        self.readout = nn.Linear(d_model, n_letters)

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        if tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(
                f"tokens must be a (B, T) tensor of ids, got {tuple(tokens.shape)}"
            )
        mixed, weights = self.head(self.embed(tokens))  # (B, T, d_model), (B, T, T)
        return self.readout(mixed), weights  # (B, T, n_letters), (B, T, T)


def lookup_scores(
    model: LookupHead, tokens: Tensor, marked: Tensor, answer: Tensor
) -> dict:
    """Accuracy over all positions and the mean weight the queries put on the marked token."""
    with torch.no_grad():
        logits, weights = model(tokens)  # (B, T, n), (B, T, T)
    rows = torch.arange(len(tokens))
    correct = logits.argmax(-1) == answer[:, None]  # (B, T)
    # (B, T): weight of every query on the marked key
    on_marked = weights[rows, :, marked]
    return {
        "accuracy": correct.double().mean().item(),
        "weight_on_marked": on_marked.mean().item(),
    }


def plain_adam(steps: int, batch_size: int, lr: float, seed: int = 0) -> TrainConfig:
    """`train_loop` settings for plain Adam at a constant rate: no warm-up, decay, weight
    decay or clipping (the small heads of chapters 1 and 3)."""
    if steps < 1 or lr <= 0:
        raise ValueError(f"need steps >= 1 and lr > 0, got steps={steps}, lr={lr}")
    return TrainConfig(
        max_iters=steps,
        batch_size=batch_size,
        learning_rate=lr,
        min_lr=lr,
        warmup_iters=0,
        weight_decay=0.0,
        betas=(0.9, 0.999),
        grad_clip=0.0,
        eval_interval=steps,
        seed=seed,
    )


def train_lookup_head(
    model: LookupHead,
    steps: int = 300,
    batch_size: int = 64,
    length: int = 8,
    lr: float = 0.02,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` on fresh random batches with the package's loop (`train_loop`) at a
    constant learning rate: no warm-up, decay, weight decay or clipping, so plain Adam.
    Returns the loss of every step."""
    config = plain_adam(steps, batch_size, lr, seed)
    losses: list[float] = []

    def next_batch(gen: torch.Generator) -> tuple[Tensor, Tensor]:
        tokens, _, answer = marked_letter_batch(
            batch_size, length, model.n_letters, gen
        )
        # every position, the same answer
        return tokens, answer[:, None].expand(-1, length)

    def loss_fn(m: nn.Module, batch: tuple[Tensor, ...]) -> Tensor:
        tokens, target = batch  # (B, T), (B, T)
        logits, _ = m(tokens)  # (B, T, n_letters)
        loss = nn.functional.cross_entropy(
            logits.reshape(-1, model.n_letters), target.reshape(-1)
        )
        losses.append(loss.item())
        return loss

    train_loop(model, next_batch, config, loss_fn=loss_fn)
    return losses
