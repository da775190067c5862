"""Tests of attnbook.cars (chapter 7): phrasings, pairs, splits, models, a tiny training run."""

import json
from collections import Counter, defaultdict
from dataclasses import asdict

import pytest
import torch

from attnbook.cars import (
    FAMILIES,
    MODEL_KINDS,
    PHRASINGS,
    AttentionClassifier,
    Sentence,
    Vocabulary,
    attention_maps,
    bag_of_words,
    build_model,
    encode_batch,
    generate_pairs,
    load_sentences,
    make_split,
    masked_mean,
    mirror_phrasing,
    overlap_share,
    predict,
    predict_logits,
    render,
    run_seed,
    save_sentences,
    split_pairs,
    tokenize,
)
from attnbook.train import TrainConfig


@pytest.fixture(scope="module")
def sentences():
    return generate_pairs()


def by_pair(sentences):
    pairs = defaultdict(list)
    for s in sentences:
        pairs[s.pair].append(s)
    return pairs


# A human read each of these: the car on the left is white in every one (label 1). They pin
# down what every phrasing, and its mirror image, means.
GOLDEN = {
    "sides_and": "The white car is on the left and the black car is on the right.",
    "sides_fronted": "On the left is a white car and on the right is a black car.",
    "sides_there_is": "There is a white car on the left side and a black car on the right side.",
    "sides_end": "The white car is at the left end while the black car is at the right end.",
    "to_the_left_of": "The white car is to the left of the black car.",
    "left_of": "The white car is left of the black car.",
    "further_left": "The white car is further left than the black car.",
    "on_the_left_of": "A white car is on the left of a black car.",
    "inv_to_the_left_of": "To the left of the black car is the white car.",
    "inv_left_of": "Left of the black car is a white car.",
    "inv_you_see": "On the left of the black car you can see the white car.",
    "listed": "Listed left to right is a white car then a black car.",
    "we_see": "From left to right we see a white car and a black car.",
    "going": "Going from left to right there is a white car and then a black car.",
    "plural": "Left to right the cars are white and black.",
    "followed_by": "From left to right a white car is followed by a black car.",
    "reading": "Reading from left to right the white car is followed by the black car.",
    "comes_first": "Left to right the white car comes first and the black car comes second.",
    "the_one_on": "The car on the left is white and the car on the right is black.",
    "leftmost": "The leftmost car is white and the rightmost car is black.",
    "of_the_two": "The leftmost of the two cars is white and the other one is black.",
    "painted": "The left car is painted white while the right car is painted black.",
}
GOLDEN_MIRRORS = {
    "sides_and": "The black car is on the right and the white car is on the left.",
    "sides_fronted": "On the right is a black car and on the left is a white car.",
    "sides_there_is": "There is a black car on the right side and a white car on the left side.",
    "sides_end": "The black car is at the right end while the white car is at the left end.",
    "to_the_left_of": "The black car is to the right of the white car.",
    "left_of": "The black car is right of the white car.",
    "further_left": "The black car is further right than the white car.",
    "on_the_left_of": "A black car is on the right of a white car.",
    "inv_to_the_left_of": "To the right of the white car is the black car.",
    "inv_left_of": "Right of the white car is a black car.",
    "inv_you_see": "On the right of the white car you can see the black car.",
    "listed": "Listed right to left is a black car then a white car.",
    "we_see": "From right to left we see a black car and a white car.",
    "going": "Going from right to left there is a black car and then a white car.",
    "plural": "Right to left the cars are black and white.",
    "followed_by": "From right to left a black car is followed by a white car.",
    "reading": "Reading from right to left the black car is followed by the white car.",
    "comes_first": "Right to left the black car comes first and the white car comes second.",
    "the_one_on": "The car on the right is black and the car on the left is white.",
    "leftmost": "The rightmost car is black and the leftmost car is white.",
    "of_the_two": "The rightmost of the two cars is black and the other one is white.",
    "painted": "The right car is painted black while the left car is painted white.",
}


def test_every_phrasing_and_its_mirror_say_what_a_human_checked():
    assert set(GOLDEN) == set(PHRASINGS) == set(GOLDEN_MIRRORS)
    for name, text in GOLDEN.items():
        assert render(PHRASINGS[name], "white", "black")[0] == text, name
        assert (
            render(mirror_phrasing(PHRASINGS[name]), "white", "black")[0]
            == GOLDEN_MIRRORS[name]
        ), name
    assert len(FAMILIES) == 6 and all(len(f) >= 3 for f in FAMILIES.values())


def test_distractors_go_before_inside_or_after_and_the_description_is_kept():
    p = PHRASINGS["to_the_left_of"]
    kw = dict(
        noun="old sedan",
        verb="sits",
        distractor="under a {D1} sky",
        distractor_colours=("black", "red"),
    )
    assert render(p, "white", "black", where="before", **kw) == (
        "Under a black sky, the white old sedan sits to the left of the black old sedan.",
        "the white old sedan sits to the left of the black old sedan",
        4,
    )
    assert render(p, "white", "black", where="inside", **kw)[0] == (
        "The white old sedan under a black sky sits to the left of the black old sedan."
    )
    assert render(p, "white", "black", where="after", **kw)[0] == (
        "The white old sedan sits to the left of the black old sedan, under a black sky."
    )
    with pytest.raises(ValueError, match="one white and one black car"):
        render(p, "white", "white")
    with pytest.raises(ValueError, match="where must be one of"):
        render(p, "white", "black", where="above", **kw)


def test_every_pair_is_bag_of_words_identical_with_labels_from_the_scene(sentences):
    assert len(sentences) == 528 and len(by_pair(sentences)) == 264
    assert len({s.text for s in sentences}) == 528, "a sentence occurs twice"
    for pair, (pos, neg) in by_pair(sentences).items():
        assert (pos.label, neg.label) == (1, 0), f"pair {pair}"
        assert bag_of_words(pos.text) == bag_of_words(neg.text), f"pair {pair}"
        assert (
            pos.text != neg.text and pos.where == neg.where and pos.family == neg.family
        )
    for s in sentences:
        assert s.label == int(s.left == "white") and {"white", "black"} <= set(
            tokenize(s.text)
        )


def test_descriptions_and_starts_match_the_text(sentences):
    for s in sentences:
        tokens, description = tokenize(s.text), tokenize(s.description)
        assert (s.start > 0) == (s.where == "before")
        if s.where != "inside":
            assert tokens[s.start : s.start + len(description)] == description, s.text
        else:
            assert len(tokens) > len(description) and s.start == 0


def test_the_data_has_the_promised_variety(sentences):
    names = Counter(s.phrasing.split("/")[0] for s in sentences)
    assert (
        set(names) == set(PHRASINGS) and max(names.values()) - min(names.values()) <= 2
    )
    assert 150 < sum(s.phrasing.endswith("/mirror") for s in sentences) < 380
    where = Counter(s.where for s in sentences)
    assert all(where[w] > 60 for w in ("none", "before", "inside", "after"))
    lengths = [len(tokenize(s.text)) for s in sentences]
    assert min(lengths) <= 10 and max(lengths) >= 25
    first_colour = [
        next(t for t in tokenize(s.text) if t in ("white", "black")) for s in sentences
    ]
    assert 150 < first_colour.count("black") < 380
    assert len({s.description for s in sentences}) > 450  # few repeated descriptions


def test_generation_is_reproducible_and_validated():
    a, b, c = (
        generate_pairs(40, seed=1),
        generate_pairs(40, seed=1),
        generate_pairs(40, seed=2),
    )
    assert a == b and [s.text for s in a] != [s.text for s in c] and len(a) == 80
    with pytest.raises(ValueError, match="n_pairs"):
        generate_pairs(0)
    with pytest.raises(ValueError, match="where_weights"):
        generate_pairs(10, where_weights=(1, 1))


def test_json_round_trip_and_a_clear_error(tmp_path, sentences):
    path = tmp_path / "cars.json"
    save_sentences(sentences, path)
    assert load_sentences(path) == sentences
    assert json.loads(path.read_text())[0]["text"] == sentences[0].text
    (tmp_path / "bad.json").write_text('[{"words": 1}]')
    with pytest.raises(ValueError, match="not a sentence file") as err:
        load_sentences(tmp_path / "bad.json")
    assert str(tmp_path) not in str(err.value)


# ----------------------------------------------------------------------------- tokens
def test_tokens_vocabulary_and_padding():
    assert tokenize("The white car, left.") == ["the", "white", "car", "left"]
    vocab = Vocabulary.build(["a white car", "a black car"])
    assert vocab.itos[:2] == ["<pad>", "<unk>"] and len(vocab) == 6
    ids = encode_batch(["a white car", "a red car to"], vocab)
    assert ids.shape == (2, 4) and ids.dtype == torch.long
    assert ids[1, 1] == vocab.unk_id and ids[0, 3] == vocab.pad_id
    with pytest.raises(ValueError, match="max_len=3"):
        encode_batch(["a red car to"], vocab, max_len=3)
    with pytest.raises(TypeError, match="list of sentences"):
        encode_batch("a white car", vocab)


# ----------------------------------------------------------------------------- splits
def test_random_pairs_split_keeps_pairs_together(sentences):
    pairs = [s.pair for s in sentences]
    train, test = split_pairs(pairs, 0.2, seed=3)
    assert not {pairs[i] for i in train} & {pairs[i] for i in test}
    assert sorted(train + test) == list(range(len(sentences))) and len(
        test
    ) == 2 * round(0.2 * 264)
    assert (
        split_pairs(pairs, 0.2, seed=3)
        == (train, test)
        != split_pairs(pairs, 0.2, seed=4)
    )


def test_held_out_phrasings_never_appear_in_training(sentences):
    for seed in range(3):
        train, test = make_split("held-out phrasings", sentences, seed)
        train_names = {sentences[i].phrasing.split("/")[0] for i in train}
        test_names = {sentences[i].phrasing.split("/")[0] for i in test}
        assert not train_names & test_names and len(test_names) == round(
            0.2 * len(PHRASINGS)
        )
        assert overlap_share(sentences, train, test) == 0.0
    train, test = make_split("held-out phrasings", sentences, held_out=["inverted"])
    assert {sentences[i].family for i in test} == {"inverted"}
    assert "inverted" not in {sentences[i].family for i in train}
    with pytest.raises(ValueError, match="unknown phrasings or families"):
        make_split("held-out phrasings", sentences, held_out=["diagonal"])


def test_shifted_positions_start_later_than_anything_in_training(sentences):
    train, test = make_split("shifted positions", sentences, seed=0)
    assert max(sentences[i].start for i in train) == 0
    assert min(sentences[i].start for i in test) >= 2
    assert not {sentences[i].pair for i in train} & {sentences[i].pair for i in test}
    with pytest.raises(ValueError, match="unknown split"):
        make_split("by colour", sentences)


def test_overlap_share_counts_test_descriptions_seen_in_training():
    def s(description, pair):
        return Sentence(
            description + ".", 1, pair, "white", "x", description=description
        )

    data = [s("a", 0), s("b", 1), s("a", 2), s("c", 3)]
    assert overlap_share(data, [0, 1], [2, 3]) == 0.5


# ----------------------------------------------------------------------------- models
@pytest.fixture(scope="module")
def vocab(sentences):
    return Vocabulary.build(s.text for s in sentences)


def test_every_model_maps_ids_to_one_logit_and_ignores_padding(sentences, vocab):
    texts = [sentences[0].text, sentences[5].text]
    ids = encode_batch(texts, vocab)
    padded = torch.cat([ids, torch.zeros(2, 5, dtype=torch.long)], dim=1)
    for kind in MODEL_KINDS:
        torch.manual_seed(0)
        model = build_model(kind, len(vocab)).eval()
        with torch.no_grad():
            out = model(ids)
            assert out.shape == (2,), kind
            torch.testing.assert_close(model(padded), out, atol=1e-5, rtol=0, msg=kind)
    with pytest.raises(ValueError, match="unknown model kind"):
        build_model("lstm", 10)
    with pytest.raises(ValueError, match="positions must be one of"):
        AttentionClassifier(10, positions="absolute")


def test_order_blind_models_give_twins_the_same_logit_and_others_do_not(
    sentences, vocab
):
    pos, neg = by_pair(sentences)[0]
    ids = encode_batch([pos.text, neg.text], vocab)
    for kind in MODEL_KINDS:
        torch.manual_seed(1)
        model = build_model(kind, len(vocab)).eval()
        with torch.no_grad():
            a, b = model(ids)
        if kind in ("bag of words", "attention without positions"):
            assert abs(a - b) < 1e-5, kind
        else:
            assert abs(a - b) > 1e-6, kind


def test_attention_without_positions_is_permutation_invariant(vocab):
    torch.manual_seed(0)
    model = build_model("attention without positions", len(vocab)).eval()
    ids = encode_batch(["the white car is to the left of the black car"], vocab)
    shuffled = ids[
        :, torch.randperm(ids.shape[1], generator=torch.Generator().manual_seed(0))
    ]
    with torch.no_grad():
        torch.testing.assert_close(model(shuffled), model(ids), atol=1e-5, rtol=0)


def test_masked_mean_divides_by_the_real_tokens():
    x = torch.arange(12.0).view(1, 4, 3)
    mask = torch.tensor([[[True, True, False, False]]])  # (B, 1, T): the key mask
    torch.testing.assert_close(masked_mean(x, mask), x[:, :2].mean(1))
    x[0, 2:] = float("inf")  # what padding holds must not matter, inf included
    torch.testing.assert_close(masked_mean(x, mask), x[:, :2].mean(1))
    torch.testing.assert_close(
        masked_mean(x, torch.zeros_like(mask)), torch.zeros(1, 3)
    )
    with pytest.raises(TypeError, match="boolean"):
        masked_mean(x, mask.int())
    with pytest.raises(ValueError, match=r"\(B, 1, T\)"):
        masked_mean(x, mask[:, 0])


def test_attention_maps_and_predictions_restore_the_training_mode(vocab):
    torch.manual_seed(0)
    model = build_model("attention + RoPE", len(vocab)).train()
    tokens, maps = attention_maps(
        model, vocab, "the white car is left of the black car"
    )
    assert len(maps) == 2 and maps[0].shape == (len(tokens), len(tokens))
    torch.testing.assert_close(maps[1].sum(-1), torch.ones(len(tokens)))
    p = predict(model, vocab, ["a white car", "a black car"])
    assert p.shape == (2,) and ((0 < p) & (p < 1)).all() and model.training
    with pytest.raises(ValueError):
        predict_logits(model, vocab, [""])
    assert model.training


# ----------------------------------------------------------------------------- training
def test_a_short_run_learns_and_bag_of_words_is_exactly_at_chance(sentences):
    cfg = TrainConfig(
        max_iters=80,
        batch_size=64,
        learning_rate=1e-2,
        warmup_iters=5,
        eval_interval=80,
    )
    bow = run_seed("bag of words", sentences, "random pairs", seed=0, config=cfg)
    assert bow.test_accuracy == 0.5 and bow.train_accuracy == 0.5
    ngrams = run_seed("n-grams", sentences, "random pairs", seed=0, config=cfg)
    # it starts to fit the pairs (order-blind: exactly 0.5)
    assert ngrams.train_accuracy > 0.65
    assert [r["iter"] for r in ngrams.result.history] == [0, 80]
    again = run_seed("n-grams", sentences, "random pairs", seed=0, config=cfg)
    assert again.test_accuracy == ngrams.test_accuracy and 0 <= ngrams.overlap < 0.3


@pytest.mark.parametrize(
    "name, steps", [("chapter_grid.json", 240), ("chapter_grid_960.json", 960)]
)
def test_the_stored_chapter_grids_are_complete_and_match_the_recipe(name, steps):
    """Chapter 7 reads the grids that benchmarks/cars_seeds.py stored: every model x split x
    seed once, recorded with the chapter's recipe (at 240 or 960 steps), accuracies in [0, 1]."""
    from attnbook.cars import (
        CHAPTER_CONFIG,
        MODEL_KINDS,
        SPLITS,
        load_chapter_grid,
        with_steps,
    )

    record, grid = load_chapter_grid(name)
    keys = [(r.kind, r.split, r.seed) for r in grid]
    assert sorted(keys) == sorted(
        (k, sp, s) for k in MODEL_KINDS for sp in SPLITS for s in range(5)
    )
    # tuples as lists
    recipe = json.loads(json.dumps(asdict(with_steps(CHAPTER_CONFIG, steps))))
    # the grids predate TrainConfig's GPU options, which change nothing on the CPU
    gpu_options = {
        "amp": "auto",
        "tf32": True,
        "fused_adamw": True,
        "compile": False,
        "step_times": False,
    }
    assert record["config"] == {k: v for k, v in recipe.items() if k not in gpu_options}
    assert {k: recipe[k] for k in gpu_options} == gpu_options
    assert all(
        0.0 <= r.test_accuracy <= 1.0 and 0.0 <= r.train_accuracy <= 1.0 for r in grid
    )
    bag = [r.test_accuracy for r in grid if r.kind == "bag of words"]
    # the pair argument, in the stored data too
    assert bag and all(a == 0.5 for a in bag)


def test_only_the_stored_grids_can_be_loaded():
    from attnbook.cars import load_chapter_grid

    with pytest.raises(ValueError, match="no stored grid 'grid.json'"):
        load_chapter_grid("grid.json")
