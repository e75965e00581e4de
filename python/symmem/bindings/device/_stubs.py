"""The Python functions behind symmem.bindings.device's names, made from the
table (_table.py) by a loop: each has NVSHMEM4Py's name, its parameters (as
inspect.signature shows them, their types as annotations), a docstring
(_docs.py) and the table's row (.call). numba and numba-cuda-mlir replace
their calls in a kernel with the overloads registered on them; called from
Python they say where they work. CuTe's run the call itself (cute.py)."""

import inspect

from symmem._errors import invalid

from . import _docs, _table

_KERNELS = {
    "numba": "@numba.cuda.jit kernels (numba-cuda)",
    "numba_cuda_mlir": "numba-cuda-mlir @cuda.jit kernels",
    "cute": "CuTe DSL kernels (@cute.kernel, @cute.jit), while CuTe traces them",
}


def signature(call):
    """call's parameters as an inspect.Signature, their types as annotations."""
    return inspect.Signature(
        [
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind)
            for name, kind in call.params
        ],
        return_annotation=call.returns,
    )


def dress(function, module, call):
    """function as symmem.bindings.device.<module>.<name>: its name,
    signature, docstring and table row."""
    function.__name__ = function.__qualname__ = call.name
    function.__module__ = f"symmem.bindings.device.{module}"
    function.__signature__ = signature(call)
    function.__doc__ = _docs.build(module, call)
    function.call = call
    return function


def _stub(module, call):
    shown = f"symmem.bindings.device.{module}.{call.name}{signature(call)}"

    def device_function(*args, **kwargs):
        raise invalid(f"{shown} is a device function: it runs in {_KERNELS[module]}")

    return dress(device_function, module, call)


def make(module):
    """{name: its stub} for every call of module ("numba" or "numba_cuda_mlir")."""
    return {name: _stub(module, call) for name, call in _table.for_module(module).items()}
