"""The picture of an attention view (`attnbook.explore`, chapters 1, 3, 6, 7, 9, 10): a PNG
of its opening state, for where scripts do not run. The view's HTML carries it inline as
an ``<img>`` (a data URI) that its script hides once it runs; the display bundle also
holds it as ``image/png``.

Also the labels the view and its picture share: how a token is shown and how a head is
named in the grid.
"""

from __future__ import annotations

import base64
import io
import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from PIL import Image

from .plot import COLUMN_WIDTH, PALETTE

__all__ = ["cell_name", "picture_png", "picture_uri", "shown", "spaced"]

GRID_PICTURE = 16  # heads drawn in the picture's grid, at most


def shown(token: str) -> str:
    """A token as the view prints it: whitespace made visible where it would vanish.

    Chapters 3, 8 and 10.
    """
    return {"\n": "\u21b5", "\t": "\u21e5", "": "\u2205"}.get(token, token)


def spaced(tokens: Sequence[str]) -> bool:
    """Words (shown apart) rather than characters (shown as running text).

    Chapter 1.
    """
    return any(len(t) > 1 for t in tokens)


def cell_name(
    layer_names: Sequence[str], head_names: Sequence[str], l: int, h: int
) -> str:
    """A head's label in the grid: "L1 H2" for the default names, else the names.

    Chapter 1.
    """
    layer, head = layer_names[l], head_names[h]
    head = f"H{h}" if head == f"head {h}" else head
    if len(layer_names) == 1:
        return head
    return f"L{l} {head}" if layer == f"layer {l}" else f"{layer}, {head}"


def _strip_lines(keys: Sequence[str], per_line: int) -> list[list[tuple[int, int]]]:
    """The keys laid out as text, `per_line` character widths a line: (key, x) per line."""
    units = [max(len(shown(t)), 1) + (1 if spaced(keys) else 0) for t in keys]
    x = 0
    lines: list[list[tuple[int, int]]] = [[]]
    for k, u in enumerate(units):
        if x + u > per_line and lines[-1]:
            lines.append([])
            x = 0
        lines[-1].append((k, x))
        x += u
        if keys[k] == "\n" and not spaced(keys):
            lines.append([])
            x = 0
    return lines


def picture_png(
    weights: np.ndarray,
    tokens: Sequence[str],
    key_tokens: Sequence[str] | None,
    layer_names: Sequence[str],
    head_names: Sequence[str],
    start: tuple[int, int, int],
    title: str | None,
) -> bytes:
    """A PNG of a view's opening state: the chosen head's shading of the keys for the
    chosen query, and the grid of heads (at most 16), in the course's colours.

    weights: (layers, heads, T_q, T_k) in [0, 1]; start: (layer, head, query).

    Chapter 1.
    """
    n_layer, n_head, _, _ = weights.shape
    layer, head, q = start
    keys = key_tokens or tokens
    cmap = LinearSegmentedColormap.from_list("attnx", ["#ffffff", PALETTE[0]])
    per_line = 60
    lines = _strip_lines(keys, per_line)
    n_grid = min(n_layer * n_head, GRID_PICTURE) if n_layer * n_head > 1 else 0
    ncols = min(n_grid, 8) or 1
    grid_rows = -(-n_grid // ncols) if n_grid else 0
    strip_h = 0.3 * len(lines) + 0.5
    cell_h = COLUMN_WIDTH / ncols
    fig = Figure(figsize=(COLUMN_WIDTH, strip_h + grid_rows * (cell_h + 0.25)))
    heights = [strip_h] + [cell_h + 0.25] * grid_rows
    gs = fig.add_gridspec(1 + grid_rows, ncols, height_ratios=heights, hspace=0.35)
    ax = fig.add_subplot(gs[0, :])
    ax.set_xlim(0, per_line)
    ax.set_ylim(len(lines), -0.6)
    ax.axis("off")
    chosen = (
        f"{layer_names[layer]}, {head_names[head]}: query {q} "
        f"{shown(tokens[q])!r} (outlined), keys shaded by weight"
    )
    caption = textwrap.wrap(title, 80) if title else []
    ax.set_title("\n".join([*caption, chosen]), fontsize=10, loc="left")
    for y, line in enumerate(lines):
        for k, x0 in line:
            weight = float(weights[layer, head, q, k])
            outline = k == q and key_tokens is None
            box = dict(
                facecolor=cmap(weight),
                edgecolor="black" if outline else "none",
                boxstyle="square,pad=0.15",
            )
            ax.text(
                x0,
                y,
                shown(keys[k]),
                family="monospace",
                fontsize=10,
                va="center",
                color="white" if weight > 0.55 else "black",
                bbox=box,
            )
    for i in range(n_grid):
        l, h = divmod(i, n_head)
        cell = fig.add_subplot(gs[1 + i // ncols, i % ncols])
        cell.imshow(
            weights[l, h], cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest"
        )
        cell.set_title(cell_name(layer_names, head_names, l, h), fontsize=9)
        cell.set_xticks([])
        cell.set_yticks([])
    drawn = io.BytesIO()
    fig.savefig(drawn, format="png", dpi=100, bbox_inches="tight", pad_inches=0.1)
    # 64 colours hold the white-to-blue scale and the text: a third of the bytes, since the
    # picture travels inside the view's HTML
    image = Image.open(drawn).convert("RGB").quantize(64, Image.Quantize.MEDIANCUT)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def picture_uri(png: bytes) -> str:
    """The PNG as a data URI, for an ``<img src=…>`` that needs no file and no request.

    Chapter 1.
    """
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def asset(name: str) -> str:
    """A file the views ship in ``attnbook/data`` (their script and style), as text.

    Chapters 10 and 11.
    """
    import importlib.resources

    return importlib.resources.files("attnbook.data").joinpath(name).read_text("utf-8")


class PictureBundle:
    """What a view shows in a notebook: its live HTML where scripts run, its PNG picture
    elsewhere (a viewer that sanitises HTML, a launch copy), its one-line text in plain
    output. A view provides ``to_png()`` and ``to_html(png)``.

    Chapters 10 and 11.
    """

    def to_png(self) -> bytes:
        raise NotImplementedError

    def to_html(self, png: bytes) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        png = self.to_png()
        return {
            "text/html": self.to_html(png),
            "image/png": base64.b64encode(png).decode("ascii"),
            "text/plain": repr(self),
        }
