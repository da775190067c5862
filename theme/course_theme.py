"""A local Sphinx extension with the book's small fixes on top of Jupyter Book 1.

- Search results quote each page's text with its formulas as raw TeX: `search_snippets.js`
  (in html_static_path) turns them into plain text first, on the search page only.
- Clicking a symbol in a formula highlights the same name in the page's code cells
  (`notation.js`, on every page).
- sphinx-thebe 0.3.1 registers its inline configuration script twice under Jupyter Book 1,
  and the second `const THEBE_JS_URL` is a console error on every page: each page keeps only
  the first copy of any script.
"""
from __future__ import annotations


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        # the copies differ only in a filename of None vs "" (an inline script either way)
        key = (getattr(script, "filename", None) or "", str(getattr(script, "priority", "")),
               tuple(sorted(getattr(script, "attributes", {}).items())))
        if key in seen:
            continue
        seen.add(key)
        kept.append(script)
    context["script_files"] = kept


def add_search_snippets(app, pagename, templatename, context, doctree) -> None:
    if pagename == "search":
        app.add_js_file("search_snippets.js")


def setup(app):
    app.add_js_file("notation.js", loading_method="defer")
    app.connect("html-page-context", add_search_snippets)
    app.connect("html-page-context", drop_duplicate_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
