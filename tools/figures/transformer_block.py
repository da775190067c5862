"""Draw the overview figure of a pre-LayerNorm transformer block (used by book/intro.md).

Usage:  python tools/figures/transformer_block.py [preview.png ...]

Writes book/figures/transformer_block.svg with text drawn as paths, no date and fixed element
ids, so re-running the script reproduces the file byte for byte. Extra paths on the command
line get a copy in the format their suffix names (a PNG preview, say).
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # this script only writes files
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "book" / "figures" / "transformer_block.svg"

INK, GREY = "#222222", "#5a5a5a"
FILL = {  # light tints of Okabe-Ito hues (colour-blind friendly)
    "io": "#ececec",
    "embed": "#d3ecd2",
    "norm": "#fbefc4",
    "attn": "#fdd6ae",
    "mlp": "#cde2f4",
}
WIDTH, HEIGHT = 6.9, 9.7  # inches; the axes use inches as data units
X = 2.65  # the residual stream runs up this vertical line
X_SKIP = 0.75  # the skip connections run up this one
X_NOTE = 4.65  # left edge of the chapter notes
BOX_W, BOX_H, R = 2.9, 0.5, 0.16


def box(ax, y: float, text: str, kind: str, bold: bool = False) -> tuple[float, float]:
    """A rounded box centred on the stream at height y; returns (bottom, top)."""
    ax.add_patch(
        FancyBboxPatch(
            (X - BOX_W / 2, y - BOX_H / 2),
            BOX_W,
            BOX_H,
            boxstyle="round,pad=0,rounding_size=0.09",
            fc=FILL[kind],
            ec=INK,
            lw=1.2,
            zorder=3,
        )
    )
    ax.text(
        X,
        y,
        text,
        ha="center",
        va="center",
        fontsize=11,
        color=INK,
        zorder=4,
        fontweight="bold" if bold else "normal",
    )
    return y - BOX_H / 2, y + BOX_H / 2


def plus(ax, y: float) -> tuple[float, float]:
    """A circled plus (element-wise addition) on the stream at height y; returns (bottom, top)."""
    ax.add_patch(Circle((X, y), R, fc="white", ec=INK, lw=1.2, zorder=3))
    ax.plot([X - 0.6 * R, X + 0.6 * R], [y, y], color=INK, lw=1.3, zorder=4)
    ax.plot([X, X], [y - 0.6 * R, y + 0.6 * R], color=INK, lw=1.3, zorder=4)
    return y - R, y + R


def arrow(ax, start: tuple[float, float], end: tuple[float, float]) -> None:
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=13,
            color=INK,
            lw=1.3,
            shrinkA=0,
            shrinkB=0,
            zorder=2,
        )
    )


def skip(ax, y_from: float, y_plus: float) -> None:
    """A residual connection: leaves the stream at y_from (dot), runs up the left side and
    enters the circled plus at y_plus from the left."""
    ax.plot([X, X_SKIP, X_SKIP], [y_from, y_from, y_plus], color=INK, lw=1.3, zorder=2)
    ax.plot([X], [y_from], "o", ms=5, color=INK, zorder=4)
    arrow(ax, (X_SKIP, y_plus), (X - R, y_plus))


def note(ax, y: float, text: str) -> None:
    ax.text(
        X_NOTE, y, text, ha="left", va="center", fontsize=10, color=GREY, style="italic"
    )


def draw() -> plt.Figure:
    plt.rcParams.update(
        {
            "svg.fonttype": "path",
            "svg.hashsalt": "attnbook-transformer-block",
            "font.family": "DejaVu Sans",
        }
    )
    fig = plt.figure(figsize=(WIDTH, HEIGHT))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(0, HEIGHT)
    ax.set_aspect("equal")
    ax.axis("off")

    # Inputs: tokens -> embeddings, plus one position vector per token.
    _, top = box(ax, 0.45, "input tokens:  “I”  “am”  “hungry”", "io")
    bottom, top2 = box(ax, 1.3, "token embeddings", "embed")
    arrow(ax, (X, top), (X, bottom))
    bottom, top = plus(ax, 2.05)
    arrow(ax, (X, top2), (X, bottom))
    ax.text(1.05, 2.05, "positions", ha="right", va="center", fontsize=10.5, color=INK)
    arrow(ax, (1.12, 2.05), (X - R, 2.05))
    note(ax, 2.05, "added vectors: ch. 5;\nRoPE, ALiBi act inside\nattention: ch. 5, 8")

    # The block, repeated N times: a dashed frame around two sub-layers.
    frame_lo, frame_hi = 2.45, 8.05
    ax.add_patch(
        FancyBboxPatch(
            (0.3, frame_lo),
            4.1,
            frame_hi - frame_lo,
            boxstyle="round,pad=0,rounding_size=0.15",
            fc="#f7f7f7",
            ec="#8a8a8a",
            lw=1.1,
            ls=(0, (4, 3)),
            zorder=1,
        )
    )
    ax.text(
        0.45,
        frame_hi - 0.12,
        "transformer block",
        ha="left",
        va="top",
        fontsize=10,
        color=GREY,
    )
    ax.text(
        4.27,
        frame_hi - 0.1,
        "× N",
        ha="right",
        va="top",
        fontsize=14,
        fontweight="bold",
        color=INK,
    )

    # Sub-layer 1: LayerNorm -> multi-head attention -> add the input back.
    y_from, y_plus = 2.72, 4.85
    b, t_norm = box(ax, 3.3, "LayerNorm", "norm")
    arrow(ax, (X, top), (X, b))
    b, t_att = box(ax, 4.1, "multi-head attention", "attn", bold=True)
    arrow(ax, (X, t_norm), (X, b))
    b, top = plus(ax, y_plus)
    arrow(ax, (X, t_att), (X, b))
    skip(ax, y_from, y_plus)
    note(ax, 4.1, "chapters 1–4; shared\nkey/value heads and\nwindows: chapter 8")

    # Sub-layer 2: LayerNorm -> feed-forward MLP (each token on its own) -> add.
    y_from, y_plus = 5.27, 7.4
    b, t_norm = box(ax, 5.85, "LayerNorm", "norm")
    arrow(ax, (X, top), (X, b))
    b, t_mlp = box(ax, 6.65, "feed-forward MLP", "mlp", bold=True)
    arrow(ax, (X, t_norm), (X, b))
    b, top = plus(ax, y_plus)
    arrow(ax, (X, t_mlp), (X, b))
    skip(ax, y_from, y_plus)
    note(ax, 6.65, "chapters 1 and 6: one\nMLP, applied to each\ntoken")

    # After the last block: a final LayerNorm and one output vector per token.
    b, t_norm = box(ax, 8.5, "final LayerNorm", "norm")
    arrow(ax, (X, top), (X, b))
    b, _ = box(ax, 9.3, "one vector per token → output", "io")
    arrow(ax, (X, t_norm), (X, b))
    note(ax, 8.9, "output layer: next token\n(ch. 6), class (ch. 7)")
    return fig


def main(extra: list[str]) -> None:
    fig = draw()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, format="svg", metadata={"Date": None})
    for path in extra:
        fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
