"""The car classifier of chapter 7: is the white car on the left?

- `attnbook.cars.data`: phrasings in families, the pair generator (every pair bag-of-words
  identical, labels from the scene), JSON; `attnbook.cars.splits`: the three splits;
- `attnbook.cars.vocab`: tokens, bag of words, the vocabulary, padded id batches;
- `attnbook.cars.models`: bag-of-words, position x word and n-gram MLPs, the attention
  classifier built from the package's transformer block, predictions and attention maps;
- `attnbook.cars.experiment`: one model x split x seed, trained with `attnbook.train`;
- `attnbook.cars.study`: the study's runs (offset tests, validation split, `<unk>`
  shares, one run measured), `attnbook.cars.design`: its data (new sentences per seed, the
  family-balanced length split, tuning sentences no study seed uses),
  `attnbook.cars.uncertainty`: intervals over seeds and test pairs, an exact sign test;
  `attnbook.cars.shipped`: the study's RoPE classifier of seed 0, trained once and shipped;
  imported by their module names.

Every public name is re-exported here: `from attnbook.cars import generate_pairs` works.
"""

from .data import (
    ADJECTIVES,
    COLOURS,
    DISTRACTOR_COLOURS,
    DISTRACTORS,
    FAMILIES,
    NOUNS,
    PHRASINGS,
    VERBS,
    WHERE,
    Sentence,
    generate_pairs,
    load_sentences,
    mirror_phrasing,
    render,
    save_sentences,
)
from .splits import SPLITS, make_split, overlap_share, split_pairs
from .vocab import PAD, UNK, Vocabulary, bag_of_words, encode_batch, tokenize
from .experiment import (
    CHAPTER_CONFIG,
    CHAPTER_GRID,
    LONG_GRID,
    RunSummary,
    SeedRun,
    accuracy,
    load_chapter_grid,
    run_grid,
    run_seed,
    with_steps,
    summarise,
    train_classifier,
)
from .models import (
    MODEL_KINDS,
    POSITIONS,
    AttentionClassifier,
    BagOfWordsMLP,
    GRUClassifier,
    NGramMLP,
    PositionWordMLP,
    attention_maps,
    bag_of_words_counts,
    build_model,
    masked_mean,
    predict,
    predict_logits,
)

__all__ = [
    "ADJECTIVES",
    "COLOURS",
    "DISTRACTOR_COLOURS",
    "DISTRACTORS",
    "FAMILIES",
    "NOUNS",
    "PAD",
    "PHRASINGS",
    "SPLITS",
    "UNK",
    "VERBS",
    "WHERE",
    "Sentence",
    "Vocabulary",
    "bag_of_words",
    "encode_batch",
    "generate_pairs",
    "load_sentences",
    "make_split",
    "mirror_phrasing",
    "overlap_share",
    "render",
    "save_sentences",
    "split_pairs",
    "tokenize",
    "CHAPTER_CONFIG",
    "CHAPTER_GRID",
    "LONG_GRID",
    "load_chapter_grid",
    "with_steps",
    "RunSummary",
    "SeedRun",
    "run_grid",
    "accuracy",
    "run_seed",
    "summarise",
    "train_classifier",
    "MODEL_KINDS",
    "POSITIONS",
    "AttentionClassifier",
    "BagOfWordsMLP",
    "GRUClassifier",
    "NGramMLP",
    "PositionWordMLP",
    "attention_maps",
    "bag_of_words_counts",
    "build_model",
    "masked_mean",
    "predict",
    "predict_logits",
]
