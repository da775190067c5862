"""The interactive attention view (`attnbook.explore`) as the page receives it: HTML that
parses, with nothing that could reach a server, ids that depend on the data only, a PNG of the
same view that decodes, a bounded size, and inline weights equal to the tensor. Also the
weights `streaming.stream_attention` gives chapter 9's view."""

from __future__ import annotations

import base64
import importlib.resources
import io
import json
import re
from html.parser import HTMLParser

import matplotlib.image as mpimg
import numpy as np
import pytest
import torch

from attnbook.explore import MAX_WEIGHTS, SCALE, explore
from attnbook.streaming import load_ch9_model, stream_attention

TOKENS = list("KING HENRY:\nOnce more")


def weights(layers: int = 2, heads: int = 3, T: int = len(TOKENS), seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(layers, heads, T, T, generator=g)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    return scores.masked_fill(~causal, float("-inf")).softmax(-1)


class Page(HTMLParser):
    """Every start tag with its attributes, and the text of each script."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))
        if tag not in ("br", "input", "meta", "img"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()
        self._script = None

    def handle_data(self, data):
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    assert not page.open, f"unclosed tags: {page.open}"
    return page


@pytest.fixture(scope="module")
def view():
    return explore(TOKENS, weights(), title="two layers, three heads")


@pytest.fixture(scope="module")
def bundle(view):
    return view._repr_mimebundle_()


def test_html_parses_and_is_one_element(bundle) -> None:
    page = parse(bundle["text/html"])
    assert page.tags[0][0] == "div" and page.tags[0][1]["class"] == "attnx"
    spans = [a for t, a in page.tags if t == "span" and a.get("data-q") is not None]
    assert [int(a["data-q"]) for a in spans] == list(range(len(TOKENS)))
    cells = [a for t, a in page.tags if t == "button"]
    assert len(cells) == 2 * 3  # the grid: every layer and head
    assert {t for t, _ in page.tags} >= {
        "select",
        "details",
        "canvas",
        "table",
        "style",
    }


def test_nothing_reaches_a_server(bundle) -> None:
    html = bundle["text/html"]
    page = parse(html)
    for _, attrs in page.tags:
        for name in ("src", "href", "action", "srcset", "data"):
            value = attrs.get(name) or ""
            assert not re.match(r"\s*(https?:)?//", value), (name, value)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html)
    code = " ".join(text for attrs, text in page.scripts if attrs.get("type") is None)
    for call in (
        "fetch(",
        "XMLHttpRequest",
        "import(",
        "WebSocket",
        "EventSource",
        "sendBeacon",
        "importScripts",
        ".src =",
    ):
        assert call not in code, call
    assert "url(" not in html  # no stylesheet resource either
    assert "@import" not in html


def test_ids_are_deterministic_and_follow_the_data(view) -> None:
    again = explore(TOKENS, weights(), title="two layers, three heads")
    assert again.to_html() == view.to_html()
    vid = view.element_id()
    assert re.fullmatch(r"attnx-[0-9a-f]{12}", vid)
    assert f'id="{vid}"' in view.to_html()
    assert f'document.getElementById("{vid}")' in view.to_html()
    other = explore(TOKENS, weights(seed=1), title="two layers, three heads")
    assert other.element_id() != vid


def test_png_decodes_to_the_picture(bundle) -> None:
    png = base64.b64decode(bundle["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    image = mpimg.imread(io.BytesIO(png))
    height, width = image.shape[:2]
    assert 300 < width <= 720 and height > 100  # within the column (7 in at 100 dpi)
    assert "2 layers x 3 heads" in bundle["text/plain"]


def test_inline_weights_equal_the_tensor(view, bundle) -> None:
    page = parse(bundle["text/html"])
    (data,) = [t for a, t in page.scripts if a.get("type") == "application/json"]
    payload = json.loads(data)
    assert payload == view.payload()
    stored = np.array(payload["w"]) / payload["scale"]
    assert payload["scale"] == SCALE and stored.shape == (
        2,
        3,
        len(TOKENS),
        len(TOKENS),
    )
    np.testing.assert_allclose(stored, weights().numpy(), atol=0.5 / SCALE + 1e-9)
    assert payload["tokens"] == TOKENS and payload["keys"] is None


def test_size_stays_under_200_kb_at_the_limit() -> None:
    T = int((MAX_WEIGHTS // 16) ** 0.5)  # 16 heads of T x T: as large as a view may be
    big = explore(list("abcdefghij" * 10)[:T], weights(4, 4, T))
    assert len(big.to_html().encode()) < 200_000
    with pytest.raises(ValueError, match="too many for one view"):
        explore(list("x" * (T + 2)), weights(4, 4, T + 2))


def test_one_head_and_cross_attention() -> None:
    one = explore(["a", "b"], torch.tensor([[1.0, 0.0], [0.25, 0.75]]))
    assert one.shape == (1, 1, 2, 2) and "<select" not in one.to_html()
    states = explore(["a", "b"], torch.full((2, 1, 2, 2), 0.5), layer_label="model",
                     layer_names=["before", "after"], layer=1, query=0)  # fmt: skip
    assert "<label>model <select" in states.to_html()
    assert states.payload()["start"] == [1, 0, 0]
    cross = explore(["x", "y"], torch.full((2, 3), 1 / 3), key_tokens=["p", "q", "r"])
    page = parse(cross.to_html())
    assert sum(1 for t, a in page.tags if a.get("data-k") is not None) == 3
    assert sum(1 for t, a in page.tags if a.get("data-q") is not None) == 2


def test_one_sequence_per_layer() -> None:
    """tokens as one list per layer: the payload carries each layer's tokens (raw and as
    shown), the page opens on the chosen layer's, and only such a view has the script
    lines that swap them; a plain view's script is explore.js without those lines."""
    seqs = [list("ab\nc"), list("xy\nz"), ["p", "", "\n", "r"]]
    w = weights(3, 2, 4)
    view = explore(seqs, w, layer=1, query=0, layer_label="sequence")
    payload = view.payload()
    assert payload["tokens"] == seqs[1] and payload["texts"] == seqs
    assert payload["shown"][2] == ["p", "\u2205", "\u21b5", "r"]
    page = parse(view.to_html())
    spans = [a for t, a in page.tags if t == "span" and a.get("data-q") is not None]
    assert len(spans) == 4 and "'x'" in view.picture_alt()
    script = view.script()
    assert "data.texts" in script and "per-layer tokens: begin" in script
    plain = explore(seqs[0], w).script()
    assert "data.texts" not in plain and "per-layer" not in plain
    full = importlib.resources.files("attnbook.data").joinpath("explore.js").read_text()
    begin = full.index("\n    // per-layer tokens: begin")
    end = full.index("// per-layer tokens: end") + len("// per-layer tokens: end")
    stripped = full[:begin] + full[end:]
    assert plain == stripped.replace("__ATTNX_ID__", explore(seqs[0], w).element_id())
    assert "texts" not in explore(seqs[0], w).payload()
    # the layers' own tokens change the id: same weights, other sequences, other view
    swapped = [seqs[1], seqs[0], seqs[2]]
    other = explore(swapped, w, layer=1, query=0, layer_label="sequence")
    assert other.element_id() != view.element_id()


def test_tokens_are_escaped() -> None:
    html = explore(["<b>", "&", "</script>"], torch.eye(3)).to_html()
    assert "&lt;b&gt;" in html and "&amp;" in html
    page = parse(html)
    assert "b" not in {t for t, _ in page.tags}
    (data,) = [t for a, t in page.scripts if a.get("type") == "application/json"]
    assert json.loads(data)["tokens"] == ["<b>", "&", "</script>"]


def test_streaming_weights_hold_only_the_window(one_thread) -> None:
    model, tok = load_ch9_model()
    ids = tok.encode("KING HENRY:\nOnce more")
    capacity, sinks = 8, 2
    maps = stream_attention(model, ids, capacity, sinks)  # (L, H, N, N)
    N = len(ids)
    assert maps.shape == (model.config.n_layer, model.config.n_head, N, N)
    torch.testing.assert_close(maps.sum(-1), torch.ones(maps.shape[:-1]))
    for t in range(N):
        held = (
            set(range(t + 1))
            if t < capacity
            else (set(range(sinks)) | set(range(t + 1 - (capacity - sinks), t + 1)))
        )
        outside = [k for k in range(N) if k not in held]
        assert (maps[:, :, t, outside] == 0).all()
    # before the first eviction the cache is the whole prefix: the model's own maps
    full = torch.stack(model.attention_maps(ids[None, :capacity]))[:, 0]
    torch.testing.assert_close(
        maps[:, :, :capacity, :capacity], full, atol=1e-5, rtol=0
    )


def labels(html: str, axis: str) -> list[tuple[int, float, str]]:
    """The big map's labels on one axis ("q": rows, "k": columns): index, place, text."""
    where = "top" if axis == "q" else "left"
    found = re.findall(
        rf'<span class="attnx-lab" data-l{axis}="(\d+)" style="{where}: ([\d.]+)%">'
        r"(.*?)</span>",
        html,
    )
    return [(int(i), float(at), text) for i, at, text in found]


def test_big_map_labels_every_row_and_column_with_its_token() -> None:
    """A short view labels each row with its query and each column with its key, centred
    on the row or column, whitespace shown; the caption says where the labels are."""
    tokens = ["b0", " ", "\n", "<x>", "a?"]
    html = explore(tokens, weights(1, 1, 5)).to_html()
    shown = ["b0", "\u2423", "\u21b5", "&lt;x&gt;", "a?"]
    for axis in "qk":
        assert labels(html, axis) == [(i, 20 * i + 10, t) for i, t in enumerate(shown)]
    assert "labelled at the left" in html and "labelled above" in html
    # cross attention: the columns carry the keys, the rows the queries
    cross = explore(["x", "y"], torch.full((2, 3), 1 / 3), key_tokens=["p", "q", "r"])
    html = cross.to_html()
    assert [t for _, _, t in labels(html, "q")] == ["x", "y"]
    assert [t for _, _, t in labels(html, "k")] == ["p", "q", "r"]


def test_big_map_labels_open_on_the_chosen_sequence() -> None:
    """With a sequence per layer the labels show the opening layer's tokens, and the
    script swaps them with the layer (only where they are tokens)."""
    seqs = [list("abcd"), list("wxyz")]
    view = explore(seqs, weights(2, 1, 4), layer=1)
    assert [t for _, _, t in labels(view.to_html(), "q")] == seqs[1]
    assert [t for _, _, t in labels(view.to_html(), "k")] == seqs[1]
    assert 'root.querySelector(".attnx-tokens")' in view.script()


def test_long_maps_number_every_kth_row_and_column() -> None:
    """A map too dense for a token a row (chapter 6's 64 characters) numbers every 5th row
    and column instead, and says so; each numbered step still holds a line of text at the
    narrowest map."""
    from attnbook.explore_labels import LINE, NARROWEST, STEPS, label_step

    html = explore(TOKENS * 3 + TOKENS[:1], weights(1, 1, 64)).to_html()
    for axis in "qk":
        assert labels(html, axis) == [
            (i, round(100 * (i + 0.5) / 64, 3), str(i)) for i in range(0, 64, 5)
        ]
    assert "numbered every 5 tokens" in html and "attnx-index" in html
    assert [label_step(n) for n in (8, 12, 24, 25, 50, 64, 200)] == [
        1,
        1,
        1,
        2,
        5,
        5,
        10,
    ]
    for n in range(1, 201):
        k = label_step(n)
        assert k * NARROWEST / n >= LINE  # room for the text
        smaller = STEPS[STEPS.index(k) - 1] if k > 1 else None
        assert smaller is None or smaller * NARROWEST / n < LINE  # none to spare
