"""The repository's tools, one module per command, each run from the repository root as
``python -m tools.NAME`` (see the Makefile). Library code here raises typed exceptions; only a
tool's command line turns them into exit codes."""


class ToolError(Exception):
    """A tool cannot do what it was asked; its command line prints this and exits 1."""
