"""The car classifiers of chapter 7, and what looks inside a trained one.

All map token ids (B, T), right-padded with id 0, to one logit per sentence (B,):

- `BagOfWordsMLP`: word counts -> MLP (sees a multiset of words);
- `PositionWordMLP`: a one-hot of (position, word) for every token -> MLP (sees order, has no
  attention);
- `NGramMLP`: counts of word uni-, bi- and trigrams (hashed into buckets) -> MLP (sees local
  order, has no attention);
- `GRUClassifier`: token embeddings -> a bidirectional GRU over the real tokens -> mean ->
  one logit (sees order, has no attention and no position vectors);
- `AttentionClassifier`: token embeddings with position information (the GPT's front end,
  `positional.embed_tokens`: "learned", "sinusoidal", "rope" or "none", token embeddings not
  scaled), the package's transformer `Block` (chapter 6) with the padding mask and no causal
  mask, masked mean pooling, one logit.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ..gpt import Block, GPTConfig
from ..hooks import attention_weights, with_attention_weights
from ..masks import padding_mask
from ..positional import (
    POSITIONS,
    LearnedPositionalEmbedding,
    embed_tokens,
    position_embedding,
)
from ..device import evaluating
from .vocab import Vocabulary, encode_batch

__all__ = [
    "masked_mean",
    "bag_of_words_counts",
    "BagOfWordsMLP",
    "PositionWordMLP",
    "NGramMLP",
    "GRUClassifier",
    "AttentionClassifier",
    "POSITIONS",
    "MODEL_KINDS",
    "build_model",
    "predict_logits",
    "predict",
    "attention_maps",
]


def masked_mean(x: Tensor, mask: Tensor) -> Tensor:
    """Masked mean pooling (chapter 7): x (B, T, D) and the key mask (B, 1, T) of
    `masks.padding_mask` (True = real token) -> (B, D), the mean over the real tokens only;
    what padded positions hold never matters (inf included), and a row without real tokens
    gives zeros."""
    if x.dim() != 3 or mask.dim() != 3 or mask.shape != (x.shape[0], 1, x.shape[1]):
        raise ValueError(
            "x must be (B, T, D) and mask the key mask (B, 1, T) of masks.padding_mask; "
            f"got {tuple(x.shape)} and {tuple(mask.shape)}"
        )
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be boolean (True = real token), got {mask.dtype}")
    real = mask[:, 0, :, None]  # (B, T, 1): broadcasts over the features
    total = x.masked_fill(~real, 0.0).sum(dim=1)  # (B, D): padding never enters the sum
    return total / real.sum(dim=1).clamp(min=1).to(x.dtype)  # (B, D)


def bag_of_words_counts(ids: Tensor, vocab_size: int, pad_id: int = 0) -> Tensor:
    """(B, T) token ids -> (B, vocab_size) counts of each token (padding not counted).

    Chapter 7.
    """
    counts = torch.zeros(ids.shape[0], vocab_size, device=ids.device)  # (B, V)
    counts.scatter_add_(1, ids, torch.ones_like(ids, dtype=counts.dtype))
    counts[:, pad_id] = 0.0
    return counts


def _check_ids(ids: Tensor) -> None:
    if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.dtype != torch.long:
        shape = tuple(ids.shape) if isinstance(ids, Tensor) else type(ids).__name__
        raise ValueError(f"ids must be a (B, T) tensor of int64 token ids, got {shape}")


def _mlp(n_in: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, 1))


class BagOfWordsMLP(nn.Module):
    """Word counts -> MLP -> one logit. It sees a sentence as a multiset of words.

    Chapter 7.
    """

    def __init__(self, vocab_size: int, hidden: int = 64, pad_id: int = 0) -> None:
        super().__init__()
        self.vocab_size, self.pad_id = vocab_size, pad_id
        self.mlp = _mlp(vocab_size, hidden)

    def forward(self, ids: Tensor) -> Tensor:
        """ids (B, T) -> logits (B,)."""
        _check_ids(ids)
        return self.mlp(bag_of_words_counts(ids, self.vocab_size, self.pad_id)).squeeze(
            -1
        )


class PositionWordMLP(nn.Module):
    """One-hot (position, word) features for the first `max_len` positions -> MLP. It knows
    which word stands where, but a word seen only at other positions is new to it.

    Chapter 7.
    """

    def __init__(
        self, vocab_size: int, max_len: int = 48, hidden: int = 64, pad_id: int = 0
    ) -> None:
        super().__init__()
        self.vocab_size, self.max_len, self.pad_id = vocab_size, max_len, pad_id
        self.mlp = _mlp(max_len * vocab_size, hidden)

    def forward(self, ids: Tensor) -> Tensor:
        """ids (B, T) -> logits (B,)."""
        _check_ids(ids)
        B, T = ids.shape
        if T > self.max_len:
            raise ValueError(
                f"sentences of {T} tokens; this model was built for max_len={self.max_len}"
            )
        # (B, T): feature index
        slot = torch.arange(T, device=ids.device) * self.vocab_size + ids
        features = torch.zeros(B, self.max_len * self.vocab_size, device=ids.device)
        real = padding_mask(ids, self.pad_id)[:, 0]  # (B, T): True = real token
        features.scatter_(1, slot, real.float())  # (B, max_len * V) one-hots
        return self.mlp(features).squeeze(-1)


class NGramMLP(nn.Module):
    """Counts of word unigrams, bigrams and trigrams (each n-gram hashed to one of `buckets`
    features) -> MLP. It sees local word order anywhere in the sentence.

    Chapter 7.
    """

    def __init__(
        self, vocab_size: int, buckets: int = 4096, hidden: int = 64, pad_id: int = 0
    ) -> None:
        super().__init__()
        self.vocab_size, self.buckets, self.pad_id = vocab_size, buckets, pad_id
        self.mlp = _mlp(buckets, hidden)

    def forward(self, ids: Tensor) -> Tensor:
        """ids (B, T) -> logits (B,)."""
        _check_ids(ids)
        real = padding_mask(ids, self.pad_id)[:, 0]  # (B, T): True = real token
        codes, keep = [], []
        for n in (1, 2, 3):
            if ids.shape[1] < n:
                break
            # (B, T-n+1): the order n is part of the key
            code = torch.full_like(ids[:, n - 1 :], n)
            ok = torch.ones_like(code, dtype=torch.bool)
            for j in range(n):
                # (B, T-n+1): the j-th word
                window = ids[:, j : ids.shape[1] - n + 1 + j]
                code = code * 1_000_003 + window
                ok = ok & real[:, j : ids.shape[1] - n + 1 + j]
            codes.append(code % self.buckets)
            keep.append(ok)
        index, weight = torch.cat(codes, 1), torch.cat(keep, 1).float()  # (B, n-grams)
        counts = torch.zeros(
            ids.shape[0], self.buckets, device=ids.device
        ).scatter_add_(1, index, weight)
        return self.mlp(counts).squeeze(-1)


class GRUClassifier(nn.Module):
    """Token embeddings -> a one-layer bidirectional GRU that reads the real tokens only
    (padding, wherever it stands, is skipped) -> mean of its outputs -> one logit. An
    order-aware sequence model without attention and without position vectors (chapter 7's
    study): it is the same function of a sentence wherever the sentence sits."""

    def __init__(
        self, vocab_size: int, d_model: int = 32, hidden: int = 32, pad_id: int = 0
    ) -> None:
        super().__init__()
        self.pad_id = pad_id
        self.token = nn.Embedding(vocab_size, d_model)
        self.gru = nn.GRU(d_model, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, 1)

    def forward(self, ids: Tensor) -> Tensor:
        """ids (B, T) -> logits (B,)."""
        _check_ids(ids)
        real = padding_mask(ids, self.pad_id)[:, 0]  # (B, T): True = real token
        # real tokens first, in their order (a stable sort moves the padding behind them)
        order = torch.sort((~real).to(torch.int8), dim=1, stable=True).indices  # (B, T)
        ids = ids.gather(1, order)
        lengths = real.sum(dim=1).clamp(min=1)  # (B,)
        packed = nn.utils.rnn.pack_padded_sequence(
            self.token(ids), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        out, _ = self.gru(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(
            out, batch_first=True, total_length=ids.shape[1]
        )  # (B, T, 2 * hidden), zeros after each sentence's end
        mask = padding_mask(ids, self.pad_id)  # (B, 1, T) after the reordering
        return self.head(masked_mean(out, mask)).squeeze(-1)  # (B,)


class AttentionClassifier(nn.Module):
    """Token embeddings (+ positions) -> `n_layers` of the package's `Block` (chapter 6, not
    causal, padded keys masked) -> LayerNorm -> mean over real tokens -> one logit.

    positions (`positional.POSITIONS`, not "alibi": it is causal): "learned" (a trained vector
    per position, added), "sinusoidal" (chapter 5's fixed table, added to the token embeddings,
    which are not scaled: `GPTConfig.scale_embeddings=False`), "rope" (queries and keys rotated
    in every block) or "none". `position_std`: with "learned", the standard deviation of the
    position table's initial values (None keeps `nn.Embedding`'s N(0, 1); GPT-2 uses 0.02).
    With "none" every block is permutation-equivariant and the mean
    permutation-invariant, so the logit depends only on the bag of words (chapter 5).
    """

    def __init__(
        self,
        vocab_size: int,
        positions: str = "learned",
        d_model: int = 32,
        n_layers: int = 2,
        n_head: int = 1,
        max_len: int = 64,
        pad_id: int = 0,
        position_std: float | None = None,
    ) -> None:
        super().__init__()
        self.pad_id, self.positions = pad_id, positions
        self.config = GPTConfig(
            vocab_size=vocab_size,
            block_size=max_len,
            n_layer=n_layers,
            n_head=n_head,
            n_embd=d_model,
            bias=True,
            causal=False,
            positions=positions,
            scale_embeddings=False,
        )
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = position_embedding(positions, max_len, d_model)
        if position_std is not None:
            if not isinstance(self.position, LearnedPositionalEmbedding):
                raise ValueError(
                    f"position_std applies to learned positions, not {positions!r}"
                )
            nn.init.normal_(self.position.embedding.weight, std=position_std)
        self.blocks = nn.ModuleList(Block(self.config) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, 1)

    def forward(
        self, ids: Tensor, return_attention: bool = False
    ) -> Tensor | tuple[Tensor, list[Tensor]]:
        """ids (B, T) -> logits (B,). With `return_attention`, also one (B, H, T, T) weight
        tensor per layer: the weights that layer used in this very pass, computed from its
        own input, with weight exactly 0 on padded keys (read by hooks, `attnbook.hooks`)."""
        if return_attention:  # this very call, its attention layers hooked
            return with_attention_weights(self, ids)
        _check_ids(ids)
        key_mask = padding_mask(ids, self.pad_id)  # (B, 1, T): True = real token
        x = embed_tokens(
            self.token, self.position, ids, scale=self.config.embedding_scale
        )  # (B, T, d)
        for block in self.blocks:
            x = block(x, key_mask=key_mask)  # (B, T, d)
        return self.head(masked_mean(self.norm(x), key_mask)).squeeze(-1)  # (B,)


MODEL_KINDS = (
    "bag of words",
    "position x word",
    "n-grams",
    "attention + learned positions",
    "attention + sinusoidal",
    "attention + RoPE",
    "attention without positions",
)


def build_model(kind: str, vocab_size: int, max_len: int = 64, **kwargs) -> nn.Module:
    """One of the models of chapter 7 (`MODEL_KINDS`, or "GRU" for `GRUClassifier`);
    `kwargs` go to its constructor."""
    if kind == "bag of words":
        return BagOfWordsMLP(vocab_size, **kwargs)
    if kind == "position x word":
        return PositionWordMLP(vocab_size, max_len=max_len, **kwargs)
    if kind == "n-grams":
        return NGramMLP(vocab_size, **kwargs)
    if kind == "GRU":
        return GRUClassifier(vocab_size, **kwargs)
    attention = {
        "attention + learned positions": "learned",
        "attention + sinusoidal": "sinusoidal",
        "attention + RoPE": "rope",
        "attention without positions": "none",
    }
    if kind in attention:
        return AttentionClassifier(
            vocab_size, positions=attention[kind], max_len=max_len, **kwargs
        )
    raise ValueError(f"unknown model kind {kind!r}; choose one of {MODEL_KINDS}")


def predict_logits(model: nn.Module, vocab: Vocabulary, texts: Sequence[str]) -> Tensor:
    """The model's logit for each sentence, (len(texts),), computed in eval mode.

    Chapter 7.
    """
    ids = encode_batch(texts, vocab)  # (B, T)
    with evaluating(model):
        return model(ids.to(next(model.parameters()).device)).cpu()  # (B,)


def predict(model: nn.Module, vocab: Vocabulary, texts: Sequence[str]) -> Tensor:
    """Probability that the white car is on the left, for each sentence: (len(texts),).

    Chapter 7.
    """
    return torch.sigmoid(predict_logits(model, vocab, texts))


def attention_maps(
    model: AttentionClassifier, vocab: Vocabulary, text: str
) -> tuple[list[str], list[Tensor]]:
    """The tokens of `text` and the (T, T) weights of every layer (head 0) of `model` on it,
    from one real forward pass (each layer's weights from that layer's own input), read by
    hooks on the attention layers as for every model of the course (`hooks`, chapter 7)."""
    ids = encode_batch([text], vocab)  # (1, T)
    with evaluating(model):
        weights = attention_weights(model, ids.to(next(model.parameters()).device))
    # T tokens, n_layers x (T, T)
    return vocab.decode(ids[0]), [w[0, 0].cpu() for w in weights]
