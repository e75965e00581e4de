"""Atomics on any PE's copy of a symmetric element:
atomic_*(target, [cond,] [value,] remote_pe=-1, *, offset=0, dtype=None).
remote_pe=-1 means this PE. The target's first element (or element
`offset`) is used; dtype overrides the element type (needed for Buffers).

The 14 functions are the C module's own (a hot call; every check is in C,
missing and extra arguments included), as is the table that names each op
and what it takes (_symmem.ATOMIC_OPS). Here is only the spelling of dtypes
that NumPy and torch accept, which the C module asks for a dtype= that is
not a name it knows."""

import numpy as np

from symmem import _symmem


def _dtype_name(dtype):
    """A dtype NumPy or torch understands (np.int64, 'i8', torch.int64), as
    its name ('int64')."""
    if isinstance(dtype, str) and dtype in _symmem.DTYPES:
        return dtype
    if not isinstance(dtype, str):
        try:  # a NumPy dtype or scalar type, or anything NumPy understands
            return np.dtype(dtype).name
        except (TypeError, ValueError):
            pass
    name = str(getattr(dtype, "name", dtype)).replace("torch.", "")
    try:
        return np.dtype(name).name
    except (TypeError, ValueError):
        return name


_symmem._set_dtype_namer(_dtype_name)

atomic_fetch = _symmem.atomic_fetch
atomic_set = _symmem.atomic_set
atomic_inc = _symmem.atomic_inc
atomic_fetch_inc = _symmem.atomic_fetch_inc
atomic_add = _symmem.atomic_add
atomic_fetch_add = _symmem.atomic_fetch_add
atomic_and = _symmem.atomic_and
atomic_fetch_and = _symmem.atomic_fetch_and
atomic_or = _symmem.atomic_or
atomic_fetch_or = _symmem.atomic_fetch_or
atomic_xor = _symmem.atomic_xor
atomic_fetch_xor = _symmem.atomic_fetch_xor
atomic_swap = _symmem.atomic_swap
atomic_compare_swap = _symmem.atomic_compare_swap

__all__ = [name for name, _ in _symmem.ATOMIC_OPS]
