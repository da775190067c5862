"""The package writes nothing to stderr in a plain Jupyter kernel without ipywidgets (issue:
tqdm.auto's "IProgress not found" warning showed as a red box on Colab-like machines)."""

import ast
from pathlib import Path

import nbformat

from tools.run_chapters import run_notebook

SRC = Path(__file__).resolve().parents[1] / "src" / "attnbook"
WIDGET_BARS = {"tqdm.auto", "tqdm.notebook", "tqdm.autonotebook"}


def test_no_module_imports_a_widget_progress_bar():
    found = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [
                f"{path.relative_to(SRC)}: {n}" for n in names if n in WIDGET_BARS
            ]
    assert not found, f"use tqdm.std (plain text bars): {found}"


def test_package_is_quiet_in_a_kernel_without_ipywidgets(tmp_path):
    cells = [
        "import sys\nsys.modules['ipywidgets'] = None  # as a plain Jupyter without widgets",
        "import importlib, pkgutil\nimport attnbook\n"
        # exercise_checks.case subclasses otter's test case: only the exercises' test
        # files import it, under otter, which itself needs ipywidgets
        "for m in pkgutil.walk_packages(attnbook.__path__, 'attnbook.'):\n"
        "    if m.name != 'attnbook.exercise_checks.case':\n"
        "        importlib.import_module(m.name)",
        "import torch\nfrom attnbook.gpt import GPT, GPTConfig\n"
        "from attnbook.train import TrainConfig, train\n"
        "data = torch.arange(400) % 7\n"
        "model = GPT(GPTConfig(vocab_size=7, block_size=8, n_layer=1, n_head=2, n_embd=16))\n"
        "train(model, data[:300], data[300:], TrainConfig(max_iters=3, batch_size=2, eval_interval=3,\n"
        "      eval_iters=1))",
    ]
    path = tmp_path / "quiet.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]),
        path,
    )
    verdict = run_notebook(path, timeout=120)
    assert verdict.passed, verdict.problems
