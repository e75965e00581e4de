"""nvshmem.core.utils: sizes of arrays and of NVSHMEM's element types
(`symmem.core.utils` and `import symmem.core.utils` are this module)."""

import math

import numpy as np

from symmem import _symmem
from symmem._errors import invalid
from symmem._memory import _shape_tuple

# NVSHMEM's type names (the C library's table, NumPy's names included) and
# the C spellings NVSHMEM4Py also accepts.
_NBYTES = {
    **_symmem.DTYPES,
    **{name: _symmem.DTYPES[numpy] for name, numpy in _symmem.DTYPE_ALIASES.items()},
    "fp16": 2,
    "int32_t": 4,
    "uint32_t": 4,
    "int64_t": 8,
    "uint64_t": 8,
}


def _itemsize(dtype, call):
    itemsize = getattr(dtype, "itemsize", None)  # a NumPy or torch dtype
    if type(dtype).__module__ == "torch" and isinstance(itemsize, int):
        return itemsize
    if isinstance(dtype, str) and dtype == "bfloat16":  # NumPy has no name for it
        return 2
    try:
        return np.dtype(dtype).itemsize
    except (TypeError, ValueError):
        raise invalid(f"{call}: dtype={dtype!r} is not a NumPy or torch dtype") from None


def get_size(shape, dtype):
    """The number of bytes of an array of shape and dtype.

    Args:
        shape: an int or a sequence of ints.
        dtype: a NumPy dtype or its name, a torch dtype, or "bfloat16".
            Names are NumPy's: "float" is float64 here, as in NVSHMEM4Py.

    Returns:
        An int.

    Raises:
        NvshmemInvalid: shape is not an int or a sequence of ints, or has
            a negative dimension; dtype is not a NumPy or torch dtype.

    Example:
        >>> symmem.utils.get_size((2, 3), "float32")
        24
    """
    shape = _shape_tuple(shape, "get_size")
    return math.prod(shape) * _itemsize(dtype, "get_size")


def dtype_nbytes(dtype):
    """The size of one element of an NVSHMEM type name, in bytes.

    Args:
        dtype: an NVSHMEM type name ("float", "half", "longlong",
            "int64_t", ...) or a NumPy dtype name ("float32", "bfloat16").

    Returns:
        An int.

    Raises:
        NvshmemInvalid: dtype is not one of those names.

    Example:
        >>> symmem.utils.dtype_nbytes("half"), symmem.utils.dtype_nbytes("float")
        (2, 4)
    """
    try:
        return _NBYTES[dtype]
    except (KeyError, TypeError):
        raise invalid(
            f"dtype_nbytes: dtype={dtype!r} is not an NVSHMEM type name (one of "
            f"{', '.join(sorted(_NBYTES))})"
        ) from None


__all__ = ["get_size", "dtype_nbytes"]
