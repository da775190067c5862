"""Tokens of the car sentences (chapter 7): the tokenizer, bag of words, the vocabulary
(id 0 = padding) and padded id batches with their mask of real tokens.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

__all__ = ["PAD", "UNK", "tokenize", "bag_of_words", "Vocabulary", "encode_batch"]

PAD, UNK = "<pad>", "<unk>"


def tokenize(text: str) -> list[str]:
    """Lowercase, drop punctuation, split on whitespace: "The white car." -> [the, white, car].

    Chapter 7.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return re.sub(r"[^\w\s]", " ", text.lower()).split()


def bag_of_words(text: str) -> Counter:
    """The multiset of tokens of a sentence (what a bag-of-words model sees).

    Chapter 7.
    """
    return Counter(tokenize(text))


@dataclass
class Vocabulary:
    """Token <-> id. Id 0 is `<pad>`, id 1 is `<unk>` (any token not seen when building).

    Chapter 7.
    """

    itos: list[str] = field(default_factory=lambda: [PAD, UNK])

    def __post_init__(self) -> None:
        if self.itos[:2] != [PAD, UNK]:
            raise ValueError(
                f"a vocabulary starts with {PAD!r}, {UNK!r}; got {self.itos[:2]}"
            )
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[str]) -> Vocabulary:
        """Every token of `texts`, in sorted order after the two special tokens."""
        return cls([PAD, UNK] + sorted({t for text in texts for t in tokenize(text)}))

    pad_id, unk_id = 0, 1

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        return [self.stoi.get(t, self.unk_id) for t in tokenize(text)]

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[int(i)] for i in ids]


def encode_batch(
    texts: Sequence[str], vocab: Vocabulary, max_len: int | None = None
) -> Tensor:
    """Token ids padded on the right with `<pad>` = 0, (B, T) int64 (chapter 7). T is the
    longest sentence, or `max_len` (longer is an error). The key mask of the real tokens is
    `masks.padding_mask(ids, vocab.pad_id)`, (B, 1, T), as everywhere in the package."""
    if isinstance(texts, str):
        raise TypeError("encode_batch takes a list of sentences, not one string")
    encoded = [vocab.encode(t) for t in texts]
    if not encoded or any(len(e) == 0 for e in encoded):
        raise ValueError(
            "encode_batch needs at least one sentence, and every sentence a token"
        )
    longest = max(len(e) for e in encoded)
    T = longest if max_len is None else max_len
    if longest > T:
        raise ValueError(
            f"a sentence has {longest} tokens, more than max_len={max_len}"
        )
    ids = torch.full((len(encoded), T), vocab.pad_id, dtype=torch.long)  # (B, T)
    for b, e in enumerate(encoded):
        ids[b, : len(e)] = torch.tensor(e)
    return ids  # (B, T)
