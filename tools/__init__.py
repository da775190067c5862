"""The maintainer tools of the course; run them as `python -m tools.NAME` from the repository root."""
