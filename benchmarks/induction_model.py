#!/usr/bin/env python3
"""Train chapter 10's two-layer model with the chapter's recipe (seed 0, 600 steps) and write
the weights that `attnbook.induction_run.trained_chapter_model(0)` loads, with the recipe
they were trained with and the induction metrics they reach:

    OMP_NUM_THREADS=1 python benchmarks/induction_model.py \\
        --save src/attnbook/data/ch10_induction_model.pt

Run it again whenever `InductionTask`, `chapter_model` or `chapter_train_config` changes
(loading refuses weights trained with another recipe).
"""

from __future__ import annotations

import argparse
import time

import torch

from attnbook.induction_run import (
    InductionTask,
    induction_metrics,
    shipped_recipe,
    trained_chapter_model,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--save", required=True, help="where to write the weights (.pt)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    model = trained_chapter_model(0, shipped=False)
    task = InductionTask()
    metrics = induction_metrics(model, task, task.eval_data())
    torch.save(
        {
            "recipe": shipped_recipe(0),
            "metrics": metrics,
            "torch": str(torch.__version__),
            "state_dict": {
                k: v.detach().clone() for k, v in model.state_dict().items()
            },
        },
        args.save,
    )
    took = time.perf_counter() - start
    print(
        f"trained in {took:.1f} s; "
        + ", ".join(f"{k} {v:.3f}" for k, v in metrics.items())
    )
    print(f"wrote {args.save}")


if __name__ == "__main__":
    main()
