#!/usr/bin/env python3
"""Train the study's RoPE classifier of chapter 7 and ship seed 0's weights (chapter 7).

    python benchmarks/cars_rope_model.py --save src/attnbook/data/ch7_rope_classifier.pt

`attnbook.cars.shipped.study_rope_run(seed)` for --seeds (default 0-4), one thread each: the
study's `attention + RoPE` at its tuned learning rate and steps, on the random pairs of each
seed's data (seed 0: the chapter's data set). Seed 0's float32 weights and vocabulary go to
--save; `benchmark_cars_rope_model.json` beside them records, per seed, the train and test
accuracy, the test accuracy the stored study recorded for the same seed (another machine:
the runs need not agree to the last sentence), and the model's P(white car on the left) on
the tutorial's sentence and its twin: the evidence for what the chapter says of seed 0's maps.
Not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from attnbook.cars import predict
from attnbook.cars.shipped import (
    STUDY_ROPE,
    TUTORIAL_PAIR,
    study_rope_recipe,
    study_rope_run,
)
from attnbook.cars.study import load_study
from attnbook.data import write_benchmark_record


def seed_list(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--save", required=True, help="where to write seed 0's weights")
    parser.add_argument("--seeds", type=seed_list, default=seed_list("0-4"))
    args = parser.parse_args()
    if 0 not in args.seeds:
        sys.exit("--seeds must include 0, the seed whose weights ship")
    torch.set_num_threads(1)
    stored = load_study()[1]
    rows = []
    for seed in args.seeds:
        cpu = time.process_time()
        run = study_rope_run(seed)
        cpu = time.process_time() - cpu
        p_sentence, p_twin = (
            float(p) for p in predict(run.model, run.vocab, TUTORIAL_PAIR)
        )
        rows.append(
            {
                "seed": seed,
                "train_accuracy": round(run.train_accuracy, 4),
                "test_accuracy": round(run.test_accuracy, 4),
                "study_test_accuracy": stored[STUDY_ROPE, "random pairs", seed][
                    "test_accuracy"
                ],
                "n_test": len(run.test_idx),
                "p_sentence": round(p_sentence, 6),
                "p_twin": round(p_twin, 6),
                "cpu_seconds": round(cpu, 1),
            }
        )
        print(rows[-1], flush=True)
        if seed == 0:
            torch.save(
                {
                    "recipe": study_rope_recipe(0),
                    "vocab": list(run.vocab.itos),
                    "state_dict": run.model.state_dict(),
                },
                args.save,
            )
    record = str(Path(args.save).with_name("benchmark_cars_rope_model.json"))
    write_benchmark_record(
        record,
        "python " + " ".join(sys.argv),
        args.seeds,
        {"runs": rows},
        recipe=study_rope_recipe(0),
        tutorial_pair=list(TUTORIAL_PAIR),
        threads=torch.get_num_threads(),
        weights=Path(args.save).name,
    )
    print(f"weights written to {args.save}, record to {record}")


if __name__ == "__main__":
    main()
