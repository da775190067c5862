"""The cycle collector's policy of the suite's long-lived processes (`tools.gc_policy`)."""

from __future__ import annotations

import gc
import weakref

from tools.gc_policy import _after_collection, freeze_survivors


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_full_collection_frees_dead_cycles_then_leaves_the_survivors_out():
    freeze_survivors()
    freeze_survivors()  # twice: one callback
    assert gc.callbacks.count(_after_collection) == 1
    dead = _Node()
    gone = weakref.ref(dead)
    del dead
    alive = _Node()
    before = gc.get_freeze_count()
    gc.collect()
    assert gone() is None, "a dead cycle outlived a full collection"
    assert gc.get_freeze_count() > before  # what survived now sits in no generation
    assert alive.me is alive
    frozen = gc.get_freeze_count()
    young = _Node()
    gc.collect(0)  # a young collection freezes nothing
    assert gc.get_freeze_count() == frozen
    assert young.me is young
