"""Loaded by the grader's process servers that hold PyTorch, before any submission starts.

Some of PyTorch's work happens on its first use, in whichever process gets there first. A
child that runs a submission is forked from a process server: what the server did, every
child finds done; what it did not, each child does again, and at the ``chroot`` level
(`jail`: locked in an empty folder as the sandbox user) cannot do at all, since an import
finds no file there and PyTorch's CPU probe no ``/proc/cpuinfo``: a correct answer that
needed it lost points. Each line below is one such first use, done here once. Imports
nothing of the grading package.
"""

from __future__ import annotations

import torch

# a gradient given an upstream gradient (`grad_outputs`, the gradient probe of exercises 3,
# 4 and 10) imports torch.fx.experimental.symbolic_shapes and SymPy with it: 480 modules,
# ~0.3 s of CPU in every child that took a gradient
_x = torch.ones(2, requires_grad=True)
torch.autograd.grad(_x * 2, [_x], grad_outputs=torch.ones(2))
# printing a tensor imports torch._subclasses.schema_check_mode
str(torch.ones(1))
# the first conversion to float16 (and a float16 mean) asks cpuinfo for the CPU's features
torch.ones(2).to(torch.float16).mean()
del _x
