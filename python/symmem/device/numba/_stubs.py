"""The Python objects behind the device names: called from Python they only
say where they work; inside @numba.njit each is the overload registered for
it (numba.extending.overload, the cpu target)."""
from numba.core.errors import TypingError
from numba.extending import overload

from symmem import _symmem


def stub(name, params):
    def device_function(*args, **kwargs):
        raise _symmem.NvshmemInvalid(
            f"symmem.device.numba.{name}({params}) runs inside @numba.njit functions "
            f"(cpu backend); from Python call symmem.{name} instead")
    device_function.__name__ = device_function.__qualname__ = name
    device_function.__doc__ = f"{name}({params}): NVSHMEM4Py's device {name}, for @numba.njit."
    return device_function


def cpu_overload(function):
    """Registers an overload of function for @numba.njit code."""
    return overload(function, target="cpu", jit_options={"no_cpython_wrapper": True})


def require_array(call, what, arg, dtypes=None):
    from numba import types
    if not isinstance(arg, types.Array):
        raise TypingError(f"{call}: {what} must be a NumPy array made by symmem.array, "
                          f"got {arg}")
    if dtypes is not None and str(arg.dtype) not in dtypes:
        raise TypingError(f"{call}: {what} has dtype {arg.dtype}; {call} takes "
                          f"{', '.join(dtypes)}")
