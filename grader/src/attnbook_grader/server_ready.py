"""Imported last by every process server, once its preloads are in (`servers`).

A child forked from the server shares the server's pages until it writes to one. CPython's
cyclic garbage collector writes to every object it tracks whenever it walks the oldest
generation, which holds all that the server imported (PyTorch's and NumPy's Python side, a few
hundred thousand objects): the first full collection in a child would copy nearly all of
those pages into that child. `gc.freeze` moves every object alive now to a generation the
collector never walks, so each child copies only the pages it really changes. Imports
nothing of the grading package.
"""

from __future__ import annotations

import gc

gc.collect()  # what the imports left as garbage is freed first, not frozen
gc.freeze()
