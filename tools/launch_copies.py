"""Launch copies: the notebook a reader launches (Colab, Binder, the download button) for every
chapter and exercise, written after the book is built (`make book`):

    python -m tools.launch_copies [--ref COMMIT]

Colab, Binder's JupyterLab and GitHub's viewer render Markdown cells as plain Markdown, where
the chapters' MyST shows as raw markup. A launch copy is the notebook with its outputs, every
Markdown cell rewritten as the page shows it:

- `{glue:text}`key:fmt`` and `{glue}`key`` by the value the stored outputs hold, formatted as
  the role asks (myst-nb's own formatting, so the copy says what the page says);
- `{numref}`label`` by the figure's number ("Fig. 3.2"), linked to the figure itself where
  it is in the same notebook, else to it on the published book;
- `{cite}`key`` by "(Author, year)" (`{cite:t}`: "Author (year)"), linked to the references page;
- `{ref}`, `{doc}` and relative links by absolute links into the published book;
- `:::{note}` and the other admonitions by a quote block with a bold title; `(label)=`
  targets dropped.

The cells change as the page shows them too:

- under every figure (a code cell whose `mystnb.figure` metadata gives the page its caption),
  a Markdown cell with the figure's anchor, "**Fig. N.M.**" and the caption, and the alt text
  in a collapsed "Description" (also stored as the picture's `alt`, which nbconvert uses);
- the cells folded on the page stay folded: `hide-input` sets JupyterLab's
  `jupyter.source_hidden` and Colab's `cellView: "form"` (code hidden), `hide-output` sets
  `jupyter.outputs_hidden` and `collapsed`, `hide-cell` all of them;
- the attention views (`attnbook.explore`) keep their picture and their one-line text, not
  their HTML: a viewer that escapes HTML (nbconvert's `--sanitize-html`, nbviewer-like tools)
  would show its style sheet and data as text. Running the cell brings the live view back.

The setup cell installs from the repository at `--ref` (default: this checkout's commit). The
numbers, titles and anchors come from the built book (`_build/.doctrees`). The copies go to
`_build/launch/` (same paths as in the repository; the release workflow writes them to the
`launch` branch, which the launch buttons name) and replace the site's `_sources/` copies, the
files its download button serves. The source notebooks are not touched.
"""

from __future__ import annotations

import argparse
import html
import os
import pickle
import posixpath
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from tools import ToolError, setup_cell

ROOT = setup_cell.ROOT
BUILD = ROOT / "_build"
SITE = BUILD / "html"
OUT = BUILD / "launch"
ENVIRONMENT = BUILD / ".doctrees" / "environment.pickle"
REFERENCES = "book/references"

ROLE = re.compile(r"\{(?P<role>[a-z]+(?::[a-z]+)?)\}`(?P<body>[^`]*)`")
TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
DIRECTIVE = re.compile(
    r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[a-z-]+)\}(?P<title>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.M | re.S,
)
TARGET = re.compile(r"^\([\w\-:.]+\)=[ \t]*\n?", re.M)
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<url>[^)\s]+)\)")
ADMONITIONS = {"note", "warning", "tip", "important", "caution", "hint", "seealso"}


def plain_text(text: str, fmt: str) -> str:
    """A glued text/plain value formatted as myst-nb formats it for `{glue:text}`."""
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(text, fmt)


def glued(nb: nbformat.NotebookNode) -> dict[str, str]:
    """key -> the stored text/plain of every value the notebook glues."""
    values = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            meta = output.get("metadata", {}).get("scrapbook")
            if meta:
                prefix = meta.get("mime_prefix", "")
                values[meta["name"]] = output["data"][prefix + "text/plain"]
    return values


@dataclass
class Book:
    """What the built book knows: its URL, labels, figure numbers, titles, citations."""

    url: str
    labels: dict[str, tuple[str, str, str]]  # label -> (docname, anchor, title)
    fignumbers: dict[str, dict[str, dict[str, tuple[int, ...]]]]
    formats: dict[str, str]  # "figure" -> "Fig. %s"
    titles: dict[str, str]
    citations: dict[str, tuple[str, str, str]]  # key -> (authors, year, anchor)

    @classmethod
    def load(cls, environment: Path = ENVIRONMENT) -> Book:
        if not environment.is_file():
            raise ToolError(
                f"{environment.relative_to(ROOT)} is missing: run make book"
            )
        with environment.open("rb") as f:
            env: Any = pickle.load(f)
        citations = {
            c.key: (*_authors_year(c.entry), c.citation_id)
            for c in env.domaindata["cite"]["citations"]
        }
        return cls(
            url=setup_cell.book_url(),
            labels=dict(env.domaindata["std"]["labels"]),
            fignumbers=env.toc_fignumbers,
            formats=dict(env.config.numfig_format),
            titles={d: t.astext() for d, t in env.titles.items()},
            citations=citations,
        )

    def page(self, docname: str, anchor: str = "") -> str:
        return f"{self.url}/{docname}.html" + (f"#{anchor}" if anchor else "")


def _authors_year(entry: Any) -> tuple[str, str]:
    """("Vaswani et al.", "2017") from a pybtex entry."""
    from pybtex.richtext import Text

    def last(person: Any) -> str:
        name = " ".join(person.prelast_names + person.last_names)
        return str(Text.from_latex(name).render_as("text"))

    people = entry.persons.get("author") or entry.persons.get("editor") or []
    if not people:
        raise ToolError(f"{entry.key}: no author in references.bib")
    if len(people) == 1:
        names = last(people[0])
    elif len(people) == 2:
        names = f"{last(people[0])} and {last(people[1])}"
    else:
        names = f"{last(people[0])} et al."
    return names, entry.fields.get("year", "n.d.")


class Rewriter:
    """Rewrites the Markdown of one notebook (`docname`, e.g. "book/03_multihead")."""

    def __init__(self, book: Book, docname: str, values: dict[str, str]) -> None:
        self.book, self.docname, self.values = book, docname, values

    def label(self, name: str) -> tuple[str, str, str]:
        found = self.book.labels.get(name)
        if found is None:
            raise ToolError(f"{self.docname}: no label {name!r} in the built book")
        return found

    def role(self, match: re.Match[str]) -> str:
        role, body = match["role"], " ".join(match["body"].split())
        titled = TITLED.match(body)
        text, target = (titled["text"], titled["target"]) if titled else ("", body)
        if role in ("glue", "glue:text", "glue:any"):
            key, fmt = target, ""
            if role == "glue:text" and ":" in target:
                key, fmt = target.rsplit(":", 1)
            if key not in self.values:
                raise ToolError(f"{self.docname}: no glued value {key!r}")
            return plain_text(self.values[key], fmt)
        if role == "numref":
            docname, anchor, shown = self.number(target, text)
            if docname == self.docname:  # the copy holds the figure: point at it
                return f"[{shown}](#{anchor})"
            return f"[{shown}]({self.book.page(docname, anchor)})"
        if role == "ref":
            docname, anchor, title = self.label(target)
            return f"[{text or title}]({self.book.page(docname, anchor)})"
        if role == "doc":
            docname = posixpath.normpath(
                posixpath.join(posixpath.dirname(self.docname), target)
            )
            title = text or self.book.titles.get(docname, docname)
            return f"[{title}]({self.book.page(docname)})"
        if role in ("cite", "cite:p", "cite:t"):
            before = match.string[: match.start()].rstrip()
            return self.cite(role, [k.strip() for k in target.split(",")], before)
        raise ToolError(f"{self.docname}: no launch-copy rule for the role {{{role}}}")

    def number(self, target: str, text: str = "") -> tuple[str, str, str]:
        """(docname, anchor, "Fig. 3.2") of a numbered label; `text` may hold "%s"."""
        docname, anchor, _ = self.label(target)
        kinds = self.book.fignumbers.get(docname, {})
        kind = next((k for k, ids in kinds.items() if anchor in ids), None)
        if kind is None:
            raise ToolError(f"{self.docname}: {target!r} has no number in the book")
        number = ".".join(str(n) for n in kinds[kind][anchor])
        return docname, anchor, (text or self.book.formats[kind]).replace("%s", number)

    def cite(self, role: str, keys: list[str], before: str = "") -> str:
        """ "(Vaswani et al., 2017)"; "(2017)" where the prose has just named the authors."""
        parts = []
        for key in keys:
            if key not in self.book.citations:
                raise ToolError(f"{self.docname}: no reference {key!r}")
            names, year, anchor = self.book.citations[key]
            link = self.book.page(REFERENCES, anchor)
            if role != "cite:t" and len(keys) == 1 and before.endswith(names):
                return f"([{year}]({link}))"
            parts.append(
                f"[{names}]({link}) ({year})"
                if role == "cite:t"
                else f"[{names}, {year}]({link})"
            )
        return "; ".join(parts) if role == "cite:t" else f"({'; '.join(parts)})"

    def link(self, match: re.Match[str]) -> str:
        url = match["url"]
        if re.match(r"[a-z][a-z0-9+.-]*:|#", url):
            return match[0]  # absolute, mailto:, or an anchor of this page
        path, _, anchor = url.partition("#")
        target = posixpath.normpath(
            posixpath.join(posixpath.dirname(self.docname), path)
        )
        stem, suffix = posixpath.splitext(target)
        page = (
            self.book.page(stem, anchor)
            if suffix in (".ipynb", ".md")
            else f"{self.book.url}/{target}"
        )
        return f"[{match['text']}]({page})"

    def directive(self, match: re.Match[str]) -> str:
        name, title = match["name"], match["title"].strip()
        body = [
            line for line in match["body"].splitlines() if not re.match(r":\w+:", line)
        ]
        if name == "admonition":
            heading = title
        elif name in ADMONITIONS:
            heading = name.capitalize() + (f": {title}" if title else "")
        else:
            raise ToolError(f"{self.docname}: no launch-copy rule for {{{name}}}")
        lines = [f"**{heading}**", "", *body]
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(f"> {line}".rstrip() for line in lines)

    def markdown(self, text: str) -> str:
        text = TARGET.sub("", text)
        text = DIRECTIVE.sub(self.directive, text)
        text = ROLE.sub(self.role, text)
        return LINK.sub(self.link, text)


#: the metadata key that marks the cells a launch copy adds (a figure's caption)
ADDED = "launch_copy"
#: where the page folds a cell (its tag) -> what the copy sets in the cell's metadata
FOLDS = {
    "hide-input": {"jupyter": {"source_hidden": True}, "cellView": "form"},
    "hide-output": {"jupyter": {"outputs_hidden": True}, "collapsed": True},
}
FOLDS["hide-cell"] = {
    "jupyter": {"source_hidden": True, "outputs_hidden": True},
    "cellView": "form",
    "collapsed": True,
}


def fold(cell: nbformat.NotebookNode) -> None:
    """Fold a code cell in the copy as its tags fold it on the page."""
    for tag in cell.metadata.get("tags", []):
        for key, value in FOLDS.get(tag, {}).items():
            if isinstance(value, dict):
                cell.metadata.setdefault(key, {}).update(value)
            else:
                cell.metadata[key] = value


def is_view(output: nbformat.NotebookNode) -> bool:
    """An attention view's output (attnbook.explore): its HTML opens with the view's div."""
    markup = output.get("data", {}).get("text/html", "")
    markup = "".join(markup) if isinstance(markup, list) else markup
    return markup.lstrip().startswith('<div class="attnx"')


def picture_only(cell: nbformat.NotebookNode) -> None:
    """Keep an attention view's picture and text, not its HTML (see the module's doc)."""
    for output in cell.get("outputs", []):
        if is_view(output):
            if "image/png" not in output.data:
                raise ToolError("an attention view's output without its picture")
            markup = output.data.pop("text/html")
            markup = "".join(markup) if isinstance(markup, list) else markup
            alt = re.search(r'class="attnx-picture"[^>]*?\salt="([^"]*)"', markup)
            if alt:  # the picture's alt text, where nbconvert reads it
                meta = output.setdefault("metadata", {}).setdefault("image/png", {})
                meta["alt"] = html.unescape(alt[1])


def caption_cell(
    cell: nbformat.NotebookNode, rewriter: Rewriter, with_id: bool
) -> nbformat.NotebookNode:
    """The Markdown cell under a figure: anchor, number, caption, alt text."""
    figure = cell.metadata["mystnb"]["figure"]
    name = figure.get("name")
    if not name:
        raise ToolError(f"{rewriter.docname}: a figure without a name (its label)")
    _, anchor, shown = rewriter.number(name)
    caption = rewriter.markdown(" ".join(figure.get("caption", "").split()))
    text = f'<a id="{anchor}" name="{anchor}"></a>**{shown}.** {caption}'
    alt = cell.metadata["mystnb"].get("image", {}).get("alt")
    if alt:
        text += f"\n\n<details><summary>Description</summary>\n\n{alt}\n\n</details>"
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                output.setdefault("metadata", {}).setdefault("image/png", {})["alt"] = (
                    alt
                )
    added = nbformat.v4.new_markdown_cell(text, metadata={ADDED: "caption"})
    if with_id:
        added.id = f"{cell.get('id', 'figure')}-caption"[:64]
    else:
        added.pop("id", None)
    return added


def launch_copy(path: Path, book: Book, ref: str) -> nbformat.NotebookNode:
    """The launch copy of one notebook of the repository (`path`)."""
    nb = nbformat.read(path, as_version=4)
    docname = path.relative_to(ROOT).with_suffix("").as_posix()
    rewriter = Rewriter(book, docname, glued(nb))
    with_id = (nb.nbformat, nb.nbformat_minor) >= (4, 5)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.cell_type == "markdown":
            cell.source = rewriter.markdown(cell.source)
        elif cell.cell_type == "code":
            fold(cell)
            picture_only(cell)
            if "figure" in cell.metadata.get("mystnb", {}):
                cells.append(caption_cell(cell, rewriter, with_id))
    nb.cells = cells
    first = next(c for c in nb.cells if c.cell_type == "code")
    kind = "chapter" if docname.startswith("book/") else "exercise"
    make = getattr(setup_cell, f"{kind}_setup_cell")
    if first.source != make():
        raise ToolError(f"{docname}: the first code cell is not the setup cell")
    first.source = make(ref=ref)
    return nb


def notebooks() -> list[Path]:
    """Every chapter and every student exercise notebook."""
    return sorted((ROOT / "book").glob("*.ipynb")) + sorted(
        (ROOT / "exercises" / "student").glob("*.ipynb")
    )


def this_commit() -> str:
    """This checkout's commit (git, else GitHub Actions' GITHUB_SHA)."""
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode == 0:
        return done.stdout.strip()
    if os.environ.get("GITHUB_SHA"):
        return os.environ["GITHUB_SHA"]
    raise ToolError("not a git checkout: pass --ref COMMIT")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ref", help="the commit the setup cells install from")
    args = parser.parse_args(argv)
    book = Book.load()
    ref = args.ref or this_commit()
    shutil.rmtree(OUT, ignore_errors=True)
    for path in notebooks():
        rel = path.relative_to(ROOT)
        copy = launch_copy(path, book, ref)
        for where in (OUT / rel, SITE / "_sources" / rel):
            where.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(copy, where)
    print(f"launch copies of {len(notebooks())} notebooks in {OUT.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
