"""nvshmem.core.utils: sizes of arrays and of NVSHMEM's element types
(`symmem.core.utils` and `import symmem.core.utils` are this module)."""
import math

import numpy as np

from symmem import _symmem
from symmem._errors import invalid
from symmem._memory import _shape_tuple

# NVSHMEM's type names (the C library's table, NumPy's names included) and
# the C spellings NVSHMEM4Py also accepts.
_NBYTES = {**_symmem.DTYPES,
           **{name: _symmem.DTYPES[numpy] for name, numpy in _symmem.DTYPE_ALIASES.items()},
           "fp16": 2, "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}


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
    """Bytes of an array of shape (an int or a sequence of ints) and dtype (a
    NumPy name or dtype, a torch dtype, or "bfloat16"). Names are NumPy's:
    "float" is float64 here, as in NVSHMEM4Py."""
    shape = _shape_tuple(shape, "get_size")
    return math.prod(shape) * _itemsize(dtype, "get_size")


def dtype_nbytes(dtype):
    """Bytes of one element of an NVSHMEM type name ("float", "half",
    "longlong", "int64_t", ...; NumPy's names too)."""
    try:
        return _NBYTES[dtype]
    except (KeyError, TypeError):
        raise invalid(f"dtype_nbytes: dtype={dtype!r} is not an NVSHMEM type name (one of "
                      f"{', '.join(sorted(_NBYTES))})") from None


__all__ = ["get_size", "dtype_nbytes"]
