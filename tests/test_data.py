"""attnbook.data: the benchmark records chapters 6 and 8 glue their quoted numbers from."""

import json

import pytest

from attnbook.data import benchmark_record, write_benchmark_record


@pytest.mark.parametrize("name", ["gpt_ablations", "gqa_positions"])
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
    assert all(r["seed"] in (0, 1) and 1.0 < r["val"] < 4.2 for r in runs)


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
