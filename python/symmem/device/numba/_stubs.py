"""The Python objects behind the device names: called from Python they only
say where they work; inside @numba.njit each is the overload registered for
it (numba.extending.overload, the cpu target); in numba-cuda's simulator
(NUMBA_ENABLE_CUDASIM=1), inside a simulated kernel, each runs its Python
function from _simulator.py."""

import ast
import inspect

from numba.core.errors import TypingError
from numba.extending import overload

from symmem import _symmem


SIMULATED = {}  # name -> its function in numba-cuda's simulated kernels (_simulator.py)


def in_simulated_kernel():
    return False  # until _simulator.install() puts its own check here


def stub(name, params):
    names = [p.split("=")[0].strip() for p in params.split(",") if p.strip()]

    def device_function(*args, **kwargs):
        if SIMULATED and in_simulated_kernel():
            for param in names[len(args) :]:  # keywords in order, as positions
                if param not in kwargs:
                    break
                args += (kwargs.pop(param),)
            if kwargs:
                raise _symmem.NvshmemInvalid(
                    f"{name}({params}): unexpected or out-of-order "
                    f"keyword argument {sorted(kwargs)[0]!r}"
                )
            return SIMULATED[name](name, *args)
        raise _symmem.NvshmemInvalid(
            f"symmem.device.numba.{name}({params}) runs inside @numba.njit functions "
            f"(cpu backend) and @numba.cuda.jit kernels; from Python call symmem.{name} "
            "instead"
        )

    device_function.__name__ = device_function.__qualname__ = name
    device_function.__doc__ = _doc(name)
    device_function.__signature__ = _signature(params)  # for help(), IDEs and the docs
    return device_function


def _doc(name):
    """name's docstring (_docs.py); a warp or block form takes its base's."""
    from symmem.device import _device_docs as _docs

    for scope in ("_warp", "_block"):
        if name.endswith(scope):
            return _docs.scoped(name, name[: -len(scope)])
    return _docs.DOCS[name]


def _signature(params):
    """The inspect.Signature of a parameter list such as "team, dst, src, root=0"."""
    parameters = []
    for param in (p.strip() for p in params.split(",") if p.strip()):
        name, _, default = param.partition("=")
        parameters.append(
            inspect.Parameter(
                name.strip(),
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=ast.literal_eval(default) if default else inspect.Parameter.empty,
            )
        )
    return inspect.Signature(parameters)


def cpu_overload(function):
    """Registers an overload of function for @numba.njit code."""
    return overload(function, target="cpu", jit_options={"no_cpython_wrapper": True})


def require_array(call, what, arg, dtypes=None, writes=False):
    """arg must be an array (of one of dtypes); one the call writes
    (writes=True) must be writable: numba types an array whose
    flags.writeable is False as readonly, so the call is refused when the
    function compiles, as the host call refuses it."""
    from numba import types

    if not isinstance(arg, types.Array):
        raise TypingError(f"{call}: {what} must be a NumPy array made by symmem.array, got {arg}")
    if dtypes is not None and str(arg.dtype) not in dtypes:
        raise TypingError(f"{call}: {what} has dtype {arg.dtype}; {call} takes {', '.join(dtypes)}")
    if writes and not arg.mutable:
        raise TypingError(f"{call}: {what} ({arg}) is read-only, and the call writes it")


def require_pair(call, dst, src, copies=True):
    """dst (which the call writes) and src: arrays of one dtype, as the host
    calls want two typed arrays; a call that copies (copies=True) says how
    to copy the bytes as they are."""
    require_array(call, "dst", dst, writes=True)
    require_array(call, "src", src)
    if dst.dtype != src.dtype:
        hint = (
            f": symmem copies bytes, so to copy them as they are pass src.view(np.{dst.dtype})"
            if copies
            else ""
        )
        raise TypingError(f"{call}: dst has dtype {dst.dtype} but src has {src.dtype}{hint}")


def require_int(call, what, arg):
    """arg must be an integer (as the host call's int argument must)."""
    from numba import types

    if not isinstance(arg, types.Integer):
        raise TypingError(f"{call}: {what} must be an integer, got {arg}")
