"""The records chapters 3 and 6 quote instead of training everything live: chapter 6's
1000-step run (its weights ship too) and chapter 3's ten-seed sweep of the marked-letters
task. Each test checks that a record holds what the chapter reads from it and that the
shipped artefact reproduces what the record says."""

import importlib.resources
import io

import torch
import torch.nn.functional as F

from attnbook.data import benchmark_record
from attnbook.gpt import GPT, GPTConfig
from attnbook.marked_pairs import (
    TwoQuestionLayer,
    marked_pair_batch,
    train_two_questions,
    weight_on_marks,
)
from attnbook.text import CharTokenizer, load_corpus, split_train_val


def test_tiny_gpt_record_holds_the_run_chapter_6_plots():
    record = benchmark_record("tiny_gpt")
    assert record["command"].startswith("python benchmarks/tiny_gpt_model.py")
    assert record["schedule"]["max_iters"] == 1000 == record["results"]["iters"]
    results = record["results"]
    assert len(results["step_losses"]) == 1000
    assert [row["iter"] for row in results["history"]] == list(range(0, 1001, 100))
    short = results["short_runs"]
    assert [run["seed"] for run in short] == [0, 1, 2, 3, 4]
    assert record["short_schedule"]["max_iters"] == 150
    assert all(run["history"][-1]["iter"] == 150 for run in short)


def test_shipped_tiny_gpt_weights_give_the_recorded_loss():
    record = benchmark_record("tiny_gpt")
    data = importlib.resources.files("attnbook.data").joinpath(record["weights"])
    saved = torch.load(io.BytesIO(data.read_bytes()), weights_only=True)
    assert saved["config"] == record["model"]
    assert all(t.dtype == torch.float16 for t in saved["state_dict"].values())
    text = load_corpus("shakespeare")
    tok = CharTokenizer.from_text(text)
    _, val = split_train_val(tok.encode(text), 0.1)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, **saved["config"]))
    model.load_state_dict({k: t.float() for k, t in saved["state_dict"].items()})
    # the first 256 windows of 64 characters of the validation text, every character
    # scored once: 1.894, against 1.928 recorded for the whole validation text
    x = val[: 256 * 64].view(256, 64)
    y = val[1 : 256 * 64 + 1].view(256, 64)
    with torch.no_grad():
        loss = F.cross_entropy(model(x)[0].transpose(1, 2), y).item()
    recorded = record["results"]["val_whole_text_float16"]
    assert 1.5 < recorded < 2.2 and abs(loss - recorded) < 0.1
    # far below the unigram baseline (3.35): trained weights, not an initialisation
    assert loss < record["results"]["unigram"] - 1.0


def test_multihead_seed_record_covers_what_chapter_3_reads():
    record = benchmark_record("multihead_seeds")
    assert record["command"].startswith("python benchmarks/multihead_seeds.py")
    assert record["seeds"] == list(range(10)) and record["lengths"][3] == 64
    runs = {(r["seed"], r["heads"]): r for r in record["results"]}
    assert set(runs) == {(s, h) for s in range(10) for h in (1, 2)}
    for (_, heads), run in runs.items():
        assert len(run["preferences"]) == heads and len(run["sweep"]) == 5
        assert 0 < run["steps"] <= 400 and len(run["acc"]) == 2
        if heads == 1:
            assert len(run["by_first_letter"]) == 6 and 0 <= run["slope"] <= 0.25


def test_a_recorded_seed_trains_again_to_the_recorded_run():
    record = benchmark_record("multihead_seeds")
    run = next(r for r in record["results"] if r["seed"] == 2 and r["heads"] == 2)
    torch.manual_seed(2)
    model = TwoQuestionLayer(6, d_model=16, n_head=2)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        losses = train_two_questions(model, steps=400, seed=3)
    finally:
        torch.set_num_threads(threads)
    test = marked_pair_batch(1000, 8, 6, torch.Generator().manual_seed(100))
    on_marks, acc = weight_on_marks(model, *test)
    assert min(acc.tolist()) > 0.95 and min(run["acc"]) > 0.95
    prefs = (on_marks[:, 0] - on_marks[:, 1]).tolist()
    assert max(abs(a - b) for a, b in zip(prefs, run["preferences"])) < 0.05
    means = torch.tensor(losses).unfold(0, 10, 1).mean(-1)
    steps = int((means < 0.05).nonzero()[0]) + 10
    assert abs(steps - run["steps"]) <= 5


def test_shipped_car_classifier_is_the_recorded_seed_and_reads_the_tutorial_pair():
    from attnbook.cars import (
        accuracy,
        encode_batch,
        generate_pairs,
        make_split,
        predict,
    )
    from attnbook.cars.shipped import TUTORIAL_PAIR, load_study_rope, study_rope_recipe

    record = benchmark_record("cars_rope_model")
    assert record["command"].startswith("python benchmarks/cars_rope_model.py")
    runs = {r["seed"]: r for r in record["results"]["runs"]}
    assert (
        sorted(runs) == [0, 1, 2, 3, 4]
        and record["weights"] == "ch7_rope_classifier.pt"
    )
    model, vocab, recipe = load_study_rope()
    assert recipe == record["recipe"] == study_rope_recipe(0)
    # the shipped weights give seed 0's recorded test accuracy on its own split
    sentences = generate_pairs()
    _, test = make_split("random pairs", sentences, 0)
    ids = encode_batch([sentences[i].text for i in test], vocab, max_len=64)
    labels = torch.tensor([float(sentences[i].label) for i in test])
    assert len(test) == runs[0]["n_test"]
    assert abs(accuracy(model, ids, labels) - runs[0]["test_accuracy"]) < 1e-3
    # ... and its recorded probabilities on the tutorial's pair, which it reads
    p_sentence, p_twin = predict(model, vocab, TUTORIAL_PAIR).tolist()
    assert abs(p_sentence - runs[0]["p_sentence"]) < 1e-4 and p_sentence > 0.9
    assert abs(p_twin - runs[0]["p_twin"]) < 1e-4 and p_twin < 0.1
