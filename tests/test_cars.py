"""Tests of attnbook.cars (chapter 7): data, tokens, split, models, a tiny training run."""
import json
from collections import Counter, defaultdict

import pytest
import torch

from attnbook.cars import (
    PHRASINGS, AttentionClassifier, BagOfWordsMLP, TrainConfig, Vocabulary,
    bag_of_words, bag_of_words_counts, build_model, encode_batch, generate_pairs, load_sentences,
    make_loaders, masked_mean, mirror_phrasing, render, run_seed, save_sentences, split_pairs,
    tokenize,
)


@pytest.fixture(scope="module")
def sentences():
    return generate_pairs()


def by_pair(sentences):
    pairs = defaultdict(list)
    for s in sentences:
        pairs[s.pair].append(s)
    return pairs


# ----------------------------------------------------------------------------- data
def test_default_size_is_the_sources_264_pairs(sentences):
    assert len(sentences) == 528
    assert len(by_pair(sentences)) == 264
    assert len({s.text for s in sentences}) == 528, "a sentence occurs twice"


def test_every_pair_is_bag_of_words_identical_with_labels_1_0(sentences):
    for pair, (pos, neg) in by_pair(sentences).items():
        assert (pos.label, neg.label) == (1, 0), f"pair {pair}"
        assert bag_of_words(pos.text) == bag_of_words(neg.text), f"pair {pair}: {pos.text} / {neg.text}"
        assert pos.text != neg.text


def test_labels_come_from_the_scene(sentences):
    for s in sentences:
        assert s.left in ("white", "black")
        assert s.label == int(s.left == "white")
        # every sentence names both cars' colours
        assert {"white", "black"} <= set(tokenize(s.text))


# A human read each of these and checked the label: the car on the left is white in all of
# them (label 1). They pin down what every phrasing and its mirror image mean.
GOLDEN_WHITE_ON_THE_LEFT = {
    "on_the_sides": "The white car is on the left and the black car is on the right.",
    "to_the_side_of": "The white car is to the left of the black car.",
    "side_first": "To the left of the black car is the white car.",
    "listed": "Listed left to right is a white car then black car.",
    "followed_by": "From left to right a white car is followed by a black car.",
    "frame_and_border": "Within a red frame and blue border the white car remains on the left "
                        "while the black car remains on the right.",
    "car_on_the_side": "The car on the left is white and the car on the right is black.",
    "leftmost": "The leftmost of the two cars is white and the other one is black.",
}
GOLDEN_MIRRORS_WHITE_ON_THE_LEFT = {
    "to_the_side_of": "The black car is to the right of the white car.",
    "side_first": "To the right of the white car is the black car.",
    "listed": "Listed right to left is a black car then white car.",
    "followed_by": "From right to left a black car is followed by a white car.",
    "leftmost": "The rightmost of the two cars is black and the other one is white.",
    "on_the_sides": "The black car is on the right and the white car is on the left.",
    "car_on_the_side": "The car on the right is black and the car on the left is white.",
    "frame_and_border": "Within a red frame and blue border the black car remains on the right "
                        "while the white car remains on the left.",
}
# and the context phrases go after the description
GOLDEN_WITH_CONTEXT = ("The white car sits to the left of the black car under a black sky.",
                       "to_the_side_of", dict(verb="sits", distractors=("black", "red"),
                                              context="under a {D1} sky"))


def test_every_phrasing_says_what_a_human_checked():
    assert set(GOLDEN_WHITE_ON_THE_LEFT) == set(PHRASINGS)
    for name, text in GOLDEN_WHITE_ON_THE_LEFT.items():
        assert render(PHRASINGS[name], "white", "black") == text, name
    for name, text in GOLDEN_MIRRORS_WHITE_ON_THE_LEFT.items():
        assert render(mirror_phrasing(PHRASINGS[name]), "white", "black") == text, name
    text, name, options = GOLDEN_WITH_CONTEXT
    assert render(PHRASINGS[name], "white", "black", **options) == text


def test_the_sources_two_sentences_are_generated_phrasings():
    text = render(PHRASINGS["frame_and_border"], "white", "black", distractors=("white", "black"))
    assert text == ("Within a white frame and black border the white car remains on the left "
                    "while the black car remains on the right.")
    assert render(PHRASINGS["listed"], "white", "black") == "Listed left to right is a white car then black car."


def test_the_data_has_the_promised_variety(sentences):
    names = Counter(s.phrasing for s in sentences)
    assert {n.removesuffix("/mirror") for n in names} == set(PHRASINGS)
    assert sum(n.endswith("/mirror") for n in names.elements()) > 100
    # the black car is mentioned first in many sentences; distractor colours occur
    first_colour = [next(t for t in tokenize(s.text) if t in ("white", "black")) for s in sentences]
    assert 150 < first_colour.count("black") < 380
    pair_kinds = Counter(pos.phrasing == neg.phrasing for pos, neg in by_pair(sentences).values())
    assert pair_kinds[True] > 50 and pair_kinds[False] > 50  # colours swapped / sides swapped
    assert any(Counter(tokenize(s.text))["white"] >= 2 for s in sentences)


def test_generation_is_reproducible_per_seed_and_differs_across_seeds():
    a, b, c = generate_pairs(40, seed=1), generate_pairs(40, seed=1), generate_pairs(40, seed=2)
    assert a == b
    assert [s.text for s in a] != [s.text for s in c]
    assert len(a) == 80


def test_json_round_trip(tmp_path, sentences):
    path = tmp_path / "cars.json"
    save_sentences(sentences, path)
    assert load_sentences(path) == sentences
    assert json.loads(path.read_text())[0]["text"] == sentences[0].text


def test_bad_inputs_give_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="one white and one black car"):
        render(PHRASINGS["listed"], "white", "white")
    with pytest.raises(ValueError, match="positive int"):
        generate_pairs(0)
    with pytest.raises(FileNotFoundError):
        load_sentences(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('[{"words": 1}]')
    with pytest.raises(ValueError, match="not a sentence file"):
        load_sentences(tmp_path / "bad.json")


# ----------------------------------------------------------------------------- tokens
def test_tokenize_lowercases_and_strips_punctuation():
    assert tokenize("Within a white frame, the Black car!") == ["within", "a", "white", "frame", "the", "black", "car"]


def test_vocabulary_has_pad_0_and_unk_1():
    vocab = Vocabulary.build(["The white car.", "A black car"])
    assert vocab.itos[:2] == ["<pad>", "<unk>"] and vocab.pad_id == 0 and vocab.unk_id == 1
    assert vocab.encode("the white truck") == [vocab.stoi["the"], vocab.stoi["white"], 1]
    assert vocab.decode(vocab.encode("a black car")) == ["a", "black", "car"]
    assert len(vocab) == 2 + 5


def test_encode_batch_pads_and_masks():
    vocab = Vocabulary.build(["the white car is on the left"])
    ids, mask = encode_batch(["The white car.", "the white car is on the left"], vocab)
    assert ids.shape == mask.shape == (2, 7) and ids.dtype == torch.long and mask.dtype == torch.bool
    assert mask.sum(1).tolist() == [3, 7]
    assert torch.all(ids[0, 3:] == 0) and torch.all(ids[mask] != 0)
    ids, mask = encode_batch(["the car"], vocab, max_len=5)
    assert ids.shape == (1, 5)
    with pytest.raises(ValueError, match="max_len"):
        encode_batch(["the white car is on the left"], vocab, max_len=3)


# ----------------------------------------------------------------------------- split
def test_split_never_separates_a_pair(sentences):
    pair_ids = [s.pair for s in sentences]
    for seed in range(5):
        train, test = split_pairs(pair_ids, 0.2, seed)
        assert sorted(train + test) == list(range(len(sentences)))
        train_pairs, test_pairs = {pair_ids[i] for i in train}, {pair_ids[i] for i in test}
        assert not train_pairs & test_pairs
        assert len(test_pairs) == round(0.2 * 264) == 53
        assert len(test) == 2 * 53


def test_split_is_reproducible_per_seed_and_differs_across_seeds(sentences):
    pair_ids = [s.pair for s in sentences]
    assert split_pairs(pair_ids, 0.2, 3) == split_pairs(pair_ids, 0.2, 3)
    assert split_pairs(pair_ids, 0.2, 3)[1] != split_pairs(pair_ids, 0.2, 4)[1]
    with pytest.raises(ValueError, match="between 0 and 1"):
        split_pairs(pair_ids, 1.5)


def test_loaders_batch_ids_and_labels(sentences):
    train, test = split_pairs([s.pair for s in sentences], 0.2, 0)
    vocab = Vocabulary.build(sentences[i].text for i in train)
    train_loader, test_loader = make_loaders(sentences, vocab, train, test, batch_size=16, seed=0)
    ids, labels = next(iter(train_loader))
    assert ids.shape[0] == 16 and labels.shape == (16,) and labels.dtype == torch.float32
    assert (ids != 0).sum(1).max() == ids.shape[1], "batches are trimmed to their longest sentence"
    assert sum(len(b[1]) for b in test_loader) == len(test)


# ----------------------------------------------------------------------------- models
def batch_with_padding():
    vocab = Vocabulary.build(["the white car is on the left of a black car"])
    ids, mask = encode_batch(["the white car is on the left of a black car", "a black car", "the car"], vocab)
    return vocab, ids, mask


def test_masked_mean_ignores_padding():
    x = torch.randn(3, 5, 4)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0]]).bool()
    out = masked_mean(x, mask)
    assert out.shape == (3, 4)
    torch.testing.assert_close(out[1], x[1, :2].mean(0))
    torch.testing.assert_close(out[2], x[2, 0])
    x2 = x.clone()
    x2[~mask] = 1e6  # change only the padded positions
    torch.testing.assert_close(masked_mean(x2, mask), out)
    with pytest.raises(ValueError, match="mask"):
        masked_mean(x, mask[:, :4])


def test_model_output_shapes():
    vocab, ids, _ = batch_with_padding()
    torch.manual_seed(0)
    for kind in ("bag of words", "attention", "attention without positions"):
        assert build_model(kind, len(vocab))(ids).shape == (3,)
    logits, weights = AttentionClassifier(len(vocab))(ids, return_attention=True)
    assert logits.shape == (3,) and len(weights) == 4
    assert all(w.shape == (3, ids.shape[1], ids.shape[1]) for w in weights)
    with pytest.raises(ValueError, match="unknown model kind"):
        build_model("lstm", 10)


def test_padding_changes_nothing():
    vocab, ids, _ = batch_with_padding()
    torch.manual_seed(0)
    model = AttentionClassifier(len(vocab)).eval()
    with torch.no_grad():
        before = model(ids)
        model.token.weight[0] = torch.randn(model.token.weight.shape[1]) * 10  # the <pad> vector
        after = model(ids)
        longer = model(torch.cat([ids, torch.zeros(3, 4, dtype=torch.long)], dim=1))  # more padding
    torch.testing.assert_close(after, before, atol=1e-5, rtol=0)
    torch.testing.assert_close(longer, before, atol=1e-5, rtol=0)


def test_attention_weights_are_zero_on_padded_keys_and_come_from_each_layers_input():
    vocab, ids, mask = batch_with_padding()
    torch.manual_seed(0)
    model = AttentionClassifier(len(vocab)).eval()
    inputs = []
    hooks = [b.register_forward_pre_hook(lambda m, args: inputs.append(args[0])) for b in model.blocks]
    with torch.no_grad():
        _, weights = model(ids, return_attention=True)
    for h in hooks:
        h.remove()
    key_mask = mask[:, None, :]  # (B, 1, T)
    for layer, (w, x) in enumerate(zip(weights, inputs)):
        assert torch.all(w.masked_select(~key_mask.expand_as(w)) == 0), f"layer {layer}"
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:2]))
        block = model.blocks[layer]
        with torch.no_grad():
            _, expected = block.attn(block.norm1(x), mask=key_mask)
        torch.testing.assert_close(w, expected.squeeze(1))
    assert not torch.allclose(weights[0], weights[1]), "layers see different inputs"


def test_without_positions_a_pair_gets_the_same_logit():
    pos, neg = generate_pairs(1, seed=5)
    vocab = Vocabulary.build([pos.text])
    ids, _ = encode_batch([pos.text, neg.text], vocab)
    torch.manual_seed(0)
    bow, no_pos = BagOfWordsMLP(len(vocab)), AttentionClassifier(len(vocab), positions=False).eval()
    with_pos = AttentionClassifier(len(vocab)).eval()
    counts = bag_of_words_counts(ids, len(vocab))
    assert torch.equal(counts[0], counts[1])
    with torch.no_grad():
        assert torch.equal(bow(ids)[0], bow(ids)[1])
        a, b = no_pos(ids)
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)
        a, b = with_pos(ids)
        assert abs(float(a - b)) > 1e-4


@pytest.fixture
def one_thread():
    """Tiny models train fastest on one thread (and a busy machine makes two threads crawl)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_tiny_training_run_is_reproducible(one_thread):
    data = generate_pairs(24, seed=3)
    config = TrainConfig(epochs=3, batch_size=8)
    r1 = run_seed("attention", data, seed=0, config=config).result
    r2 = run_seed("attention", data, seed=0, config=config).result
    assert len(r1.losses) == len(r1.test_accuracies) == 3
    assert r1.losses == r2.losses and r1.test_accuracy == r2.test_accuracy
    assert 0.0 <= r1.test_accuracy <= 1.0 and r1.seconds > 0
    run = run_seed("bag of words", data, seed=0, config=config)
    assert run.result.test_accuracy == 0.5, "a bag of words cannot tell the two sentences of a pair apart"
    assert isinstance(run.vocab, Vocabulary) and len(run.test_idx) == 2 * round(0.2 * 24)



def test_predict_logits_and_probabilities_agree_and_leave_the_mode_alone():
    from attnbook.cars import Vocabulary, build_model, predict, predict_logits

    texts = ["the white car is on the left", "the black car is to the left of a white car"]
    vocab = Vocabulary.build(texts)
    torch.manual_seed(0)
    model = build_model("attention", len(vocab))
    model.train()
    logits = predict_logits(model, vocab, texts)
    assert logits.shape == (2,) and not logits.requires_grad
    torch.testing.assert_close(predict(model, vocab, texts), torch.sigmoid(logits))
    assert model.training
