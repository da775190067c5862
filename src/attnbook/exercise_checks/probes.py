"""What a hidden test of the exercises measures besides values: the gradients
of a function's output (`grad_of`, chapter 4's fully masked rows) and the calls a function
makes to the routine its question asks it to use (`calls_of`, chapter 2's online softmax,
whose blocks must go through its step). Where the function is the submission's (a
`Remote`, which the grading engine's `session.RemoteFunction` is), both run in the
submission's process and only data comes back.

This module imports nothing else of the grading code: `grading` and the engine's `sandbox`
and `session` (attnbook-grader) import it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["Remote", "grad_of", "gradient_call", "calls_of", "shape_of"]


class Remote:
    """A function that runs in another process (the submission's or the reference's): what a
    hidden test holds in the grader. `session.RemoteFunction` implements it."""

    def with_rules(self, rules: dict) -> Remote:
        """The same function, each call checked against the house rules `rules`."""
        raise NotImplementedError

    def gradient(
        self, args: list, wrt: list[int], output: int | None, upstream: Any
    ) -> tuple[Any, tuple[torch.Tensor, ...]]:
        """(result, gradients), as `gradient_call` computes them, in the other process."""
        raise NotImplementedError

    def recording(self, inner: str, args: list) -> tuple[Any, list[list]]:
        """(result, the input shapes of each call of `inner`), as `calls_of` returns them."""
        raise NotImplementedError


def shape_of(value: Any) -> tuple[int, ...] | None:
    """The shape of an array or tensor argument (None for anything else)."""
    shape = getattr(value, "shape", None)
    return tuple(int(n) for n in shape) if shape is not None else None


def gradient_call(
    fn: Callable,
    args: list,
    kwargs: dict,
    wrt: list[int],
    output: int | None,
    upstream: torch.Tensor | None,
) -> tuple[Any, tuple[torch.Tensor, ...]]:
    """Call fn with the inputs at positions `wrt` requiring gradients; backpropagate `upstream`
    (ones where None) from the result (or its item `output`). Returns (result, gradients)."""
    args = list(args)
    for i in wrt:
        args[i] = args[i].detach().clone().requires_grad_(True)
    result = fn(*args, **kwargs)
    out = result if output is None else result[output]
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        raise AssertionError(
            "no gradient flows from your output back to the inputs: "
            "build it from the inputs with differentiable tensor operations"
        )
    seed = torch.ones_like(out) if upstream is None else upstream.to(out.dtype)
    grads = torch.autograd.grad(
        out, [args[i] for i in wrt], grad_outputs=seed, allow_unused=True
    )
    grads = tuple(
        torch.zeros_like(args[i]) if g is None else g for i, g in zip(wrt, grads)
    )
    detached = (
        tuple(r.detach() if isinstance(r, torch.Tensor) else r for r in result)
        if isinstance(result, tuple)
        else (result.detach() if isinstance(result, torch.Tensor) else result)
    )
    return detached, grads


def grad_of(
    fn: Callable,
    *args: Any,
    wrt: tuple[int, ...] = (0,),
    output: int | None = None,
    upstream: torch.Tensor | None = None,
) -> tuple[Any, tuple[torch.Tensor, ...]]:
    """(result, gradients of the inputs at `wrt`) of fn(*args), as `gradient_call` computes
    them; in the submission's process where fn is a function of the submission (chapter 4)."""
    if isinstance(fn, Remote):
        return fn.gradient(list(args), list(wrt), output, upstream)
    return gradient_call(fn, list(args), {}, list(wrt), output, upstream)


def calls_of(fn: Callable, inner: str, *args: Any) -> tuple[Any, list[list]]:
    """(fn(*args), the shapes of the inputs of every call fn makes to `inner`, in the order of
    its parameters (None for an input that is not an array)), `inner` being
    the function of that name fn's answer is asked to use (chapter 2's online softmax feeds
    its blocks to its step). In the submission's process, `inner` is the reference's
    meanwhile; here, it is the same function, watched."""
    if isinstance(fn, Remote):
        return fn.recording(inner, list(args))
    namespace = fn.__globals__
    original, calls = namespace[inner], []

    def watched(*inner_args: Any, **kwargs: Any) -> Any:
        bound = inspect.signature(original).bind(*inner_args, **kwargs).arguments
        calls.append([shape_of(a) for a in bound.values()])
        return original(*inner_args, **kwargs)

    namespace[inner] = watched
    try:
        return fn(*args), calls
    finally:
        namespace[inner] = original
