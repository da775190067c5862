"""The big map of an attention view (`attnbook.explore`, chapters 1, 3, 6, 7, 9, 10) with
its axis labels: the query tokens along the rows, the key tokens along the columns, as HTML
beside the canvas.

The labels are text, placed over the map's rows and columns in percent, so they follow the
canvas at any width. Each must fit its row (or column) at the narrowest map the page gives,
a phone's (`NARROWEST` pixels): when the rows are too thin for a token each, every k-th
row and column is labelled with its index instead (k from `STEPS`), and the status line
names the chosen query's token as before. Word tokens too wide to sit under their column
are written sideways.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from .explore_picture import shown

__all__ = ["NARROWEST", "STEPS", "big_map", "label_step", "label_text"]

#: The map's narrowest width in CSS pixels: 295 in the built book at 390 px, beside
#: six-letter row labels.
NARROWEST = 280.0
#: The labels' font size in CSS pixels (0.65rem) and one monospace character's width.
FONT = 10.4
CHAR = 0.62 * FONT
#: A label needs this much room across its row: its line and a little air.
LINE = 1.1 * FONT
#: Every k-th row and column is labelled, k one of these.
STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500)


def label_step(n_keys: int) -> int:
    """Label every k-th row and column: the smallest k in `STEPS` whose k rows hold a
    line of label text at the narrowest map (the cells are square: its width / n_keys).

    Chapter 1.
    """
    pitch = NARROWEST / n_keys
    return next(k for k in STEPS if k * pitch >= LINE)


def label_text(token: str) -> str:
    """A token as an axis label: as the view shows it, a space made visible too.

    Chapter 1.
    """
    return "\u2423" if token == " " else shown(token)


def _widest(lists: Sequence[Sequence[str]]) -> int:
    return max(len(label_text(t)) for seq in lists for t in seq)


def big_map(
    query_lists: Sequence[Sequence[str]],
    key_lists: Sequence[Sequence[str]],
    opening: int = 0,
) -> str:
    """The ``.attnx-big`` block: the canvas (drawn by the script), its labels and caption.

    query_lists, key_lists: every token list the view can show on each axis (one per layer
    for a view with a sequence per layer); the labels show list `opening` of each.

    Chapter 1.
    """
    n_q, n_k = len(query_lists[0]), len(key_lists[0])
    step = label_step(n_k)
    tokens = step == 1
    pitch = NARROWEST / n_k
    if tokens:
        row_w, col_len = _widest(query_lists), _widest(key_lists)
    else:
        row_w = col_len = len(str(max(n_q, n_k) - 1))
    sideways = col_len * CHAR > step * pitch - 2
    col_h = f"{col_len}ch" if sideways else "1.3em"

    def labels(axis: str, n: int, names: Sequence[str]) -> str:
        where = "top" if axis == "q" else "left"
        spans = []
        for i in range(0, n, step):
            text = html.escape(label_text(names[i]) if tokens else str(i))
            at = f"{100 * (i + 0.5) / n:.3f}".rstrip("0").rstrip(".")
            spans.append(
                f'<span class="attnx-lab" data-l{axis}="{i}" style="{where}: {at}%">'
                f"{text}</span>"
            )
        return "".join(spans)

    if tokens:
        axes = (
            "rows: the queries, labelled at the left; columns: the keys, labelled above"
        )
    else:
        axes = (
            f"rows: the queries, columns: the keys, numbered every {step} tokens; "
            "the status line above names the chosen query's token"
        )
    kind = "attnx-tokens" if tokens else "attnx-index"
    cols = "attnx-cols attnx-sideways" if sideways else "attnx-cols"
    return (
        f'<div class="attnx-big"><div class="attnx-map {kind}" '
        f'style="--attnx-row-w: {row_w}ch; --attnx-col-h: {col_h}">'
        f'<div class="{cols}" aria-hidden="true">'
        f"{labels('k', n_k, key_lists[opening])}</div>"
        '<div class="attnx-rows" aria-hidden="true">'
        f"{labels('q', n_q, query_lists[opening])}</div>"
        '<canvas role="img" aria-label="the chosen head: rows are queries, columns '
        f'keys"></canvas></div><p class="attnx-axes">{axes}</p></div>'
    )
