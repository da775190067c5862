"""Tests of attnbook.cars.study and the GRU baseline (chapter 7's third version)."""

import pytest
import torch

from attnbook.cars import (
    GRUClassifier,
    AttentionClassifier,
    Vocabulary,
    build_model,
    encode_batch,
    generate_pairs,
    make_split,
    tokenize,
)
from attnbook.cars.experiment import accuracy
from attnbook.cars.study import (
    LR_GRID,
    STUDY_MODELS,
    length_split,
    shift_right,
    study_config,
    train_and_measure,
    unk_share,
    validation_split,
)


@pytest.fixture(scope="module")
def sentences():
    return generate_pairs()


def test_length_split_tests_only_sentences_longer_than_any_training_one(sentences):
    train, test, max_len = length_split(sentences)
    n = [len(tokenize(s.text)) for s in sentences]
    assert max(n[i] for i in train) == max_len < min(n[i] for i in test)
    assert sorted(train + test) == list(range(len(sentences)))
    assert 0 < len(test) <= 0.2 * len(sentences)
    assert not {sentences[i].pair for i in train} & {sentences[i].pair for i in test}
    with pytest.raises(ValueError, match="test_fraction"):
        length_split(sentences, 1.5)


def test_validation_split_cuts_the_training_pairs_only(sentences):
    train, test = make_split("random pairs", sentences, 3)
    fit, val = validation_split(sentences, train, 3)
    assert sorted(fit + val) == sorted(train) and not set(val) & set(test)
    assert not {sentences[i].pair for i in fit} & {sentences[i].pair for i in val}


def test_shift_right_moves_every_word_and_keeps_the_length_limit():
    ids = torch.tensor([[5, 6, 7, 0], [8, 9, 0, 0]])
    moved = shift_right(ids, 2)
    assert moved.tolist() == [[0, 0, 5, 6, 7, 0], [0, 0, 8, 9, 0, 0]]
    assert shift_right(ids, 1, max_len=4).tolist() == [[0, 5, 6, 7], [0, 8, 9, 0]]
    with pytest.raises(ValueError, match="longer than 4"):
        shift_right(ids, 2, max_len=4)


def test_unk_share_counts_test_words_unseen_in_training(sentences):
    share, words = unk_share(sentences, [0], [1])  # twins: the same words
    assert share == 0 and not words
    train, test = make_split("held-out phrasings", sentences, 0, held_out=["followed"])
    share, words = unk_share(sentences, train, test)
    assert 0 < share < 0.3 and "followed" in words


def test_gru_and_relative_models_do_not_see_where_padding_stands(sentences):
    """The GRU skips padding and RoPE and n-grams have no absolute positions: moving a
    sentence right by padding leaves their logit unchanged; learned positions change it."""
    vocab = Vocabulary.build(s.text for s in sentences)
    ids = encode_batch([s.text for s in sentences[:6]], vocab)
    for kind in ("GRU", "attention + RoPE", "n-grams", "attention + learned positions"):
        torch.manual_seed(0)
        model = build_model(kind, len(vocab)).eval()
        with torch.no_grad():
            same = torch.allclose(model(ids), model(shift_right(ids, 5)), atol=1e-5)
        assert same == (kind != "attention + learned positions"), kind
    assert isinstance(build_model("GRU", 10), GRUClassifier)


def test_position_std_sets_the_learned_table_only():
    torch.manual_seed(0)
    small = AttentionClassifier(50, "learned", position_std=0.02)
    assert small.position.embedding.weight.std() < 0.03
    assert AttentionClassifier(50, "learned").position.embedding.weight.std() > 0.5
    with pytest.raises(ValueError, match="learned positions"):
        AttentionClassifier(50, "rope", position_std=0.02)


def test_train_and_measure_reports_every_accuracy_and_is_reproducible(sentences):
    train, test = make_split("random pairs", sentences, 0)
    config = study_config(LR_GRID[1], 40)
    out = train_and_measure(
        "n-grams", sentences, train, {"test": test}, 0, config, (4,)
    )
    assert (
        out["test_shift4_accuracy"] == out["test_inrange4_accuracy"]
    )  # n-grams: no place
    assert 0 < out["test_inrange4_n"] <= len(test)
    again = train_and_measure(
        "n-grams", sentences, train, {"test": test}, 0, config, (4,)
    )
    assert {k: v for k, v in out.items() if k != "seconds"} == {
        k: v for k, v in again.items() if k != "seconds"
    }
    assert set(STUDY_MODELS) >= {"GRU", "attention + RoPE", "n-grams"}
    with pytest.raises(ValueError, match="unknown model"):
        train_and_measure("lstm", sentences, train, {}, 0, config)
    with pytest.raises(ValueError, match="positive"):
        study_config(0.0, 10)


def test_accuracy_keeps_left_padding():
    """`accuracy` trims trailing padding only: a left-padded batch keeps its words."""
    from attnbook.cars.experiment import _trim

    ids = torch.tensor([[0, 0, 3, 4, 0], [0, 0, 5, 0, 0]])
    assert torch.equal(_trim(ids), ids[:, :4])  # the leading padding stays
    left_only = torch.tensor([[0, 0, 3], [0, 4, 5]])
    assert torch.equal(_trim(left_only), left_only)
    torch.manual_seed(0)
    model = build_model("n-grams", 20).eval()
    labels = torch.tensor([1.0, 0.0])
    with torch.no_grad():
        logits = model(ids[:, :4])
    assert accuracy(model, ids, labels) == float(
        ((logits > 0).float() == labels).float().mean()
    )


def test_the_stored_study_is_complete():
    """Chapter 7 reads benchmark_cars_study.json: rates tuned from the grid, every model on
    random pairs and the length split, the family models on every family, each seed."""
    from attnbook.cars import FAMILIES
    from attnbook.data import benchmark_record

    record = benchmark_record("cars_study")
    assert record["command"].startswith("python benchmarks/cars_study.py tune")
    assert {"python", "torch", "numpy"} <= record["versions"].keys()
    results = record["results"]
    assert set(results["lr"]) == set(STUDY_MODELS)
    assert all(lr in LR_GRID for lr in results["lr"].values())
    seeds = {r["seed"] for r in results["runs"]}
    assert len(seeds) >= 3
    keys = {(r["model"], r["split"], r["seed"]) for r in results["runs"]}
    for seed in seeds:
        for model in STUDY_MODELS:
            assert (model, "random pairs", seed) in keys
            assert (model, "longer sentences", seed) in keys
        for family in FAMILIES:
            assert ("attention + RoPE", f"family {family}", seed) in keys
            assert ("n-grams", f"family {family}", seed) in keys


def test_paired_differences_match_runs_by_key():
    from attnbook.cars.study import paired_differences

    model = {("a", 0): 0.9, ("a", 1): 0.6, ("a", 2): 0.7, ("b", 0): 0.5}
    base = {("a", 0): 0.8, ("a", 1): 0.7, ("a", 2): 0.7}
    p = paired_differences(model, base)  # ("b", 0) has no match
    assert p.n == 3 and (p.wins, p.losses) == (1, 1)
    assert abs(p.mean) < 1e-12 and abs(p.std - 0.1) < 1e-9
    assert p.signs() == "1 of 3 ahead, 1 behind"
    with pytest.raises(ValueError, match="no matched runs"):
        paired_differences({("x", 0): 1.0}, base)
