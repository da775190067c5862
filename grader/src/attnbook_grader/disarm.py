"""The routines a question rules out of a library its answers may use, made unreachable in
the process that runs those answers (issue 44: a rule holds because the code is not there,
never because the source was read and looked clean).

A hidden test names them: ``guarded(fn, names=("scaled_dot_product_attention", ...))`` in a
PyTorch question. PyTorch stays importable there, so hiding its files (`reach`) cannot help;
instead, before the first cell runs, the child (`sandbox.serve`) takes the routine away where
every spelling of it ends:

* a routine written in Python (``torch.nn.functional.multi_head_attention_forward``,
  ``_in_projection_packed``): its code object is replaced, in place, by one that raises, so
  the function object is the same wherever it is stored (a module's dict, a class, a
  container) and every reference to it raises; the original code object is dropped;
* a routine compiled into PyTorch (``scaled_dot_product_attention``): every ATen operator of
  its family (`KERNELS`: the fused kernels behind it too, for every dispatch key that has
  one) gets a kernel that raises, through PyTorch's dispatcher, which every spelling
  reaches (``F.…``, ``torch._C._nn.…``, ``torch.ops.aten.…``, a module that calls it). The
  registration's handle is kept alive by a reference count no Python object holds, so no
  code in the process can find it to undo it.

What cannot be disarmed this way (a compiled routine outside `KERNELS`) is left to the
source reading (`covered`, `reach.left_to_read`). The error the answer meets names the
routine; the question's tests fail in the grader as for any exception.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable

from attnbook.exercise_checks.rules import ruled_out

__all__ = ["KERNELS", "covered", "disarm"]

# a compiled routine -> the parts of the ATen operator names of its family (the routine and
# the kernels it dispatches to, which PyTorch also exposes as operators)
KERNELS: dict[str, tuple[str, ...]] = {
    "scaled_dot_product_attention": (
        "scaled_dot_product",
        "flash_attention",
        "efficient_attention",
        "cudnn_attention",
    ),
    "multi_head_attention_forward": (
        "multi_head_attention",
        "transformer_encoder_layer_fwd",
    ),
    # PyTorch's quantizers (exercise 9 asks for a quantizer written by hand); the
    # fake-quantize routines are in the family, being the same arithmetic
    "quantize_per_channel": ("quantize_per_channel",),
    "quantize_per_tensor": ("quantize_per_tensor",),
}
# the dispatch keys a kernel of the family may be registered at
_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CPU",
    "CUDA",
    "Meta",
    "MPS",
    "XPU",
    "NestedTensorCPU",
    "NestedTensorCUDA",
    "QuantizedCPU",
    "QuantizedCUDA",
)
_ROOTS = ("torch", "numpy")  # the libraries whose routines a question may rule out


def _holders(name: str) -> Iterable[tuple[str, object]]:
    """(module name, object) for every loaded module of `_ROOTS` that binds `name`."""
    for module_name, module in list(sys.modules.items()):
        if module_name.split(".")[0] in _ROOTS and module is not None:
            value = getattr(module, "__dict__", {}).get(name)
            if value is not None:
                yield module_name, value


def covered(name: str) -> bool:
    """Whether `disarm` takes `name` away in this process's libraries: every object bound to
    it is a Python function, or its compiled family is in `KERNELS`."""
    found = list(_holders(name))
    if not found:
        return False
    python = all(
        isinstance(v, types.FunctionType) and not v.__closure__ for _, v in found
    )
    return python or (name in KERNELS and "torch" in sys.modules)


def _raising_code(name: str, message: str) -> types.CodeType:
    source = f"def {name}(*args, **kwargs):\n    raise RuntimeError({message!r})\n"
    namespace: dict = {}
    exec(compile(source, f"<ruled out: {name}>", "exec"), namespace)  # noqa: S102
    return namespace[name].__code__


def _python(name: str) -> None:
    for _, value in _holders(name):
        if isinstance(value, types.FunctionType):  # without a closure (`covered`)
            value.__code__ = _raising_code(name, ruled_out([name]))


def _compiled(names: list[str]) -> None:
    """Kernels that raise for every ATen operator of the families of `names`."""
    torch = sys.modules.get("torch")
    if torch is None or not names:
        return
    import ctypes
    import warnings

    parts = [part for name in names for part in KERNELS.get(name, ())]
    ops = sorted(
        op
        for op in torch._C._dispatch_get_all_op_names()
        if op.startswith("aten::") and any(part in op for part in parts)
    )
    handle = torch._C._dispatch_library("IMPL", "aten", "")
    message = ruled_out(names)

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError(message)

    with warnings.catch_warnings():  # "overriding a previously registered kernel"
        warnings.simplefilter("ignore")
        for op in ops:
            base = op.split("::", 1)[1]
            for key in _KEYS:
                if torch._C._dispatch_has_kernel_for_dispatch_key(op, key):
                    handle.impl(base, key, refuse)
    # the registrations last as long as the handle: one reference no object holds
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(handle))
    del handle


def disarm(names: Iterable[str]) -> list[str]:
    """Take the routines `names` away in this process (see the module's docstring): the
    names it covered."""
    done = [name for name in sorted(set(names)) if covered(name)]
    for name in done:
        _python(name)
    _compiled([name for name in done if name in KERNELS])
    return done
