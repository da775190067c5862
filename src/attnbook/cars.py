"""The car classifier: a task where word order decides the label (chapter 7).

Every sentence describes a white car and a black car. Its label is 1 when the white car is on
the left and 0 when the black car is. Sentences come in *pairs* — one positive, one negative —
made of exactly the same words, so a model that only counts words (bag of words) sees the two
sentences of a pair as the same input and cannot beat 50 % on them.

The module holds everything chapter 7 needs:

- data: `generate_pairs` (a seeded generator over many phrasings), `save_sentences` /
  `load_sentences` (JSON), `tokenize`, `Vocabulary`, `encode_batch` (padding + key mask),
  `split_pairs` (a train/test split that never separates a pair), `make_loaders`;
- models: `BagOfWordsMLP`, `AttentionClassifier` (learned token and position embeddings,
  single-head self-attention blocks from `attnbook.multihead`, masked mean pooling, one logit)
  and the same classifier with ``positions=False``;
- training: `train_classifier`, `evaluate`, and `run_seed`, which trains one model for one seed;
  `predict` and `attention_maps` look at a trained model.

Labels are derived from the scene a sentence describes (which colour is on the left), never
from the wording: every phrasing is written in terms of "the car on the left" and "the car on
the right", and the label is read off the scene it is rendered from.
"""
from __future__ import annotations

import json
import math
import random
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, TensorDataset

from .masks import padding_mask
from .multihead import MultiHeadAttention
from .positional import LearnedPositionalEmbedding

__all__ = [
    "Sentence", "PHRASINGS", "render", "mirror_phrasing", "generate_pairs", "save_sentences",
    "load_sentences", "bag_of_words", "tokenize", "Vocabulary", "PAD", "UNK", "encode_batch",
    "split_pairs", "make_loaders", "bag_of_words_counts", "masked_mean", "BagOfWordsMLP",
    "AttentionBlock", "AttentionClassifier", "TrainConfig", "TrainResult", "train_classifier",
    "evaluate", "build_model", "run_seed", "SeedRun", "MODEL_KINDS", "predict", "predict_logits",
    "attention_maps",
]

# ----------------------------------------------------------------------------- phrasings
# A phrasing names the colour of the car on the left {L} and of the car on the right {R};
# {V} is a verb and {D1}, {D2} are colours of other objects (distractors). Rendering a
# phrasing from a scene (left colour, right colour) cannot get the label wrong: the label is
# `left == "white"` whatever the words are. Every phrasing names a side explicitly ("left",
# "right", "leftmost", ...), so its mirror image — swap those words and swap {L} with {R} —
# describes the same scene and is a phrasing too (`mirror_phrasing`): "the {L} car is to the
# left of the {R} car" becomes "the {R} car is to the right of the {L} car".
PHRASINGS: dict[str, str] = {
    "on_the_sides": "the {L} car {V} on the left and the {R} car {V} on the right",
    "to_the_side_of": "the {L} car {V} to the left of the {R} car",
    "side_first": "to the left of the {R} car {V} the {L} car",
    "listed": "listed left to right is a {L} car then {R} car",
    "followed_by": "from left to right a {L} car is followed by a {R} car",
    "frame_and_border": "within a {D1} frame and {D2} border the {L} car remains on the left "
                        "while the {R} car remains on the right",
    "car_on_the_side": "the car on the left is {L} and the car on the right is {R}",
    "leftmost": "the leftmost of the two cars is {L} and the other one is {R}",
}
_SIDE_WORDS = {"left": "right", "right": "left", "leftmost": "rightmost", "rightmost": "leftmost"}
COLOURS = ("white", "black")
VERBS = ("is", "sits", "stands", "waits")
DISTRACTOR_COLOURS = ("white", "black", "red", "blue", "grey")
# Phrases about other coloured objects, put after the description; they change no label.
CONTEXTS = (
    "within a {D1} frame and {D2} border",
    "in front of a {D1} house with a {D2} door",
    "under a {D1} sky",
    "next to a {D1} wall and a {D2} fence",
    "on a {D1} road with {D2} lines",
)


def mirror_phrasing(phrasing: str) -> str:
    """The mirror image of a phrasing: side words swapped (left <-> right, ...) and {L} <-> {R}.

    It describes the same scene as the original: rendered from one scene, both give sentences
    with the same label.
    """
    words = [_SIDE_WORDS.get(w, w) for w in phrasing.split(" ")]
    return " ".join(words).replace("{L}", "{TMP}").replace("{R}", "{L}").replace("{TMP}", "{R}")


def _balanced(phrasing: str) -> bool:
    """True if swapping the side words keeps the multiset of words (as many 'left' as 'right')."""
    counts = Counter(phrasing.split(" "))
    return all(counts[a] == counts[b] for a, b in _SIDE_WORDS.items())


def render(phrasing: str, left: str, right: str, *, verb: str = "is",
           distractors: tuple[str, str] = ("red", "blue"), context: str = "") -> str:
    """The sentence for a scene: the car on the left is `left`, the car on the right `right`.

    `context` (one of `CONTEXTS`, or empty) is put after the description. The sentence is
    capitalised and ends with a full stop, so that `tokenize` has something to do.
    """
    if {left, right} != set(COLOURS):
        raise ValueError(f"a scene has one white and one black car, got left={left!r}, right={right!r}")
    fill = {"L": left, "R": right, "V": verb, "D1": distractors[0], "D2": distractors[1]}
    text = phrasing.format(**fill)
    if context:
        text += " " + context.format(**fill)
    return text[0].upper() + text[1:] + "."


@dataclass(frozen=True)
class Sentence:
    """One labelled sentence. `left` is the colour of the car on the left (the scene) and
    `label` = 1 if that car is white. `pair` numbers the pair the sentence belongs to;
    `phrasing` names the phrasing it was rendered from ("/mirror": its mirror image)."""

    text: str
    label: int
    pair: int
    left: str
    phrasing: str


def _label(left: str) -> int:
    return int(left == "white")


def generate_pairs(n_pairs: int = 264, seed: int = 0, context_rate: float = 0.8) -> list[Sentence]:
    """`n_pairs` pairs of car sentences (chapter 7), reproducible for a given `seed`.

    Each pair is (positive, negative) with the same phrasing, verb and distractors. Either the
    two car colours are swapped ("the white car is to the left of the black car" / "the black
    car is to the left of the white car"), or, for phrasings with as many "left" as "right",
    the mirror phrasing describes the mirrored scene ("listed left to right is a white car then
    black car" / "listed right to left is a white car then black car"). Both sentences of a
    pair are made of the same words (checked here), every phrasing gets an equal share of the
    pairs, a fraction `context_rate` of them get a distractor phrase, and no sentence occurs
    twice.
    """
    if not isinstance(n_pairs, int) or n_pairs <= 0:
        raise ValueError(f"n_pairs must be a positive int, got {n_pairs!r}")
    if not 0.0 <= context_rate <= 1.0:
        raise ValueError(f"context_rate must be between 0 and 1, got {context_rate}")
    rng = random.Random(seed)
    names = sorted(PHRASINGS)
    schedule = (names * (n_pairs // len(names) + 1))[:n_pairs]  # equal shares ...
    rng.shuffle(schedule)  # ... in a seeded random order
    seen: set[str] = set()
    sentences: list[Sentence] = []
    for k, name in enumerate(schedule):
        for _ in range(1000):
            pair = _draw_pair(rng, name, context_rate)
            if not seen.intersection(text for text, _, _ in pair):
                break
        else:
            raise RuntimeError(f"could not find {n_pairs} distinct pairs; ask for fewer")
        seen.update(text for text, _, _ in pair)
        sentences += [Sentence(text, _label(left), k, left, nm) for text, left, nm in pair]
    return sentences


def _draw_pair(rng: random.Random, name: str, context_rate: float) -> list[tuple[str, str, str]]:
    """One (positive, negative) pair of phrasing `name`: [(text, left colour, phrasing name)]."""
    phrasing = PHRASINGS[name]
    if rng.random() < 0.5:
        phrasing, name = mirror_phrasing(phrasing), name + "/mirror"
    options: dict = dict(
        verb=rng.choice(VERBS),
        distractors=(rng.choice(DISTRACTOR_COLOURS), rng.choice(DISTRACTOR_COLOURS)),
        context=rng.choice(CONTEXTS) if "{D1}" not in phrasing and rng.random() < context_rate else "",
    )
    left = rng.choice(COLOURS)
    right = "black" if left == "white" else "white"
    first = render(phrasing, left, right, **options)
    if _balanced(phrasing) and rng.random() < 0.5:
        # the mirror phrasing of the mirrored scene: the same words in the same places, only
        # the side words swapped
        second = render(mirror_phrasing(phrasing), right, left, **options)
        second_name = name.removesuffix("/mirror") if name.endswith("/mirror") else name + "/mirror"
    else:
        second = render(phrasing, right, left, **options)  # the car colours swapped
        second_name = name
    if bag_of_words(first) != bag_of_words(second):  # a bug in a phrasing, not bad luck
        raise AssertionError(f"pair is not bag-of-words identical: {first!r} / {second!r}")
    pair = [(first, left, name), (second, right, second_name)]
    return sorted(pair, key=lambda item: -_label(item[1]))  # positive first


def save_sentences(sentences: Sequence[Sentence], path: str | Path) -> None:
    """Write the sentences to a JSON file (a list of objects, one per sentence)."""
    Path(path).write_text(json.dumps([asdict(s) for s in sentences], indent=1) + "\n")


def load_sentences(path: str | Path) -> list[Sentence]:
    """Read sentences written by `save_sentences`; a clear error for anything else."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no sentence file at {path}")
    try:
        raw = json.loads(path.read_text())
        return [Sentence(**item) for item in raw]
    except (json.JSONDecodeError, TypeError) as err:
        raise ValueError(f"{path} is not a sentence file written by save_sentences: {err}") from None


# ----------------------------------------------------------------------------- tokens
PAD, UNK = "<pad>", "<unk>"


def tokenize(text: str) -> list[str]:
    """Lowercase, drop punctuation, split on whitespace: "The white car." -> [the, white, car]."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return re.sub(r"[^\w\s]", " ", text.lower()).split()


def bag_of_words(text: str) -> Counter:
    """The multiset of tokens of a sentence (what a bag-of-words model sees)."""
    return Counter(tokenize(text))


@dataclass
class Vocabulary:
    """Token <-> id. Id 0 is `<pad>`, id 1 is `<unk>` (any token not seen when building)."""

    itos: list[str] = field(default_factory=lambda: [PAD, UNK])

    def __post_init__(self) -> None:
        if self.itos[:2] != [PAD, UNK]:
            raise ValueError(f"a vocabulary starts with {PAD!r}, {UNK!r}; got {self.itos[:2]}")
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[str]) -> Vocabulary:
        """Every token of `texts`, in sorted order after the two special tokens."""
        tokens = sorted({t for text in texts for t in tokenize(text)})
        return cls([PAD, UNK] + tokens)

    @property
    def pad_id(self) -> int:
        return 0

    @property
    def unk_id(self) -> int:
        return 1

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        return [self.stoi.get(t, self.unk_id) for t in tokenize(text)]

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[int(i)] for i in ids]


def encode_batch(texts: Sequence[str], vocab: Vocabulary, max_len: int | None = None
                 ) -> tuple[Tensor, Tensor]:
    """Token ids padded to a common length, and the mask of real tokens.

    Returns `ids` (B, T) int64, padded with `<pad>` = 0 on the right, and `mask` (B, T) bool,
    True for a real token. T is the longest sentence, or `max_len` (longer sentences are an
    error, never silently cut).
    """
    if isinstance(texts, str):
        raise TypeError("encode_batch takes a list of sentences, not one string")
    encoded = [vocab.encode(t) for t in texts]
    if any(len(e) == 0 for e in encoded):
        raise ValueError("a sentence has no tokens")
    longest = max(len(e) for e in encoded)
    T = longest if max_len is None else max_len
    if longest > T:
        raise ValueError(f"a sentence has {longest} tokens, more than max_len={max_len}")
    ids = torch.full((len(encoded), T), vocab.pad_id, dtype=torch.long)  # (B, T)
    for b, e in enumerate(encoded):
        ids[b, : len(e)] = torch.tensor(e)
    return ids, ids != vocab.pad_id  # (B, T), (B, T)


# ----------------------------------------------------------------------------- split
def split_pairs(pair_ids: Sequence[int], test_fraction: float = 0.2, seed: int = 0
                ) -> tuple[list[int], list[int]]:
    """Split sentence indices into train and test so that no pair is on both sides (chapter 7).

    `pair_ids[i]` is the pair of sentence i. round(test_fraction * number of pairs) pairs,
    chosen at random with `seed`, go to the test set. Returns sorted (train, test) index lists.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    pairs = sorted(set(int(p) for p in pair_ids))
    if len(pairs) < 2:
        raise ValueError(f"need at least two pairs to split, got {len(pairs)}")
    n_test = round(test_fraction * len(pairs))
    n_test = min(max(n_test, 1), len(pairs) - 1)  # both sides non-empty
    test_pairs = set(random.Random(seed).sample(pairs, n_test))
    train = [i for i, p in enumerate(pair_ids) if int(p) not in test_pairs]
    test = [i for i, p in enumerate(pair_ids) if int(p) in test_pairs]
    return train, test


def make_loaders(sentences: Sequence[Sentence], vocab: Vocabulary, train_idx: Sequence[int],
                 test_idx: Sequence[int], batch_size: int = 64, seed: int = 0
                 ) -> tuple[DataLoader, DataLoader]:
    """DataLoaders of (ids (B, T), labels (B,) float) batches (chapter 7). The training one is
    shuffled with a generator seeded by `seed`; each batch is cut to its longest sentence."""
    ids, _ = encode_batch([s.text for s in sentences], vocab)  # (N, T)
    labels = torch.tensor([float(s.label) for s in sentences])  # (N,)
    train = TensorDataset(ids[list(train_idx)], labels[list(train_idx)])
    test = TensorDataset(ids[list(test_idx)], labels[list(test_idx)])
    gen = torch.Generator().manual_seed(seed)
    return (DataLoader(train, batch_size=batch_size, shuffle=True, generator=gen, collate_fn=_trim),
            DataLoader(test, batch_size=256, collate_fn=_trim))


def _trim(batch: list[tuple[Tensor, Tensor]]) -> tuple[Tensor, Tensor]:
    """Stack a batch and drop the columns that are padding (id 0) in every sentence of it."""
    ids = torch.stack([b[0] for b in batch])  # (B, T_all)
    labels = torch.stack([b[1] for b in batch])  # (B,)
    T = int((ids != 0).sum(dim=1).max())  # longest sentence of this batch (right padding)
    return ids[:, :T], labels  # (B, T), (B,)


# ----------------------------------------------------------------------------- models
def masked_mean(x: Tensor, mask: Tensor) -> Tensor:
    """Masked mean pooling (chapter 7): the mean of the token vectors over real tokens only.

    x: (B, T, D); mask: (B, T) bool, True = real token. Returns (B, D). Padded positions
    neither enter the sum nor the count; a row without real tokens gives zeros.
    """
    if x.dim() != 3 or mask.shape != x.shape[:2]:
        raise ValueError(f"x must be (B, T, D) and mask (B, T); got {tuple(x.shape)} and {tuple(mask.shape)}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be boolean (True = real token), got {mask.dtype}")
    m = mask.unsqueeze(-1).to(x.dtype)  # (B, T, 1): broadcasts over the features
    total = (x * m).sum(dim=1)  # (B, D)
    count = m.sum(dim=1).clamp(min=1.0)  # (B, 1)
    return total / count  # (B, D)


def bag_of_words_counts(ids: Tensor, vocab_size: int, pad_id: int = 0) -> Tensor:
    """(B, T) token ids -> (B, vocab_size) counts of each token (padding not counted)."""
    counts = torch.zeros(ids.shape[0], vocab_size, device=ids.device)  # (B, V)
    counts.scatter_add_(1, ids, torch.ones_like(ids, dtype=counts.dtype))
    counts[:, pad_id] = 0.0
    return counts


class BagOfWordsMLP(nn.Module):
    """Word counts -> MLP -> one logit. It sees a sentence as a multiset of words."""

    def __init__(self, vocab_size: int, hidden: int = 64, pad_id: int = 0) -> None:
        super().__init__()
        self.vocab_size, self.pad_id = vocab_size, pad_id
        self.mlp = nn.Sequential(nn.Linear(vocab_size, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, ids: Tensor) -> Tensor:
        """ids (B, T) -> logits (B,)."""
        return self.mlp(bag_of_words_counts(ids, self.vocab_size, self.pad_id)).squeeze(-1)  # (B,)


class AttentionBlock(nn.Module):
    """A pre-LayerNorm transformer block with ONE attention head:
    x + attention(LN(x)), then + MLP(LN(x)). Also returns the attention weights it used."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads=1)  # single head: d_k = d_model
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x: Tensor, key_mask: Tensor) -> tuple[Tensor, Tensor]:
        """x (B, T, d_model), key_mask (B, 1, T) -> x (B, T, d_model), weights (B, T, T)."""
        mixed, weights = self.attn(self.norm1(x), mask=key_mask)  # (B, T, d), (B, 1, T, T)
        x = x + mixed  # residual
        x = x + self.mlp(self.norm2(x))  # residual
        return x, weights.squeeze(1)  # drop the head axis: (B, T, T)


class AttentionClassifier(nn.Module):
    """Token embeddings + learned position embeddings -> `n_layers` single-head attention
    blocks -> LayerNorm -> mean over the real tokens -> one logit (chapter 7).

    With ``positions=False`` the model has no position information at all: the blocks are
    then permutation-equivariant and the mean is permutation-invariant (chapter 5), so the
    logit depends only on the bag of words.
    """

    def __init__(self, vocab_size: int, d_model: int = 48, n_layers: int = 4, d_ff: int = 96,
                 max_len: int = 64, positions: bool = True, pad_id: int = 0) -> None:
        super().__init__()
        if min(vocab_size, d_model, n_layers, d_ff, max_len) <= 0:
            raise ValueError("vocab_size, d_model, n_layers, d_ff and max_len must be positive")
        self.pad_id, self.positions = pad_id, positions
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = LearnedPositionalEmbedding(max_len, d_model) if positions else None
        self.blocks = nn.ModuleList(AttentionBlock(d_model, d_ff) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, 1)

    def forward(self, ids: Tensor, return_attention: bool = False
                ) -> Tensor | tuple[Tensor, list[Tensor]]:
        """ids (B, T) -> logits (B,). With `return_attention`, also a list with one (B, T, T)
        weight matrix per layer: the weights that layer used in this very forward pass, from
        its own input, with the padded keys masked (weight exactly 0)."""
        if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.dtype != torch.long:
            shape = tuple(ids.shape) if isinstance(ids, Tensor) else type(ids).__name__
            raise ValueError(f"ids must be a (B, T) tensor of int64 token ids, got {shape}")
        key_mask = padding_mask(ids, self.pad_id)  # (B, 1, T): True = real token
        x = self.token(ids)  # (B, T, d_model)
        if self.position is not None:
            x = self.position(x)  # x_t + p_t for t = 0 .. T-1
        weights = []
        for block in self.blocks:
            x, w = block(x, key_mask)  # (B, T, d_model), (B, T, T)
            weights.append(w)
        pooled = masked_mean(self.norm(x), key_mask.squeeze(1))  # (B, d_model)
        logits = self.head(pooled).squeeze(-1)  # (B,)
        return (logits, weights) if return_attention else logits


MODEL_KINDS = ("bag of words", "attention", "attention without positions")


def build_model(kind: str, vocab_size: int, **kwargs) -> nn.Module:
    """One of the three models of chapter 7 (`MODEL_KINDS`); `kwargs` go to its constructor."""
    if kind == "bag of words":
        return BagOfWordsMLP(vocab_size, **kwargs)
    if kind == "attention":
        return AttentionClassifier(vocab_size, **kwargs)
    if kind == "attention without positions":
        return AttentionClassifier(vocab_size, positions=False, **kwargs)
    raise ValueError(f"unknown model kind {kind!r}; choose one of {MODEL_KINDS}")


@torch.no_grad()
def predict_logits(model: nn.Module, vocab: Vocabulary, texts: Sequence[str]) -> Tensor:
    """The model's logit for each sentence, (len(texts),), computed in eval mode."""
    device = next(model.parameters()).device
    ids, _ = encode_batch(texts, vocab)  # (B, T)
    was_training = model.training
    model.eval()
    logits = model(ids.to(device)).cpu()  # (B,)
    model.train(was_training)
    return logits


def predict(model: nn.Module, vocab: Vocabulary, texts: Sequence[str]) -> Tensor:
    """Probability that the white car is on the left, for each sentence: (len(texts),)."""
    return torch.sigmoid(predict_logits(model, vocab, texts))


@torch.no_grad()
def attention_maps(model: AttentionClassifier, vocab: Vocabulary, text: str
                   ) -> tuple[list[str], list[Tensor]]:
    """The tokens of `text` and the (T, T) attention weights of every layer of `model` on it,
    from one real forward pass (each layer's weights from that layer's own input)."""
    device = next(model.parameters()).device
    ids, _ = encode_batch([text], vocab)  # (1, T)
    was_training = model.training
    model.eval()
    _, weights = model(ids.to(device), return_attention=True)
    model.train(was_training)
    return vocab.decode(ids[0]), [w[0].cpu() for w in weights]  # T tokens, n_layers x (T, T)


# ----------------------------------------------------------------------------- training
@dataclass
class TrainConfig:
    """Hyper-parameters of `train_classifier` (the defaults are the ones chapter 7 uses)."""

    epochs: int = 40
    lr: float = 3e-3
    weight_decay: float = 0.01
    batch_size: int = 64
    warmup: float = 0.1  # fraction of the steps over which the learning rate rises linearly;
    # after it the learning rate follows a cosine down to 0


@dataclass
class TrainResult:
    """What `train_classifier` returns: final accuracies and loss, and the per-epoch history."""

    train_accuracy: float
    test_accuracy: float
    test_loss: float
    losses: list[float]  # mean training loss of each epoch
    test_accuracies: list[float]  # test accuracy after each epoch
    seconds: float  # wall-clock time of the training
    cpu_seconds: float  # CPU time of this process during the training (all its threads)


@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader) -> tuple[float, float]:
    """(accuracy, mean binary cross-entropy) of `model` on `loader`. Batches are moved to the
    device the model is on (never the model to the batches)."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    correct, loss_sum, n = 0, 0.0, 0
    for ids, labels in loader:
        ids, labels = ids.to(device), labels.to(device)
        logits = model(ids)  # (B,)
        loss_sum += float(nn.functional.binary_cross_entropy_with_logits(logits, labels, reduction="sum"))
        correct += int(((logits > 0).float() == labels).sum())
        n += len(labels)
    model.train(was_training)
    return correct / n, loss_sum / n


def train_classifier(model: nn.Module, train_loader: DataLoader, test_loader: DataLoader,
                     config: TrainConfig | None = None, device: torch.device | str = "cpu"
                     ) -> TrainResult:
    """Train with AdamW on the binary cross-entropy of the logits (chapter 7), evaluating on
    the test loader after each epoch.

    The model is moved to `device` and every batch follows it there. The learning rate rises
    linearly for the first `config.warmup` of the steps, then follows a cosine down to zero.
    For a reproducible run, seed torch before building the model and give the training
    loader a seeded generator (`make_loaders` does).
    """
    config = config or TrainConfig()
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    total_steps = config.epochs * len(train_loader)
    warmup_steps = max(1, round(config.warmup * total_steps))

    def lr_factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
    loss_fn = nn.BCEWithLogitsLoss()
    losses, test_accuracies = [], []
    start, start_cpu = time.perf_counter(), time.process_time()
    for _ in range(config.epochs):
        total, n = 0.0, 0
        for ids, labels in train_loader:
            ids, labels = ids.to(device), labels.to(device)
            loss = loss_fn(model(ids), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(labels)
            n += len(labels)
        losses.append(total / n)
        test_accuracies.append(evaluate(model, test_loader)[0])
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    train_accuracy, _ = evaluate(model, train_loader)
    test_accuracy, test_loss = evaluate(model, test_loader)
    return TrainResult(train_accuracy, test_accuracy, test_loss, losses, test_accuracies,
                       seconds, cpu_seconds)


@dataclass
class SeedRun:
    """One model trained for one seed by `run_seed`, with what it was trained on."""

    kind: str
    seed: int
    model: nn.Module
    vocab: Vocabulary
    train_idx: list[int]
    test_idx: list[int]
    result: TrainResult


def run_seed(kind: str, sentences: Sequence[Sentence], seed: int, test_fraction: float = 0.2,
             config: TrainConfig | None = None, device: torch.device | str = "cpu",
             **model_kwargs) -> SeedRun:
    """The whole experiment for one model and one seed: split the pairs with `seed`, build
    the vocabulary from the training sentences only, build a `kind` model with weights
    seeded by `seed`, and train it (`train_classifier`)."""
    train_idx, test_idx = split_pairs([s.pair for s in sentences], test_fraction, seed)
    vocab = Vocabulary.build(sentences[i].text for i in train_idx)
    config = config or TrainConfig()
    train_loader, test_loader = make_loaders(sentences, vocab, train_idx, test_idx,
                                             config.batch_size, seed)
    torch.manual_seed(seed)
    model = build_model(kind, len(vocab), **model_kwargs)
    result = train_classifier(model, train_loader, test_loader, config, device)
    return SeedRun(kind, seed, model, vocab, train_idx, test_idx, result)
