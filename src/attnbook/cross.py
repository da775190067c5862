"""Cross-attention trained on a task whose alignment is known: reversing a sequence (chapter 1).

The task: a *source* of ``length`` random symbols ``0 .. n_symbols-1``; the *target* is the
same symbols in reverse order. Output position t must copy source position ``length - 1 - t``,
so the right cross-attention map is known in advance: the anti-diagonal.

The model (`Reverser`) is an encoder-decoder in its smallest form. The encoder turns each
source token into a vector (symbol embedding + position embedding); these vectors are the
keys' and values' input. The decoder reads the target written so far (teacher forcing: the
previous target symbol, a start symbol ``n_symbols`` at step 0, plus the output position) and
turns it into the queries. One cross-attention head, then a linear read-out to the symbols.
There is no residual path around the head, so every prediction has to come through the
attention weights. Scores are either the scaled dot product of chapter 1 or Bahdanau's
additive score (`AdditiveScore`); both go through the package's one softmax and weighted sum.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ._checks import positive_int, tensor
from .attention import attention_from_scores, scaled_dot_product_attention
from .train import plain_adam, train_loop

__all__ = [
    "AdditiveScore",
    "reversal_batch",
    "Reverser",
    "train_reverser",
    "reverse_greedy",
    "reversal_scores",
]

SCORES = ("dot", "additive")


class AdditiveScore(nn.Module):
    """Bahdanau's additive score (Bahdanau, Cho and Bengio, 2015), with tokens as rows:

        s(i, j) = tanh(q_i W_a + k_j U_a) w_a

    W_a: (d_q, d_a), U_a: (d_k, d_a), w_a: (d_a, 1) (Bahdanau's v_a; here v names values).
    ``forward(q, k)`` takes q (..., T_q, d_q) and k (..., T_k, d_k) and returns the scores
    (..., T_q, T_k). The tanh sits between query and key, so the score is no matrix product:
    the (..., T_q, T_k, d_a) tensor of hidden units is built in full.

    Chapters 1 and 2.
    """

    def __init__(self, d_q: int, d_k: int, d_a: int) -> None:
        super().__init__()
        self.d_q = positive_int("d_q", d_q)
        self.d_k = positive_int("d_k", d_k)
        self.d_a = positive_int("d_a", d_a)
        self.W_a = nn.Linear(d_q, d_a, bias=False)  # weight: W_a transposed
        self.U_a = nn.Linear(d_k, d_a, bias=False)
        self.w_a = nn.Linear(d_a, 1, bias=False)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        tensor("q", q, f"(..., T_q, d_q={self.d_q})", min_dims=2)
        tensor("k", k, f"(..., T_k, d_k={self.d_k})", min_dims=2)
        if q.shape[-1] != self.d_q or k.shape[-1] != self.d_k:
            raise ValueError(
                f"q must have d_q={self.d_q} features and k d_k={self.d_k}, got q "
                f"{tuple(q.shape)} and k {tuple(k.shape)}"
            )
        # (..., T_q, 1, d_a) + (..., 1, T_k, d_a) -> (..., T_q, T_k, d_a)
        hidden = torch.tanh(self.W_a(q).unsqueeze(-2) + self.U_a(k).unsqueeze(-3))
        return self.w_a(hidden).squeeze(-1)  # (..., T_q, T_k)

    def extra_repr(self) -> str:
        return f"d_q={self.d_q}, d_k={self.d_k}, d_a={self.d_a}"


def _check_task(length: int, n_symbols: int) -> None:
    positive_int("length", length)
    positive_int("n_symbols", n_symbols)
    if length < 2 or n_symbols < 2:
        raise ValueError(
            f"need length >= 2 and n_symbols >= 2, got length={length}, n_symbols={n_symbols}"
        )


def reversal_batch(
    batch_size: int,
    length: int,
    n_symbols: int,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Random sources and their reversals (chapter 1).

    Returns ``(source, decoder_input, target)``, each (B, length) of ids: the source symbols,
    the decoder's input under teacher forcing (the start symbol ``n_symbols``, then the target
    shifted right by one) and the target, ``source`` read backwards.
    """
    positive_int("batch_size", batch_size)
    _check_task(length, n_symbols)
    source = torch.randint(n_symbols, (batch_size, length), generator=generator)
    target = source.flip(-1)  # target[:, t] = source[:, length - 1 - t]
    start = torch.full((batch_size, 1), n_symbols)
    return source, torch.cat([start, target[:, :-1]], dim=1), target


class Reverser(nn.Module):
    """Encoder (embeddings) -> one cross-attention head -> linear read-out to the symbols.

    ``forward(source, decoder_input)`` takes two (B, T) id tensors, T <= ``length``, and
    returns logits (B, T, n_symbols) and the cross-attention weights (B, T, T): row t is the
    output position, column j the source position. ``score`` is "dot" (scaled dot product of
    W_Q and W_K projections) or "additive" (`AdditiveScore` with d_a = d_model).

    Chapter 1.
    """

    def __init__(
        self, n_symbols: int, length: int, d_model: int = 32, score: str = "dot"
    ) -> None:
        super().__init__()
        _check_task(length, n_symbols)
        positive_int("d_model", d_model)
        if score not in SCORES:
            raise ValueError(f"score must be one of {SCORES}, got {score!r}")
        self.n_symbols, self.length, self.score = n_symbols, length, score
        self.source_symbol = nn.Embedding(n_symbols, d_model)
        self.source_position = nn.Embedding(length, d_model)
        self.target_symbol = nn.Embedding(n_symbols + 1, d_model)  # symbols, then start
        self.target_position = nn.Embedding(length, d_model)
        if score == "dot":
            self.W_q = nn.Linear(d_model, d_model, bias=False)
            self.W_k = nn.Linear(d_model, d_model, bias=False)
        else:
            self.additive = AdditiveScore(d_model, d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.readout = nn.Linear(d_model, n_symbols)

    def forward(self, source: Tensor, decoder_input: Tensor) -> tuple[Tensor, Tensor]:
        for name, ids, top in (
            ("source", source, self.n_symbols),
            ("decoder_input", decoder_input, self.n_symbols + 1),
        ):
            tensor(name, ids, "(B, T) of ids", dims=(2,))
            if ids.dtype != torch.long or not 1 <= ids.shape[1] <= self.length:
                raise ValueError(
                    f"{name} must be (B, T) long ids with 1 <= T <= {self.length}, got "
                    f"{tuple(ids.shape)} of {ids.dtype}"
                )
            if ids.numel() and (ids.min() < 0 or ids.max() >= top):
                raise ValueError(f"{name} ids must lie in 0 .. {top - 1}")
        positions = torch.arange(source.shape[1], device=source.device)
        memory = self.source_symbol(source) + self.source_position(
            positions
        )  # (B, T, d)
        steps = torch.arange(decoder_input.shape[1], device=decoder_input.device)
        asking = self.target_symbol(decoder_input) + self.target_position(steps)
        values = self.W_v(memory)  # (B, T_k, d)
        if self.score == "dot":
            q, k = self.W_q(asking), self.W_k(memory)  # (B, T_q, d), (B, T_k, d)
            out, weights = scaled_dot_product_attention(q, k, values)
        else:
            out, weights = attention_from_scores(self.additive(asking, memory), values)
        return self.readout(out), weights  # (B, T_q, n_symbols), (B, T_q, T_k)


def train_reverser(
    model: Reverser,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 0.02,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` on fresh random sources with the package's loop (`train_loop`), plain
    Adam at a constant rate, teacher forcing and the cross-entropy of every target symbol.
    Returns the loss of every step.

    Chapter 1.
    """
    if not isinstance(model, Reverser):
        raise TypeError(f"model must be a Reverser, got {type(model).__name__}")
    config = plain_adam(steps, batch_size, lr, seed)

    def next_batch(gen: torch.Generator) -> tuple[Tensor, ...]:
        return reversal_batch(batch_size, model.length, model.n_symbols, gen)

    def loss_fn(m: nn.Module, batch: tuple[Tensor, ...]) -> Tensor:
        source, decoder_input, target = batch
        logits, _ = m(source, decoder_input)  # (B, T, n_symbols)
        return nn.functional.cross_entropy(
            logits.reshape(-1, model.n_symbols), target.reshape(-1)
        )

    return train_loop(model, next_batch, config, loss_fn=loss_fn).step_losses


@torch.no_grad()
def reverse_greedy(model: Reverser, source: Tensor) -> tuple[Tensor, Tensor]:
    """Decode without teacher forcing: each step feeds back the model's own previous symbol.
    source (B, T) -> predicted target (B, T) and the weights of the last pass (B, T, T).

    Chapter 1.
    """
    tensor("source", source, "(B, T) of ids", dims=(2,))
    B, T = source.shape
    written = torch.full(
        (B, 1), model.n_symbols, device=source.device
    )  # the start symbol
    for _ in range(T):
        logits, weights = model(source, written)  # (B, t, n_symbols), (B, t, T)
        written = torch.cat([written, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return written[:, 1:], weights


def reversal_scores(model: Reverser, source: Tensor) -> dict[str, float]:
    """How well ``model`` reverses ``source`` (B, T), decoding greedily: the share of
    sequences reversed without a single error, the share of symbols right, and the mean
    weight an output position puts on its aligned source position T - 1 - t.

    Chapter 1.
    """
    predicted, weights = reverse_greedy(model, source)
    target = source.flip(-1)
    T = source.shape[1]
    aligned = weights[:, torch.arange(T), torch.arange(T - 1, -1, -1)]  # (B, T)
    return {
        "sequence_accuracy": (predicted == target).all(-1).double().mean().item(),
        "symbol_accuracy": (predicted == target).double().mean().item(),
        "weight_on_aligned": aligned.double().mean().item(),
    }
