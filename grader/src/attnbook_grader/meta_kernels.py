"""Loaded by the grader's process server before any submission starts (exercises 8 and 11).

The first operation on a tensor of PyTorch's ``meta`` device (shapes and dtypes, no numbers:
the hidden tests use it for "any device") imports some 800 modules of PyTorch's Python side
(decompositions, reference implementations), about a second. A child that runs a submission
forks from the process server and, as root, then becomes the sandbox user, who may not be
allowed to read the Python installation (one under /root): an import after that point fails.
Doing those operations here, once, puts the modules in every child before it drops its
rights. Imports nothing of the grading package.
"""

from __future__ import annotations

import torch

_meta = torch.empty(2, 3, device="meta")
_warmed = (_meta / 2.0, _meta @ _meta.T, _meta.masked_fill(_meta > 0, 0.0))
del _meta, _warmed
