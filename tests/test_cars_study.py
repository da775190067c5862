"""Tests of attnbook.cars.study and the GRU baseline (chapter 7's study)."""

from collections import Counter

import pytest
import torch

from attnbook.cars import (
    FAMILIES,
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
from attnbook.cars.design import (
    LENGTH_MAX_TRAIN,
    LENGTH_TEST_PAIRS,
    LENGTH_TRAIN_PAIRS,
    PREFIXES,
    STUDY_SEEDS,
    balanced_length_split,
    prefixed_descriptions,
    study_sentences,
    tuning_sentences,
)
from attnbook.cars.study import (
    LR_GRID,
    STUDY_MODELS,
    shift_right,
    study_config,
    train_and_measure,
    unk_share,
    validation_split,
)


@pytest.fixture(scope="module")
def sentences():
    return generate_pairs()


def test_length_split_balances_families_and_tests_only_longer_sentences():
    sentences, train, test = balanced_length_split(0)
    n = [len(tokenize(s.text)) for s in sentences]
    assert max(n[i] for i in train) <= LENGTH_MAX_TRAIN < min(n[i] for i in test)
    for side, pairs in ((train, LENGTH_TRAIN_PAIRS), (test, LENGTH_TEST_PAIRS)):
        counts = Counter(sentences[i].family for i in side)
        assert set(counts) == set(FAMILIES)
        assert set(counts.values()) == {2 * pairs}  # every family, equal shares
    assert len({s.text for s in sentences}) == len(sentences)
    assert not {sentences[i].pair for i in train} & {sentences[i].pair for i in test}
    assert all(sentences[i].pair == sentences[i + 1].pair for i in test[::2])


def test_tuning_sentences_share_nothing_with_any_study_test_set():
    """The learning rates are chosen on sentences that no seed tests on (nor trains on)."""
    tuning = {s.text for s in tuning_sentences()}
    assert len(tuning) > 400
    for seed in STUDY_SEEDS:
        data = study_sentences(seed)
        tests = [make_split("random pairs", data, seed)[1]]
        tests += [
            make_split("held-out phrasings", data, seed, held_out=[f])[1]
            for f in FAMILIES
        ]
        texts = {data[i].text for t in tests for i in t} | {s.text for s in data}
        longer, _, test = balanced_length_split(seed)
        texts |= {longer[i].text for i in test}
        assert not tuning & texts, seed
    assert study_sentences(1) != study_sentences(0) == generate_pairs()


def test_the_real_word_offset_can_change_every_models_answer():
    """Unlike padding (masked, skipped or invisible to three of the models), a neutral clause
    of real words in front of the description changes the input of every model: each one's
    logits move, so each one can fail the test."""
    sentences = generate_pairs(20)
    vocab = Vocabulary.build(s.text for s in sentences)
    for k in PREFIXES:
        bare, moved = prefixed_descriptions(sentences, range(8), k)
        assert all(m.lower().endswith(b.lower()) for b, m in zip(bare, moved))
        extra = [len(tokenize(m)) - len(tokenize(b)) for b, m in zip(bare, moved)]
        assert set(extra) == {k}
        for name, (kind, kwargs) in STUDY_MODELS.items():
            torch.manual_seed(0)
            model = build_model(kind, len(vocab), **kwargs).eval()
            with torch.no_grad():
                a = model(encode_batch(bare, vocab))
                b = model(encode_batch(moved, vocab))
            assert not torch.allclose(a, b, atol=1e-4), (name, k)


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
    assert out["test_shift4_changed"] == 0  # n-grams skip padding ...
    assert 0 <= out["test_prefix4_changed"] <= 1  # ... not real words
    assert len(out["test_correct"]) == len(test)
    assert out["test_accuracy"] == round(out["test_correct"].count("1") / len(test), 4)
    assert set(out["test_by_family"]) == {sentences[i].family for i in test}
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
    """Chapter 7 reads benchmark_cars_study.json: rates tuned from the grid on the tuning
    sentences, every model on random pairs and the length split, every model that fits on
    every family, each seed, one correctness mark per test sentence, the live runs."""
    from attnbook.data import benchmark_record

    record = benchmark_record("cars_study")
    assert record["command"].startswith("python benchmarks/cars_study.py tune")
    assert {"python", "torch", "numpy"} <= record["versions"].keys()
    results = record["results"]
    assert set(results["lr"]) == set(STUDY_MODELS)
    assert all(lr in LR_GRID for lr in results["lr"].values())
    assert results["tuning_sentences"] == len(tuning_sentences())
    runs = {(r["model"], r["split"], r["seed"]): r for r in results["runs"]}
    seeds = {seed for _, split, seed in runs if split == "random pairs"}
    family_seeds = {seed for _, split, seed in runs if split.startswith("family")}
    assert len(seeds) >= 2 and family_seeds <= seeds <= set(STUDY_SEEDS)
    assert family_seeds
    for seed in seeds:
        for model in STUDY_MODELS:
            assert (model, "random pairs", seed) in runs
            assert (model, "longer sentences", seed) in runs
    for seed in family_seeds:  # the models run on the families: every family, each seed
        on_families = {m for m, split, s in runs if s == seed and "family" in split}
        assert "n-grams" in on_families
        assert "attention + learned, init 0.02" not in on_families
        for model in on_families:
            assert all((model, f"family {f}", seed) in runs for f in FAMILIES)
    for run in runs.values():
        assert len(run["test_correct"]) == run["n_test"]
        assert (
            abs(run["test_correct"].count("1") / run["n_test"] - run["test_accuracy"])
            < 1e-4
        )
    assert len(results["live"]["runs"]) == 5


def test_uncertainty_summaries():
    from attnbook.cars.uncertainty import (
        bootstrap_interval,
        pair_counts,
        pair_scores,
        pair_wins,
        seed_interval,
        sign_test,
    )

    assert pair_scores("110100").tolist() == [1.0, 0.5, 0.0]
    assert pair_counts(["110100", "00"]) == (1, 1, 2)
    assert sign_test(0, 0) == 1.0 and sign_test(3, 3) == 1.0
    assert abs(sign_test(0, 5) - 2 / 32) < 1e-12  # all five pairs backwards
    assert abs(sign_test(10, 2) - 2 * 79 / 4096) < 1e-12
    lo, hi = bootstrap_interval(["10" * 40 + "11" * 40])  # 0.75 on 80 pairs
    assert lo < 0.75 < hi and hi - lo < 0.25
    assert bootstrap_interval(["11" * 50]) == (1.0, 1.0)
    wide = bootstrap_interval(["10" * 10 + "11" * 10])
    assert wide[1] - wide[0] > hi - lo  # fewer pairs, a wider interval
    # pair by pair: ahead where more twins are right (both vs one, one vs none), ties apart
    assert pair_wins(["111000", "10"], ["101100", "10"]) == (1, 1)
    assert pair_wins(["1111"], ["1000"]) == (2, 0)
    with pytest.raises(ValueError, match="same test sentences"):
        pair_wins(["11"], ["1111"])
    with pytest.raises(ValueError, match="same number"):
        pair_wins(["11"], [])
    mean, lo, hi = seed_interval([0.6, 0.7, 0.8])
    assert abs(mean - 0.7) < 1e-12 and abs(hi - mean - 4.303 * 0.1 / 3**0.5) < 1e-9


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
