#!/usr/bin/env python3
"""Collapse progress-bar output stored in executed notebooks to what a terminal would show.

A text progress bar redraws itself with carriage returns; executed notebooks store every
redraw as its own stream output, and the book would print hundreds of lines. This merges
consecutive stream outputs of a cell and keeps, on each line, only the text after the last
carriage return, and drops the run timestamps nbconvert stores in each cell's metadata.
Run it after executing a notebook:

    python tools/tidy_outputs.py book/06_tiny_gpt.ipynb [...]
"""
from __future__ import annotations

import sys

import nbformat


def collapse(text: str) -> str:
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def tidy(nb: nbformat.NotebookNode) -> bool:
    changed = False
    for cell in nb.cells:
        if cell.metadata.pop("execution", None) is not None:  # run timestamps: diff noise
            changed = True
        if cell.cell_type != "code":
            continue
        merged: list = []
        for out in cell.outputs:
            if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == out.name):
                merged[-1].text += out.text
                changed = True
            else:
                merged.append(out)
        for out in merged:
            if out.output_type == "stream" and "\r" in out.text:
                out.text = collapse(out.text)
                changed = True
        cell.outputs = merged
    return changed


if __name__ == "__main__":
    for path in sys.argv[1:]:
        nb = nbformat.read(path, as_version=4)
        if tidy(nb):
            nbformat.write(nb, path)
            print(f"tidied {path}")
