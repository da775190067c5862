"""Explore attention in the page: an interactive view of attention weights (chapters 1, 3, 6,
7, 9, 10), self-contained, with a picture of the same view for where scripts do not run.

``explore(tokens, weights)`` returns an ``AttentionView``. In a notebook or on a page of the
book it displays as one HTML block with its script, style and weights inline (no request to
any server, no kernel): hover, tap or arrow-key through the tokens to shade every key by the
weight the chosen query gives it, pick the layer and head from the controls or from the grid
of all heads (the chosen one drawn large, its rows and columns labelled: `explore_labels`),
and open the chosen query's weights as numbers. Where scripts do not run (a
sanitised notebook, a page with JavaScript off) the same HTML shows a picture of the view's
opening state instead: an inline PNG that the script removes when it runs, with the live
view hidden until then (`explore_picture`). The bundle also holds the PNG as ``image/png``,
for converters that take no HTML.

The weights travel as integers in thousandths (``SCALE``): ``view.payload()["w"]`` is the
tensor rounded to 0.001. Element ids come from a hash of that data, so the same weights give
the same HTML on every run and every machine.

``tokens`` may be one list per layer when each layer (state) is its own sequence, e.g.
several inputs through one layer: only such views carry the script lines that swap them.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .explore_inputs import MAX_WEIGHTS, as_weights, axis_names, layer_tokens, tokens_of
from .explore_labels import big_map
from .explore_picture import (
    PictureBundle,
    asset,
    cell_name,
    picture_png,
    picture_uri,
    shown,
    spaced,
)

__all__ = ["AttentionView", "explore", "MAX_WEIGHTS", "SCALE"]

#: The weights are stored as integers in units of 1 / SCALE.
SCALE = 1000
#: The lines of explore.js that only views with one token list per layer need.
_PER_LAYER = re.compile(
    r"\n *// per-layer tokens: begin\n.*?// per-layer tokens: end", re.DOTALL
)


class AttentionView(PictureBundle):
    """An interactive view of attention weights (chapters 1, 3, 6, 7, 9, 10; build it with
    `explore`).

    weights: (layers, heads, T_q, T_k) as floats in [0, 1]; tokens: T_q strings, or one
    list of T_q strings per layer (a sequence per state); key_tokens: T_k strings when the
    keys are other tokens than the queries (else None).
    """

    def __init__(
        self,
        tokens: Sequence[str] | Sequence[Sequence[str]],
        weights: object,
        *,
        key_tokens: Sequence[str] | None = None,
        layer_names: Sequence[str] | None = None,
        head_names: Sequence[str] | None = None,
        layer_label: str = "layer",
        layer: int = 0,
        head: int = 0,
        query: int | None = None,
        title: str | None = None,
    ) -> None:
        w = as_weights(weights)
        n_layer, n_head, n_q, n_k = w.shape
        self.layer_tokens = layer_tokens(tokens, n_layer, n_q)
        if self.layer_tokens is not None and key_tokens is not None:
            raise ValueError("one token list per layer needs key_tokens=None")
        if self.layer_tokens is None:
            self.tokens = tokens_of("tokens", tokens, n_q, "queries")
        if key_tokens is None and n_k != n_q:
            raise ValueError(
                f"the weights have {n_q} queries and {n_k} keys: pass key_tokens"
            )
        self.key_tokens = (
            None
            if key_tokens is None
            else tokens_of("key_tokens", key_tokens, n_k, "keys")
        )
        self.layer_names = axis_names("layer", layer_names, n_layer)
        self.head_names = axis_names("head", head_names, n_head)
        query = n_q - 1 if query is None else query
        chosen = (
            ("layer", layer, n_layer),
            ("head", head, n_head),
            ("query", query, n_q),
        )
        for name, value, n in chosen:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if not 0 <= value < n:
                raise ValueError(f"{name} must be in 0..{n - 1}, got {value}")
        for name, text in (("title", title or ""), ("layer_label", layer_label)):
            if not isinstance(text, str):
                raise TypeError(f"{name} must be a string, got {type(text).__name__}")
        self.layer_label = layer_label
        self.layer, self.head, self.query, self.title = layer, head, query, title
        if self.layer_tokens is not None:  # the opening layer's tokens
            self.tokens = self.layer_tokens[layer]
        self.weights = np.rint(np.clip(w, 0.0, 1.0) * SCALE).astype(np.int64)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(layers, heads, T_q, T_k)."""
        n_layer, n_head, n_q, n_k = self.weights.shape
        return n_layer, n_head, n_q, n_k

    def payload(self) -> dict[str, Any]:
        """The data the page's script reads (its inline JSON)."""
        data = {
            "tokens": self.tokens,
            "keys": self.key_tokens,
            "layers": self.layer_names,
            "heads": self.head_names,
            "start": [self.layer, self.head, self.query],
            "scale": SCALE,
            "w": self.weights.tolist(),
        }
        if self.layer_tokens is not None:  # each layer's tokens, raw and as shown
            data["texts"] = self.layer_tokens
            data["shown"] = [[shown(t) for t in seq] for seq in self.layer_tokens]
        return data

    def script(self) -> str:
        """The view's script, its id filled in; the per-layer token lines only where used."""
        js = asset("explore.js")
        if self.layer_tokens is None:
            js = _PER_LAYER.sub("", js)
        return js.replace("__ATTNX_ID__", self.element_id())

    def element_id(self) -> str:
        """A deterministic id: a hash of the data and the labels."""
        text = json.dumps([self.payload(), self.title, self.layer_label])
        return "attnx-" + hashlib.sha256(text.encode()).hexdigest()[:12]

    # -- HTML ------------------------------------------------------------------------------
    def _token_spans(self, tokens: list[str], role: str) -> str:
        attrs = {"q": 'data-q="{i}" tabindex="-1" role="option"', "k": 'data-k="{i}"'}
        attr = (
            attrs[role]
            if self.key_tokens is not None
            else attrs["q"] + " " + attrs["k"]
        )
        spans = []
        for i, token in enumerate(tokens):
            text = html.escape(shown(token))
            spans.append(f'<span class="attnx-tok" {attr.format(i=i)}>{text}</span>')
            if token == "\n" and not self._spaced(tokens):
                spans.append("<br>")
        return "".join(spans)

    @staticmethod
    def _spaced(tokens: list[str]) -> bool:
        """Words (shown apart) rather than characters (shown as running text)."""
        return spaced(tokens)

    def _rows(self) -> str:
        def row(tokens: list[str], role: str, caption: str | None) -> str:
            kind = "attnx-words" if self._spaced(tokens) else "attnx-chars"
            label = (
                ""
                if caption is None
                else f'<span class="attnx-row-label">{caption}</span>'
            )
            listbox = ' role="listbox" aria-label="queries"' if role == "q" else ""
            return f'<div class="attnx-text {kind}"{listbox}>{label}{self._token_spans(tokens, role)}</div>'

        if self.key_tokens is None:
            return row(self.tokens, "q", None)
        return row(self.tokens, "q", "queries:") + row(self.key_tokens, "k", "keys:")

    def _select(self, cls: str, what: str, names: list[str]) -> str:
        if len(names) == 1:
            return ""
        options = "".join(
            f'<option value="{i}">{html.escape(n)}</option>'
            for i, n in enumerate(names)
        )
        return f'<label>{what} <select class="{cls}">{options}</select></label>'

    def _cell_name(self, l: int, h: int) -> str:
        """A head's label in the grid: "L1 H2" for the default names, else the names."""
        return cell_name(self.layer_names, self.head_names, l, h)

    def _grid(self) -> str:
        cells = []
        for l in range(len(self.layer_names)):
            for h in range(len(self.head_names)):
                name = html.escape(self._cell_name(l, h))
                cells.append(
                    f'<button type="button" class="attnx-cell" data-layer="{l}" '
                    f'data-head="{h}" aria-pressed="false"><canvas aria-hidden="true">'
                    f"</canvas>{name}</button>"
                )
        return f'<div class="attnx-grid">{"".join(cells)}</div>'

    def to_html(self, png: bytes | None = None) -> str:
        """The view as one self-contained HTML block (inline style, script and data).

        It opens with the picture (`to_png`, or `png`) as an inline image and the live view
        hidden; the script, where it runs, removes the picture and shows the live view."""
        vid = self.element_id()
        uri = picture_uri(self.to_png() if png is None else png)
        alt = html.escape(self.picture_alt())
        data = json.dumps(self.payload(), separators=(",", ":"), ensure_ascii=True)
        data = (
            data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        )
        n_layer, n_head, _, _ = self.shape
        queries = self.layer_tokens or [self.tokens]
        keys = queries if self.key_tokens is None else [self.key_tokens]
        title = f"<strong>{html.escape(self.title)}</strong>" if self.title else ""
        # one map per (layer, head): "maps", since a layer may be a model's state
        heads = f"all {n_layer * n_head} maps" if n_layer * n_head > 1 else "the map"
        return (
            f'<div class="attnx" id="{vid}"><style>{asset("explore.css")}</style>'
            f'<img class="attnx-picture" src="{uri}" alt="{alt}" '
            'style="max-width: 100%; height: auto">'
            f'<div class="attnx-live" hidden="hidden"><div class="attnx-bar">{title}'
            f"{self._select('attnx-layer', html.escape(self.layer_label), self.layer_names)}"
            f"{self._select('attnx-head', 'head', self.head_names)}</div>"
            '<p class="attnx-help">Hover or tap a token (or tab to it and use the arrow keys) '
            "to choose the query: every key is shaded by its weight.</p>"
            f"{self._rows()}"
            '<p class="attnx-status" aria-live="polite"></p>'
            f"<details open><summary>{heads}: click one to open it</summary>"
            f"{self._grid() if n_layer * n_head > 1 else ''}"
            f"{big_map(queries, keys, self.layer if self.layer_tokens else 0)}"
            "</details>"
            "<details><summary>the chosen query's weights as numbers</summary>"
            '<div class="attnx-numbers-box"><table class="attnx-numbers"><thead><tr>'
            "<th>key</th><th>token</th><th>weight</th></tr></thead><tbody></tbody>"
            "</table></div></details></div>"
            f'<script type="application/json" class="attnx-data">{data}</script>'
            f"<script>{self.script()}</script></div>"
        )

    # -- picture -----------------------------------------------------------------------------
    def to_png(self) -> bytes:
        """A PNG of the opening state: the chosen head's shading for the chosen query, and
        the grid of heads (at most 16), in the course's colours."""
        return picture_png(
            self.weights / SCALE,
            self.tokens,
            self.key_tokens,
            self.layer_names,
            self.head_names,
            (self.layer, self.head, self.query),
            self.title,
        )

    def picture_alt(self) -> str:
        """The picture's alt text: what it shows."""
        chosen = (
            f"{self.layer_names[self.layer]}, {self.head_names[self.head]}: query "
            f"{self.query} {shown(self.tokens[self.query])!r}, keys shaded by weight"
        )
        title = f"{self.title}. " if self.title else ""
        return f"A picture of the attention view. {title}{chosen}"

    def __repr__(self) -> str:
        n_layer, n_head, n_q, n_k = self.shape
        return (
            f"AttentionView({n_layer} layers x {n_head} heads, {n_q} queries x {n_k} keys; "
            "interactive where scripts run, a picture elsewhere)"
        )


def explore(
    tokens: Sequence[str] | Sequence[Sequence[str]], weights: object, **options: Any
) -> AttentionView:
    """An interactive view of attention weights (chapters 1, 3, 6, 7, 9, 10); display it
    (last line of a cell).

    tokens: the T_q query tokens as strings, or one such list per layer when each layer
    (state) is its own sequence; weights: (T_q, T_k), (heads, T_q, T_k) or
    (layers, heads, T_q, T_k), a torch tensor or NumPy array of weights in [0, 1].
    options: key_tokens, the T_k keys when they are not the queries; layer_names and
    head_names, the controls' labels; layer_label, what the first control chooses (default
    "layer": e.g. "model" for the states of one layer before and after training); layer,
    head and query, the choice at first (default 0, 0 and the last query); title, a caption.
    """
    return AttentionView(tokens, weights, **options)
