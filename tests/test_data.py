"""attnbook.data: the benchmark records chapters 2 and 6-11 glue their quoted numbers from."""

import json

import pytest

from attnbook.data import benchmark_record, write_benchmark_record


@pytest.mark.parametrize("name", ["gpt_ablations", "gqa_positions", "norm_speed"])
def test_shipped_records_name_what_produced_them(name):
    record = benchmark_record(name)
    assert record["command"].startswith(f"python benchmarks/{name}.py")
    assert record["corpus"] == "shakespeare" and record["seeds"]
    assert {"python", "torch", "numpy"} <= record["versions"].keys()


def test_ablation_record_has_every_variant_the_chapter_quotes():
    runs = benchmark_record("gpt_ablations")["results"]
    variants = {r["variant"] for r in runs}
    assert {
        "base",
        "4-layers",
        "4-layers-500",
        "no-residuals",
        "no-layernorm",
        "no-warmup",
        "post-ln",
        "post-ln-no-warmup",
        "dropout-0.2",
        "base-3000",
    } <= variants
    # ln 65 = 4.17
    assert all(r["seed"] in (0, 1, 2) and 1.0 < r["val"] < 4.2 for r in runs)


def test_embedding_scale_runs_sit_beside_the_position_runs():
    record = benchmark_record("gqa_positions")
    added = record["embedding_scale"]
    assert added["command"].startswith("python benchmarks/gqa_positions.py")
    assert added["seeds"] == record["seeds"]
    for seed in record["seeds"]:
        unscaled = [
            r
            for r in added["results"]
            if r["model"] == "sinusoidal-unscaled" and r["seed"] == seed
        ]
        assert len(unscaled) == 1 and set(unscaled[0]["val"]) == {"64", "128", "256"}
        rms = unscaled[0]["rms_trained"]
        assert abs(rms["table"] - 0.5**0.5) < 1e-5  # sin^2 + cos^2 = 1 per pair


def test_sliding_window_record_holds_medians_and_slopes():
    record = benchmark_record("sliding_window")
    assert record["command"].startswith("python benchmarks/attention_blocks.py")
    rows = record["results"]
    assert [r["N"] for r in rows] == sorted(r["N"] for r in rows) and rows[-1][
        "N"
    ] >= 16384
    for r in rows:
        assert len(r["window_s"]) == record["repeats"] >= 5
        assert min(r["full_s"]) <= r["full_median_s"] <= max(r["full_s"])
    assert record["slope_window"] < record["slope_full"]


def test_write_then_read_and_bad_names(tmp_path, monkeypatch):
    path = tmp_path / "benchmark_demo.json"
    write_benchmark_record(
        str(path), "python benchmarks/demo.py", [0], {"x": 1.5}, corpus="none"
    )
    record = json.loads(path.read_text())
    assert (
        record["results"] == {"x": 1.5}
        and record["seeds"] == [0]
        and "machine" in record
    )
    with pytest.raises(
        FileNotFoundError, match="no benchmark record 'nope'.*gpt_ablations"
    ):
        benchmark_record("nope")
    with pytest.raises(ValueError, match="letters, digits"):
        benchmark_record("../text")


def test_record_names_the_processor(tmp_path, monkeypatch):
    import platform

    monkeypatch.setattr(platform, "processor", lambda: "Test CPU 9000")
    path = tmp_path / "benchmark_demo.json"
    write_benchmark_record(str(path), "python benchmarks/demo.py", [], [])
    assert json.loads(path.read_text())["machine"].endswith("CPU cores (Test CPU 9000)")


def test_record_names_the_commit(tmp_path):
    import re

    path = tmp_path / "benchmark_demo.json"
    write_benchmark_record(str(path), "python benchmarks/demo.py", [], [])
    commit = json.loads(path.read_text())["commit"]
    assert commit == "unknown" or re.fullmatch(r"[0-9a-f]{40}(\+changes)?", commit)
