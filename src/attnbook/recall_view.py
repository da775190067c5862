"""The recall view of chapter 11: how well a fixed-size state returns each stored value as
key-value pairs are added, for an additive write on the raw keys, the same write on linear
attention's elu+1 features and the delta rule's overwrite at full and at half strength,
interactive in the page with a picture for where scripts do not run.

``recall_by_pairs`` writes the same random unit-length pairs one at a time into a
``d x d`` state with each rule (`attnbook.linear_attention`'s recurrences, float64) and,
after every write, reads each stored key back: the cosine between the read and the value
stored with that key, and whether the read is closer to that value than to any other stored
one (the chapter's test of recall). ``RecallView`` shows the result with a slider over the
number of pairs: one bar per stored key, oldest on the left.

It is built as the attention views of `attnbook.explore` are: one HTML block with its style,
script and data inline (no request to any server, no kernel), opening as an inline PNG of its
first state that the script replaces by the live view. The cosines travel as integers in
thousandths (``SCALE``) and the element id is a hash of the data, so the same pairs give the
same HTML on every run. The display bundle also holds the PNG and a one-line text.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from PIL import Image

from .explore_picture import PictureBundle, asset, picture_uri
from .linear_attention import (
    delta_rule_recurrent,
    elu_feature_map,
    linear_attention_recurrent,
)
from .plot import COLUMN_WIDTH, PALETTE

__all__ = ["LABELS", "RULES", "SCALE", "RecallView", "recall_by_pairs"]

#: The write rules the view compares, in the order it draws them: an additive write of
#: k^T v read with k (no feature map), the same write on elu+1 features (linear attention),
#: and the delta rule with beta = 1 and with beta = 0.5 (which erases less of older pairs).
RULES = ("additive write", "linear attention", "delta rule", "delta rule (beta 0.5)")
#: How the view names each rule.
LABELS = {
    "additive write": "additive write, raw keys",
    "linear attention": "additive write, elu+1 (linear attention)",
    "delta rule": "delta rule, beta = 1",
    "delta rule (beta 0.5)": "delta rule, beta = 0.5",
}
#: The cosines are stored as integers in units of 1 / SCALE.
SCALE = 1000


@dataclass(frozen=True)
class StateRecall:
    """What one rule's state returns after each number of writes.

    cosines[n - 1]: (n,) the cosine between the read of stored key i and its own value,
    after n writes; recalled[n - 1]: (n,) whether that read is closer (by cosine) to its own
    value than to any other of the n stored values.
    """

    cosines: list[np.ndarray]
    recalled: list[np.ndarray]

    def share(self, n: int) -> float:
        """The share of the n stored keys recalled after n writes."""
        return float(self.recalled[n - 1].mean())


def _check_sizes(n_max: object, d: object, seed: object) -> tuple[int, int, int]:
    for name, value in (("n_max", n_max), ("d", d), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    assert isinstance(n_max, int) and isinstance(d, int) and isinstance(seed, int)
    if not 1 <= n_max <= 128:
        raise ValueError(f"n_max must be in 1..128 (the page's size), got {n_max}")
    if not 2 <= d <= 64:
        raise ValueError(f"d must be in 2..64, got {d}")
    return n_max, d, seed


def _judge(reads: torch.Tensor, values: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(cosine with its own value, recalled) for each of n reads against the n values."""
    # (n reads, n values): the values have length 1
    cos = F.normalize(reads, dim=-1) @ values.T
    own = torch.diagonal(cos)
    hit = cos.argmax(-1) == torch.arange(len(values))
    return own.numpy().copy(), hit.numpy().copy()


def recall_by_pairs(
    n_max: int = 48, d: int = 16, seed: int = 0
) -> dict[str, StateRecall]:
    """Write n_max random unit-length pairs (keys and values of width d, drawn from `seed`)
    one at a time into a d x d state with each rule of ``RULES``, and after every write read
    back every stored key. The additive write adds k^T v and reads k S; linear attention
    writes phi(k)^T v and reads phi(k) S / (phi(k) . z), phi = elu + 1; the delta rule
    writes with beta = 1 (and with beta = 0.5) and reads k S.

    Chapter 11.
    """
    n_max, d, seed = _check_sizes(n_max, d, seed)
    g = torch.Generator().manual_seed(seed)
    keys = F.normalize(torch.randn(n_max, d, generator=g, dtype=torch.float64), dim=-1)
    vals = F.normalize(torch.randn(n_max, d, generator=g, dtype=torch.float64), dim=-1)
    k4, v4 = keys[None, None], vals[None, None]  # (1, 1, n_max, d)
    one = torch.ones(1, 1, 1, dtype=torch.float64)
    lin_state, delta_state, half_state = None, None, None
    add_state = torch.zeros(d, d, dtype=torch.float64)
    found: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {
        rule: ([], []) for rule in RULES
    }
    for t in range(n_max):
        pair = (k4[:, :, t : t + 1], k4[:, :, t : t + 1], v4[:, :, t : t + 1])
        _, lin_state = linear_attention_recurrent(*pair, state=lin_state)
        _, delta_state = delta_rule_recurrent(*pair, one, state=delta_state)
        _, half_state = delta_rule_recurrent(*pair, one / 2, state=half_state)
        add_state = add_state + keys[t, :, None] * vals[t, None, :]  # k^T v
        S, z = lin_state[0][0, 0], lin_state[1][0, 0]
        f = elu_feature_map(keys[: t + 1])
        reads = {
            "additive write": keys[: t + 1] @ add_state,
            "linear attention": (f @ S) / (f @ z + 1e-6)[:, None],
            "delta rule": keys[: t + 1] @ delta_state[0, 0],
            "delta rule (beta 0.5)": keys[: t + 1] @ half_state[0, 0],
        }
        for rule in RULES:
            own, hit = _judge(reads[rule], vals[: t + 1])
            found[rule][0].append(own)
            found[rule][1].append(hit)
    return {rule: StateRecall(*found[rule]) for rule in RULES}


class RecallView(PictureBundle):
    """The chapter 11 recall view: a slider over the number of stored pairs, one bar per
    stored key (its read's cosine with its value; filled where the key is recalled), for
    each rule of ``RULES``.

    recall: ``recall_by_pairs``'s result; d: the state's width (marked in the view);
    start: the number of pairs shown first (and in the picture).
    """

    def __init__(self, recall: dict[str, StateRecall], d: int, start: int) -> None:
        if set(recall) != set(RULES):
            raise ValueError(
                f"recall must hold the rules {RULES}, got {sorted(recall)}"
            )
        n_max = len(recall[RULES[0]].cosines)
        if any(len(recall[r].cosines) != n_max for r in RULES):
            raise ValueError("every rule must have the same number of writes")
        if not 1 <= start <= n_max:
            raise ValueError(f"start must be in 1..{n_max}, got {start}")
        self.d, self.start, self.n_max = d, start, n_max
        self.recall = recall
        self.cosines = [
            [np.rint(np.clip(c, -1.0, 1.0) * SCALE).astype(np.int64) for c in s.cosines]
            for s in (recall[r] for r in RULES)
        ]
        self.recalled = [[h.astype(bool) for h in recall[r].recalled] for r in RULES]

    def payload(self) -> dict[str, Any]:
        """The data the page's script reads (its inline JSON)."""
        return {
            "rules": [LABELS[r] for r in RULES],
            "d": self.d,
            "start": self.start,
            "scale": SCALE,
            "cos": [[c.tolist() for c in rule] for rule in self.cosines],
            "hit": [
                ["".join("1" if x else "0" for x in h) for h in r]
                for r in self.recalled
            ],
        }

    def element_id(self) -> str:
        """A deterministic id: a hash of the data."""
        text = json.dumps(self.payload(), separators=(",", ":"))
        return "recallx-" + hashlib.sha256(text.encode()).hexdigest()[:12]

    def summary(self, n: int) -> str:
        """One line: how many of n stored keys each rule recalls."""
        parts = [
            f"{r} recalls {int(self.recalled[i][n - 1].sum())} of {n}"
            for i, r in enumerate(RULES)
        ]
        return f"{n} pairs in a {self.d} x {self.d} state: " + "; ".join(parts)

    # -- picture -----------------------------------------------------------------------
    def to_png(self) -> bytes:
        """A PNG of the opening state: one row of bars per rule, in the course's colours."""
        n = self.start
        # narrower than the column: the picture stays legible when a phone shrinks it
        fig = Figure(figsize=(0.72 * COLUMN_WIDTH, 7.2), layout="constrained")
        axes = fig.subplots(len(RULES), 1, sharex=True)
        x = np.arange(1, n + 1)
        for ax, rule, cos, hit in zip(axes, RULES, self.cosines, self.recalled):
            c, h = cos[n - 1] / SCALE, hit[n - 1]
            ax.bar(x[h], c[h], color=PALETTE[0], label="recalled")
            ax.bar(x[~h], c[~h], color="white", edgecolor=PALETTE[3], hatch="///",
                   label="not recalled")  # fmt: skip
            ax.axhline(0, color="0.3", lw=0.8)
            ax.set_ylim(-0.25, 1)  # cosines under -0.25 are rare: clipped
            ax.set_ylabel("cosine")
            ax.set_title(f"{LABELS[rule]}: {int(h.sum())} of {n}", fontsize=10,
                         loc="left")  # fmt: skip
        # the legend's own patches: a row with no missed key would draw "not recalled" blue
        keys = [
            Patch(color=PALETTE[0], label="recalled"),
            Patch(
                facecolor="white",
                edgecolor=PALETTE[3],
                hatch="///",
                label="not recalled",
            ),
        ]
        fig.legend(handles=keys, fontsize=10, loc="outside lower center", ncols=2)
        axes[-1].set_xlabel(f"stored key, oldest (1) to newest ({n})")
        fig.suptitle(self.summary(n).split(":")[0], fontsize=11)
        drawn = io.BytesIO()
        fig.savefig(drawn, format="png", dpi=100)
        image = Image.open(drawn).convert("RGB").quantize(32, Image.Quantize.MEDIANCUT)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=True)
        return buffer.getvalue()

    def picture_alt(self) -> str:
        """The picture's alt text: what it shows."""
        return (
            f"A picture of the recall view at {self.start} pairs: one bar per stored key, "
            "the cosine between what the state returns for it and its value. "
            + self.summary(self.start)
            + "."
        )

    # -- HTML --------------------------------------------------------------------------
    def to_html(self, png: bytes | None = None) -> str:
        """The view as one self-contained HTML block (inline style, script and data),
        opening with its picture and the live view hidden."""
        vid = self.element_id()
        uri = picture_uri(self.to_png() if png is None else png)
        data = json.dumps(self.payload(), separators=(",", ":"), ensure_ascii=True)
        data = (
            data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        )
        rules = "".join(
            f'<div class="recallx-rule"><p class="recallx-title">{html.escape(LABELS[r])}: '
            '<span class="recallx-count"></span></p><canvas role="img" '
            f'aria-label="{html.escape(LABELS[r])}: one bar per stored key"></canvas></div>'
            for r in RULES
        )
        return (
            f'<div class="recallx" id="{vid}"><style>{asset("recall_view.css")}</style>'
            f'<img class="recallx-picture" src="{uri}" alt="{html.escape(self.picture_alt())}" '
            'style="max-width: 100%; height: auto">'
            '<div class="recallx-live" hidden="hidden"><label class="recallx-bar">'
            'pairs stored <input type="range" class="recallx-n" '
            f'min="1" max="{self.n_max}" step="1" value="{self.start}"> '
            '<output class="recallx-out"></output></label>'
            '<p class="recallx-help">One bar per stored key, oldest on the left: the cosine '
            "between what the state returns for that key and the value stored with it. "
            "Filled: recalled (closer to its own value than to any other stored one); "
            f"hatched: not. The state is {self.d} x {self.d}.</p>"
            f'{rules}<p class="recallx-status" aria-live="polite"></p></div>'
            f'<script type="application/json" class="recallx-data">{data}</script>'
            f"<script>{asset('recall_view.js').replace('__RECALLX_ID__', vid)}</script>"
            "</div>"
        )

    def __repr__(self) -> str:
        return (
            f"RecallView(1-{self.n_max} pairs, {', '.join(RULES)}; "
            "interactive where scripts run, a picture elsewhere)"
        )
