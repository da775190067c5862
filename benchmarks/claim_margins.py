#!/usr/bin/env python3
"""How much room every training- or sampling-dependent claim of chapters 1, 6, 7 and 8
has: each chapter re-run under several seeds and both numerical configurations of the test
suite, and the worst margin of each claim printed.

    python benchmarks/claim_margins.py                        # seeds 0-4, both configurations
    python benchmarks/claim_margins.py --chapters 6,8 --seeds 0,1 --configs native
    python benchmarks/claim_margins.py --workers 16 --json margins.json

A run executes the chapter's code cells in order, in a fresh Python process, as a reader's
kernel would (plots drawn off screen, glue stored nowhere). Seed k shifts every seed the chapter
hands to torch by k (`torch.manual_seed(s)` and `torch.Generator().manual_seed(s)` become seed
s + k), so seed 0 is the page's own run and every other seed draws other weights, batches and
samples; `random` and NumPy seeds (data generation, splits) stay as they are. The "portable"
configuration is the Makefile's PORTABLE_ENV (non-vectorised PyTorch kernels on one thread,
NumPy without its AVX2/AVX-512 paths). Every `assert` of the chapter is recorded instead of
stopping the run, so one failing claim does not hide the others; a failed assert that is not
in the table below is reported too.

A claim's margin is in its own units (nats, a ratio, a count), positive when the claim
holds: for `a < b` it is b - a. Not a test: the numbers depend on the machine. (No chapter
asserts a timing: timings come from the shipped benchmark records.)
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = {
    1: "book/01_attention.ipynb",
    6: "book/06_tiny_gpt.ipynb",
    7: "book/07_car_classifier.ipynb",
    8: "book/08_modern_attention.ipynb",
}


def portable_env() -> dict[str, str]:
    """The Makefile's PORTABLE_ENV (the second configuration of `make nbval`) as a dict."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    variables = dict(re.findall(r"^(\w+) := (.*)$", text, re.MULTILINE))
    if "PORTABLE_ENV" not in variables:
        raise SystemExit("no PORTABLE_ENV in the Makefile")
    value = variables["PORTABLE_ENV"]
    while (ref := re.search(r"\$\((\w+)\)", value)) is not None:  # $(ONE_THREAD_ENV)
        value = value.replace(ref.group(0), variables.get(ref.group(1), ""))
    return dict(item.split("=", 1) for item in shlex.split(value))


@dataclass(frozen=True)
class Claim:
    name: str  # what the chapter claims, in a few words
    anchor: str  # a line of the code cell after which the margin is read
    margin: str  # an expression in the chapter's names: > 0 when the claim holds


CLAIMS: dict[int, list[Claim]] = {
    1: [
        Claim(
            "dropout: the mean of 4000 draws is the weights (atol 0.05)",
            "mean_of_many = torch.stack(",
            "0.05 - (mean_of_many - w_layer).abs().max().item()",
        ),
        Claim(
            "random layer: no weight reaches 0.5",
            "assert w_sentence.max() < 0.5",
            "0.5 - w_sentence.max().item()",
        ),
        Claim(
            "random layer: row entropy above 0.9",
            "assert w_sentence.max() < 0.5",
            "spread - 0.9",
        ),
        Claim(
            "favourite key of 'it': at least 4 different ones",
            "favourites = {}",
            "len(favourites) - 3",
        ),
        Claim(
            "favourite key of 'it': none wins more than 10 of 20",
            "favourites = {}",
            "11 - max(favourites.values())",
        ),
        Claim(
            "200 layers: median query variance in (0.28, 0.40)",
            "spreads = np.array(",
            "min(q_var - 0.28, 0.40 - q_var)",
        ),
        Claim(
            "200 layers: median scaled-score std in (0.28, 0.40)",
            "spreads = np.array(",
            "min(score_std - 0.28, 0.40 - score_std)",
        ),
        Claim(
            "200 layers: 90th percentile of the std below 0.6",
            "spreads = np.array(",
            "0.6 - high",
        ),
        Claim(
            "lookup head untrained: accuracy below 0.45",
            "losses = train_lookup_head(",
            "0.45 - before['accuracy']",
        ),
        Claim(
            "lookup head untrained: weight on the entry below 0.2",
            "losses = train_lookup_head(",
            "0.2 - before['weight_on_entry']",
        ),
        Claim(
            "lookup head trained: accuracy above 0.95",
            "losses = train_lookup_head(",
            "after['accuracy'] - 0.95",
        ),
        Claim(
            "lookup head trained: weight on the entry above 0.8",
            "losses = train_lookup_head(",
            "after['weight_on_entry'] - 0.8",
        ),
        Claim(
            "reversal untrained: aligned weight below 0.2 (both scores)",
            "rev_scores = {}",
            "0.2 - max(b['weight_on_aligned'] for b, _ in rev_scores.values())",
        ),
        Claim(
            "reversal untrained: under 1 % of sequences reversed (both)",
            "rev_scores = {}",
            "0.01 - max(b['sequence_accuracy'] for b, _ in rev_scores.values())",
        ),
        Claim(
            "reversal trained: over 95 % of sequences reversed (both)",
            "rev_scores = {}",
            "min(a['sequence_accuracy'] for _, a in rev_scores.values()) - 0.95",
        ),
        Claim(
            "reversal trained, dot product: aligned weight above 0.9",
            "rev_scores = {}",
            "rev_scores['dot'][1]['weight_on_aligned'] - 0.9",
        ),
        Claim(
            "reversal trained, additive: aligned weight above 0.75",
            "rev_scores = {}",
            "rev_scores['additive'][1]['weight_on_aligned'] - 0.75",
        ),
        Claim(
            "reversal trained: additive less concentrated than dot product",
            "rev_scores = {}",
            "rev_scores['dot'][1]['weight_on_aligned']"
            " - rev_scores['additive'][1]['weight_on_aligned']",
        ),
        Claim(
            "reversal trained: over 95 % of symbols right with random previous digits",
            "random_prev_acc = {}",
            "min(random_prev_acc.values()).item() - 0.95",
        ),
    ],
    6: [
        Claim(
            "untrained loss within 0.5 of ln V",
            "nll[repeat].mean()",
            "0.5 - abs(loss.item() - math.log(V))",
        ),
        Claim(
            "untrained: repeats cost 0.5 nats less",
            "nll[repeat].mean()",
            "nll[~repeat].mean().item() - 0.5 - nll[repeat].mean().item()",
        ),
        Claim(
            "untrained: elsewhere within 0.1 of ln V",
            "nll[repeat].mean()",
            "0.1 - abs(nll[~repeat].mean().item() - math.log(V))",
        ),
        Claim(
            "trained: below 0.62 x unigram",
            "nll_val = loss_by_position(",
            "0.62 * baseline - final",
        ),
        Claim(
            "trained: 0.03 below the trigram",
            "nll_val = loss_by_position(",
            "ladder[2] - 0.03 - final",
        ),
        Claim(
            "trained: above the 4-gram",
            "nll_val = loss_by_position(",
            "final - ladder[3]",
        ),
        Claim(
            "trained: within 0.3 of the 4-gram",
            "nll_val = loss_by_position(",
            "ladder[3] + 0.3 - final",
        ),
        Claim(
            "train loss falls by 2 nats",
            "nll_val = loss_by_position(",
            "result.history[0]['train_loss'] - 2.0 - result.history[-1]['train_loss']",
        ),
        Claim("context 1 > 2", "by_span = {", "by_span['1 character'] - by_span['2']"),
        Claim("context 2 > 3", "by_span = {", "by_span['2'] - by_span['3']"),
        Claim(
            "context 3 > 4 to 16", "by_span = {", "by_span['3'] - by_span['4 to 16']"
        ),
        Claim(
            "1 character: bigram table better",
            "by_span = {",
            "by_span['1 character'] - ladder[1]",
        ),
        Claim(
            "3 characters: 4-gram table better",
            "by_span = {",
            "by_span['3'] - ladder[3]",
        ),
        Claim(
            "17 to 64 within 0.06 of 4 to 16",
            "by_span = {",
            "0.06 - abs(by_span['17 to 64'] - by_span['4 to 16'])",
        ),
        Claim(
            "trained sample: at least 3 marks of a play",
            "after, before = play_features(",
            "sum(after.values()) - 2.5",
        ),
        Claim(
            "untrained sample: no mark of a play",
            "after, before = play_features(",
            "0.5 - sum(before.values())",
        ),
        Claim(
            "top-k draws: frequencies within 0.015",
            "draws = sample_next_token(\n    z.expand(n_draws, V),\n    temperature",
            "0.015 - (observed - expected).abs().max().item()",
        ),
        Claim(
            "nucleus: sure context keeps fewer",
            "def nucleus(probs, p):",
            "sizes['ROMEO:\\nI will '] - sizes['ROMEO:\\nWherefor']",
        ),
        Claim(
            "top-p draws: frequencies within 0.015",
            "def nucleus(probs, p):",
            "0.015 - (observed - expected).abs().max().item()",
        ),
        Claim(
            "tau 0.5 and top-k 3 score 0.5 above tau 1.5",
            "scores = {label: mean_log",
            "min(scores['tau = 0.5'], scores['tau = 1.0, top-k = 3']) - scores['tau = 1.5'] - 0.5",
        ),
        Claim(
            "top-p 0.9 scores 0.5 above tau 1.5",
            "scores = {label: mean_log",
            "scores['tau = 1.0, top-p = 0.9'] - scores['tau = 1.5'] - 0.5",
        ),
        Claim(
            "layer 1 reads 2x further back than layer 0 (means)",
            "look_back, previous = [], []",
            "look_back[1].mean().item() - 2 * look_back[0].mean().item()",
        ),
        Claim(
            "layer 0's most local head: look-back below half of uniform",
            "for layer in range(2):",
            "0.5 * lb_uniform - look_back[0].min().item()",
        ),
        Claim(
            "layer 0: a head gives the previous character 2x uniform",
            "for layer in range(2):",
            "previous[0].max().item() - 2 * prev_uniform",
        ),
        Claim(
            "layer 1 look-back within 30 % of uniform",
            "for layer in range(2):",
            "0.3 * lb_uniform - (look_back[1] - lb_uniform).abs().max().item()",
        ),
        Claim(
            "layer 1 previous-character weight below 2x uniform",
            "for layer in range(2):",
            "2 * prev_uniform - previous[1].max().item()",
        ),
        Claim(
            "layer 1: every head's row entropy below 0.95 of uniform's",
            "for layer in range(2):",
            "0.95 - entropy_share[1].max().item()",
        ),
        Claim(
            "layer 1: largest weight of a row over 3x uniform's",
            "for layer in range(2):",
            "largest_weight[1].min().item() - 3 * largest_uniform",
        ),
        Claim(
            "snippet: the layer-1 tag head reaches 1.5x further",
            "snippet_maps = model.attention_maps(",
            "reach[1] - 1.5 * reach[0]",
        ),
        Claim(
            "snippet: a layer-1 head puts 4x uniform on ':' + newline (ratio - 4)",
            "snippet_maps = model.attention_maps(",
            "on_tag.max().item() / (2 * one_key) - 4",
        ),
    ],
    7: [
        Claim(
            "no positions: twins' logits equal (1e-4)",
            "gaps, shuffle_gaps = {}, {}",
            "1e-4 - gaps['attention without positions'].max().item()",
        ),
        Claim(
            "RoPE: twins differ on most test pairs",
            "gaps, shuffle_gaps = {}, {}",
            "(gaps['attention + RoPE'] > 0.1).float().mean().item() - 0.5",
        ),
        Claim(
            "live runs inside the stored seeds' range +- 0.1",
            "for kind, run in trained.items():\n    stored",
            "min(min(run.test_accuracy - min(s) + 0.1, max(s) + 0.1 - run.test_accuracy) for run, s in "
            "[(r, [short_runs[k, 'random pairs', x].test_accuracy for x in SEEDS]) "
            "for k, r in trained.items()])",
        ),
    ],
    8: [
        Claim(
            "GQA: all three below 3.0 nats",
            "gqa_rows = {}",
            "3.0 - max(gqa_rows.values())",
        ),
        Claim("GQA: spread below 0.3", "gqa_rows = {}", "0.3 - spread"),
        Claim(
            "ALiBi rises less than 0.1",
            "table = {name: [val_loss(m, n)",
            "0.1 - rise['alibi']",
        ),
        Claim(
            "others rise 0.02 more than ALiBi",
            "table = {name: [val_loss(m, n)",
            "min(rise[k] for k in ('learned', 'sinusoidal', 'rope')) - rise['alibi'] - 0.02",
        ),
        Claim(
            "blockwise peak below 1/8 of naive",
            "naive_out, naive_peak = peak_tensor_bytes(",
            "naive_peak / 8 - block_peak",
        ),
    ],
}


class _RecordAsserts(ast.NodeTransformer):
    """`assert test, msg` -> `if not test: __failed(cell, line)`: a failed claim is noted and
    the chapter runs on."""

    def __init__(self, cell: int) -> None:
        self.cell = cell

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        call = ast.Call(
            ast.Name("__failed", ast.Load()),
            [ast.Constant(self.cell), ast.Constant(node.lineno)],
            [],
        )
        return ast.copy_location(
            ast.If(ast.UnaryOp(ast.Not(), node.test), [ast.Expr(call)], []), node
        )


def run_chapter(chapter: int, offset: int) -> dict:
    """Execute one chapter with its torch seeds shifted by `offset`; the claims' margins."""
    import types

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    plt.show = lambda *a, **k: plt.close("all")
    stub = types.ModuleType("myst_nb")
    stub.glue = lambda name, value, display=False: None  # type: ignore[attr-defined]
    sys.modules["myst_nb"] = stub
    manual_seed = torch.manual_seed

    class ShiftedGenerator(torch.Generator):
        def manual_seed(self, seed):  # type: ignore[override]
            return super().manual_seed(seed + offset)

    torch.manual_seed = lambda seed: manual_seed(seed + offset)  # type: ignore[assignment]
    torch.Generator = ShiftedGenerator  # type: ignore[misc]

    nb = json.loads((ROOT / NOTEBOOKS[chapter]).read_text(encoding="utf-8"))
    failed: list[str] = []
    ns: dict = {
        "__name__": "__main__",
        "__failed": lambda cell, line: failed.append(f"cell {cell}, line {line}"),
    }
    margins: dict[str, float | str] = {}
    pending = list(CLAIMS[chapter])
    os.chdir(ROOT / "book")
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tree = ast.fix_missing_locations(_RecordAsserts(index).visit(ast.parse(source)))
        exec(compile(tree, f"<chapter {chapter} cell {index}>", "exec"), ns)
        for claim in [c for c in pending if c.anchor in source]:
            try:
                margins[claim.name] = float(eval(claim.margin, ns))
            except Exception as err:  # a claim that cannot be computed is a finding too
                margins[claim.name] = f"error: {type(err).__name__}: {err}"
            pending.remove(claim)
        plt.close("all")
    for claim in pending:
        margins[claim.name] = "error: anchor not found"
    return {"margins": margins, "failed_asserts": failed}


def _launch(chapter: int, seed: int, config: str) -> tuple[int, int, str, dict, float]:
    env = dict(os.environ, **(portable_env() if config == "portable" else {}))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--worker", f"{chapter}:{seed}"],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    seconds = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines or not lines[-1].startswith("{"):
        return chapter, seed, config, {"crash": done.stderr[-2000:]}, seconds
    return chapter, seed, config, json.loads(lines[-1]), seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chapters", default="1,6,7,8")
    parser.add_argument(
        "--seeds", default="0,1,2,3,4", help="comma-separated seed shifts"
    )
    parser.add_argument("--configs", default="native,portable")
    parser.add_argument(
        "--workers",
        type=int,
        default=max(1, (os.cpu_count() or 2) // 2),
        help="chapter runs at a time",
    )
    parser.add_argument(
        "--json", default=None, help="also write every run's margins here"
    )
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        chapter, seed = map(int, args.worker.split(":"))
        result = run_chapter(chapter, seed)
        print(json.dumps(result))
        return

    chapters = [int(c) for c in args.chapters.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    configs = args.configs.split(",")
    jobs = [(c, s, k) for c in chapters for k in configs for s in seeds]
    print(
        f"{len(jobs)} chapter runs: chapters {chapters}, seeds {seeds}, configurations {configs}, "
        f"{args.workers} at a time",
        flush=True,
    )
    runs = []
    with ThreadPoolExecutor(args.workers) as pool:
        for chapter, seed, config, result, seconds in pool.map(
            lambda j: _launch(*j), jobs
        ):
            runs.append(
                {
                    "chapter": chapter,
                    "seed": seed,
                    "config": config,
                    "seconds": seconds,
                    **result,
                }
            )
            status = (
                "CRASHED"
                if "crash" in result
                else f"{len(result['failed_asserts'])} failed asserts"
            )
            print(
                f"  chapter {chapter} seed {seed} {config}: {seconds:.0f} s, {status}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1) + "\n")

    print("\n| claim | chapter | worst margin | where | runs |")
    print("| --- | --- | --- | --- | --- |")
    worst_overall = 0.0
    for chapter in chapters:
        for claim in CLAIMS[chapter]:
            values = [
                (r["margins"][claim.name], r["seed"], r["config"])
                for r in runs
                if r["chapter"] == chapter and claim.name in r.get("margins", {})
            ]
            numbers = [v for v in values if isinstance(v[0], float)]
            errors = [v for v in values if not isinstance(v[0], float)]
            if errors:
                print(
                    f"| {claim.name} | {chapter} | {errors[0][0]} | seed {errors[0][1]} {errors[0][2]} | "
                    f"{len(values)} |"
                )
                worst_overall = min(worst_overall, -1.0)
                continue
            if not numbers:
                print(f"| {claim.name} | {chapter} | no run | | 0 |")
                continue
            margin, seed, config = min(numbers)
            worst_overall = min(worst_overall, margin)
            flag = "" if margin > 0 else " FAILS"
            print(
                f"| {claim.name} | {chapter} | {margin:.4g}{flag} | seed {seed} {config} | {len(numbers)} |"
            )
    for r in runs:
        if "crash" in r:
            print(
                f"\nchapter {r['chapter']} seed {r['seed']} {r['config']} crashed:\n{r['crash']}"
            )
        elif r["failed_asserts"]:
            print(
                f"\nchapter {r['chapter']} seed {r['seed']} {r['config']}: failed asserts at "
                + "; ".join(r["failed_asserts"])
            )
    if worst_overall <= 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
