"""The course's one plotting style, and attention heatmaps with token labels (every chapter).

Importing this module sets the style once for the whole book (``use_course_style``): a
colour-blind-safe palette for lines and bars (Okabe & Ito's eight colours), fonts that stay
at least 11 px tall on the page, figures no wider than the book's text column (7 inches at
100 dpi, so the page never shrinks them), and sharp double-resolution images in notebooks.

`plot_losses` draws a training run's losses (chapter 6).

Heatmap convention: queries on the y-axis, keys on the x-axis, so row i of the picture is the
distribution of query token i over the keys, exactly as row i of the weight matrix.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from .train import TrainResult

__all__ = [
    "COLUMN_WIDTH",
    "PALETTE",
    "attention_heatmap",
    "attention_heatmaps",
    "matrix_heatmap",
    "plot_losses",
    "use_course_style",
]

#: Okabe & Ito's colour-blind-safe palette, in the order lines and bars take it.
PALETTE = [
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
]
#: Width of the book's text column in inches at the figures' 100 dpi: wider figures are shrunk.
COLUMN_WIDTH = 7.0


def use_course_style() -> None:
    """Set the course's plotting style (called once when ``attnbook.plot`` is imported).

    Chapter 6.
    """
    mpl.rcParams.update(
        {
            "axes.prop_cycle": cycler(color=PALETTE),
            "figure.figsize": (COLUMN_WIDTH, 4.0),
            "figure.dpi": 100,
            "savefig.dpi": 200,
            "font.size": 11,
            "axes.titlesize": 12,
            "axes.labelsize": 11,
            "xtick.labelsize": 11,
            "ytick.labelsize": 11,
            "legend.fontsize": 11,
            "figure.titlesize": 13,
            "image.cmap": "viridis",
        }
    )
    # sharp images in Jupyter: PNGs at twice the resolution, shown at the same size
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        if get_ipython() is not None:
            set_matplotlib_formats("retina")
    except ImportError:  # not in IPython: nothing to configure
        pass


use_course_style()


def _as_matrix(weights) -> np.ndarray:
    """Accept a (T_q, T_k) NumPy array or torch tensor (any device, with or without grad)."""
    if hasattr(weights, "detach"):
        weights = weights.detach().cpu().numpy()
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2:
        raise ValueError(
            f"expected a (T_q, T_k) matrix of weights, got shape {w.shape}"
        )
    return w


@contextmanager
def _labels_placed_by_us() -> Iterator[None]:
    """Within: seaborn's heatmap skips the full draw of the figure it makes after every
    heatmap to see whether tick labels overlap (and turn them if so). `attention_heatmap`
    sets both labels' rotation itself right after, so that draw decided nothing: a grid of
    n panels with constrained layout paid n draws, ~1 s for four 5 x 5 panels. Where
    seaborn has no such helper (another version), nothing changes."""
    matrix = getattr(sns, "matrix", None)
    draw = getattr(matrix, "_draw_figure", None)
    if draw is None:
        yield
        return
    matrix._draw_figure = lambda fig: None  # type: ignore[union-attr]
    try:
        yield
    finally:
        matrix._draw_figure = draw  # type: ignore[union-attr]


def attention_heatmap(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    vmin: float = 0.0,
    vmax: float | None = 1.0,
    annot: bool | None = None,
    cmap: str = "viridis",
    cbar: bool = True,
) -> Axes:
    """Draw one (T_q, T_k) weight matrix; queries label the rows, keys the columns.

    ``key_tokens`` defaults to ``query_tokens`` (self-attention). Cells are annotated with
    their values when the matrix is small (at most 10 x 10) unless ``annot`` says otherwise.

    Chapters 1 and 5.
    """
    w = _as_matrix(weights)
    key_tokens = list(query_tokens if key_tokens is None else key_tokens)
    query_tokens = list(query_tokens)
    if w.shape != (len(query_tokens), len(key_tokens)):
        raise ValueError(
            f"weights have shape {w.shape} but there are {len(query_tokens)} query tokens "
            f"and {len(key_tokens)} key tokens"
        )
    if annot is None:
        annot = max(w.shape) <= 10
    if ax is None:
        size = (1.0 + 0.6 * len(key_tokens), 0.8 + 0.5 * len(query_tokens))
        _, ax = plt.subplots(figsize=(max(size[0], 3.5), max(size[1], 2.5)))
    with _labels_placed_by_us():
        sns.heatmap(
            w,
            ax=ax,
            vmin=vmin,
            vmax=vmax,
            cmap=cmap,
            annot=annot,
            fmt=".2f",
            square=True,
            xticklabels=key_tokens,
            yticklabels=query_tokens,
            cbar=cbar,
            cbar_kws={"label": "attention weight"} if cbar else None,
            annot_kws={"fontsize": 10},
        )
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    ax.tick_params(axis="x", labelrotation=45)
    ax.tick_params(axis="y", labelrotation=0)
    if title:
        ax.set_title(title)
    return ax


def attention_heatmaps(
    weights_list: Sequence,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    titles: Sequence[str] | None = None,
    suptitle: str | None = None,
    ncols: int | None = None,
    vmax: float | None = 1.0,
    annot: bool | None = False,
    max_width: float | None = None,
) -> Figure:
    """Several (T_q, T_k) weight matrices in a grid with one shared colour scale.

    Used for per-head and per-layer pictures (chapters 1-4, 6 and 7). The scale runs from 0
    to ``vmax``, by default 1 — the same scale for every weight heatmap of the book, so that
    colours can be compared across figures; ``vmax=None`` uses the largest weight shown.
    With many panels, pass ``ncols`` to stack them in rows; ``max_width`` (e.g.
    ``COLUMN_WIDTH``) shrinks a wider figure to that many inches, keeping its proportions.
    """
    mats = [_as_matrix(w) for w in weights_list]
    if not mats:
        raise ValueError("weights_list is empty")
    if titles is not None and len(titles) != len(mats):
        raise ValueError(f"{len(titles)} titles for {len(mats)} matrices")
    if ncols is not None and (
        isinstance(ncols, bool) or not isinstance(ncols, int) or ncols <= 0
    ):
        raise ValueError(f"ncols must be a positive int, got {ncols!r}")
    ncols = ncols or len(mats)
    nrows = -(-len(mats) // ncols)
    vmax = max(float(m.max()) for m in mats) if vmax is None else vmax
    n_k = len(key_tokens if key_tokens is not None else query_tokens)
    width = 0.55 * n_k * ncols + 1.5
    height = 0.5 * len(query_tokens) * nrows + 1.2
    if max_width is not None and width > max_width:  # shrink, keeping the proportions
        height, width = height * max_width / width, max_width
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(width, max(height, 2.5)),
        squeeze=False,
        constrained_layout=True,
    )
    for i, ax in enumerate(axes.flat):
        if i >= len(mats):
            ax.axis("off")
            continue
        attention_heatmap(
            mats[i],
            query_tokens,
            key_tokens,
            ax=ax,
            vmax=vmax,
            annot=annot,
            title=titles[i] if titles else None,
            cbar=False,
        )
        if i % ncols:
            ax.set_ylabel("")
    mappable = axes.flat[0].collections[0]
    fig.colorbar(mappable, ax=axes, shrink=0.8, label="attention weight")
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def matrix_heatmap(
    values,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    vmax: float | None = None,
    cmap: str = "RdBu_r",
    annot: bool = True,
    fmt: str = ".2f",
) -> Axes:
    """Draw any labelled (rows, columns) matrix, e.g. X, Q, K, V, S or H (chapter 1).

    Signed numbers get a diverging colour scale centred on 0, from ``-vmax`` to ``vmax``
    (default: the largest absolute value shown), so that white means zero. Columns default
    to feature numbers ``0, 1, ...``. For attention weights use ``attention_heatmap``.
    """
    m = _as_matrix(values)
    row_labels = list(row_labels)
    col_labels = (
        [str(c) for c in range(m.shape[1])] if col_labels is None else list(col_labels)
    )
    if m.shape != (len(row_labels), len(col_labels)):
        raise ValueError(
            f"values have shape {m.shape} but there are {len(row_labels)} row labels "
            f"and {len(col_labels)} column labels"
        )
    vmax = float(np.abs(m).max()) if vmax is None else vmax
    if ax is None:
        _, ax = plt.subplots(
            figsize=(min(COLUMN_WIDTH, 1.2 + 0.7 * m.shape[1]), 0.9 + 0.5 * m.shape[0])
        )
    sns.heatmap(
        m,
        ax=ax,
        vmin=-vmax,
        vmax=vmax,
        center=0.0,
        cmap=cmap,
        annot=annot,
        fmt=fmt,
        xticklabels=col_labels,
        yticklabels=row_labels,
        cbar=False,
        annot_kws={"fontsize": 10},
    )
    ax.tick_params(axis="y", labelrotation=0)
    if title:
        ax.set_title(title)
    return ax


def plot_losses(
    result: TrainResult, baseline: float | None = None, ax: Axes | None = None
) -> Axes:
    """Train and validation loss against iterations (with an optional baseline line), each
    step's training loss faint underneath (chapter 6)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.8))
    its = [r["iter"] for r in result.history]
    faint: Any = dict(color="0.5", alpha=0.35, lw=0.6, label="train, per step")
    if result.step_losses:  # every step's own batch, under the estimates
        ax.plot(range(1, len(result.step_losses) + 1), result.step_losses, **faint)
    ax.plot(its, [r["train_loss"] for r in result.history], marker="o", label="train")
    ax.plot(
        its, [r["val_loss"] for r in result.history], marker="o", label="validation"
    )
    if baseline is not None:
        ax.axhline(baseline, color="grey", linestyle="--", label="unigram baseline")
    ax.set_xlabel("iteration")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title("Tiny GPT: loss during training")
    ax.legend()
    return ax
