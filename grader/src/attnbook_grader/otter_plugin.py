"""Why ``otter run -a exNN.zip submission.ipynb`` refuses.

`otter run` never calls the zip's ``run_autograder``: it grades with otter's own pipeline,
which runs the submission in the instructor's process and user, outside this course's
engine (no child process, no sandbox user, no limits, no verdicts from the source). The
autograder zips therefore name `EngineOnly` among their otter plugins
(``otter_config.json``, `engine_only_config`), and otter calls it before anything of the
submission runs: it stops the grading with a message that says how to grade instead.
"""

from __future__ import annotations

import json
from typing import Any

try:
    from otter.plugins import AbstractOtterPlugin
except ImportError:  # no otter here (or none that imports: it needs ipywidgets), so no
    # `otter run` to refuse either; the module still imports, as every module of the package
    AbstractOtterPlugin = object

__all__ = ["EngineOnly", "REFUSAL", "engine_only_config"]

PLUGIN = "attnbook_grader.otter_plugin.EngineOnly"
REFUSAL = (
    "this autograder grades only through the course's engine, which runs the submission "
    "in a sandboxed child process and decides every verdict outside it; `otter run` would "
    "run the submission in your own process. Grade with `make grade EXERCISE=exNN "
    "SUBMISSIONS=folder` (python -m tools.exercises grade) or upload the zip to Gradescope "
    "(its run_autograder calls the engine)."
)


class EngineOnlyError(RuntimeError):
    """Raised by `EngineOnly` to stop otter's own grading pipeline."""


class EngineOnly(AbstractOtterPlugin):
    """An otter plugin that refuses to let otter's own pipeline grade."""

    def before_grading(self, autograder_config: Any) -> None:  # noqa: ARG002
        raise EngineOnlyError(REFUSAL)


def engine_only_config(data: bytes) -> bytes:
    """An autograder zip's ``otter_config.json`` with `EngineOnly` among its plugins."""
    config = json.loads(data or b"{}")
    plugins = [p for p in config.get("plugins", []) if p != PLUGIN]
    config["plugins"] = [PLUGIN, *plugins]
    return json.dumps(config, indent=2).encode()
