#!/usr/bin/env python3
"""Collapse progress-bar output stored in executed notebooks to what a terminal would show.

A text progress bar redraws itself with carriage returns; executed notebooks store every
redraw as its own stream output, and the book would print hundreds of lines. nbconvert's own
`CoalesceStreamsPreprocessor` merges consecutive stream outputs of a cell and keeps, on each
line, only the text after the last carriage return; this also drops the run timestamps
nbconvert stores in each cell's metadata.
It also drops the pixel height that retina figures store next to their width: the page
writes both into the image's style, and on a narrow screen, where the width shrinks to the
column, a fixed height would squash the figure.
Run it after executing a notebook:

    python -m tools.tidy_outputs book/06_tiny_gpt.ipynb [...]
"""

from __future__ import annotations

import sys

import nbformat


def tidy(nb: nbformat.NotebookNode) -> bool:
    """Tidy the notebook in place; True if anything changed."""
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    before = nbformat.writes(nb)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # run timestamps: diff noise
    CoalesceStreamsPreprocessor().preprocess(nb, {})
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            # e.g. {"image/png": {width, height}}
            for size in out.get("metadata", {}).values():
                if isinstance(size, dict) and "width" in size:
                    size.pop("height", None)
    return nbformat.writes(nb) != before


if __name__ == "__main__":
    for path in sys.argv[1:]:
        nb = nbformat.read(path, as_version=4)
        if tidy(nb):
            nbformat.write(nb, path)
            print(f"tidied {path}")
