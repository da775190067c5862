"""What the serving engine keeps of each sample it answers (chapter 9; `serving.Engine`).

A request of n samples becomes n sequences once its prompt is in (they share the prompt's
blocks). A sequence's tokens are its prompt and what it has sampled; `cached` of them have
their keys and values in the blocks its `table` lists; `keys` are the prefix-cache keys of
its leading full blocks (`blocks.block_hash`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .blocks import BlockTable

__all__ = ["Sequence"]


@dataclass
class Sequence:
    """One sample being answered: its tokens so far, how many are in the cache, the keys of
    its full cached blocks, and the tokens it has produced (chapter 9)."""

    request_id: int
    sample: int
    tokens: list[int]
    generator: torch.Generator
    table: BlockTable
    cached: int = 0
    output: list[int] = field(default_factory=list)
    keys: list[bytes] = field(default_factory=list)
