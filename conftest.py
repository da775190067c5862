"""The repository root on sys.path for the tests: `tools` is imported as a package
(`from tools import run_chapters`), as `python -m tools.run_chapters` runs it."""
