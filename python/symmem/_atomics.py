"""Atomics on any PE's copy of a symmetric element:
atomic_*(target, [cond,] [value,] remote_pe=-1, *, offset=0, dtype=None).
remote_pe=-1 means this PE. The target's first element (or element
`offset`) is used; dtype overrides the element type (needed for Buffers).

The C module does the work and holds the rules: _symmem.ATOMIC_OPS names
each op and what it takes, _symmem.atomic checks and converts the
arguments and returns the old value of the fetching ops. Here are the
functions' signatures and the dtype spellings NumPy and torch accept."""
import inspect

import numpy as np

from symmem import _symmem

_CODES = {name: code for code, (name, _) in enumerate(_symmem.ATOMIC_OPS)}


def _dtype_name(dtype):
    """A dtype NumPy or torch understands (np.int64, 'i8', torch.int64), as
    its name ('int64'); None stays None."""
    if dtype is None or (isinstance(dtype, str) and dtype in _symmem.DTYPES):
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


def _signature(operands):
    """(target, [cond,] [value,] remote_pe=-1, *, offset=0, dtype=None)."""
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature(
        [inspect.Parameter("target", positional)]
        + [inspect.Parameter(name, positional) for name in operands]
        + [inspect.Parameter("remote_pe", positional, default=-1),
           inspect.Parameter("offset", keyword, default=0),
           inspect.Parameter("dtype", keyword, default=None)])


def _make(name):
    code = _CODES[name]
    atomic = _symmem.atomic

    # The C function parses the arguments (a missing or extra one is
    # NvshmemInvalid naming it, as for every other call); dtype, keyword-only,
    # is spelled here as a name the C module reads.
    def op(*args, **kwargs):
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = _dtype_name(kwargs["dtype"])
        return atomic(code, *args, **kwargs)

    op.__name__ = op.__qualname__ = name
    op.__signature__ = _signature(_symmem.ATOMIC_OPS[code][1])
    what = name[len("atomic_"):].replace("_", " ")
    op.__doc__ = f"Atomic {what} on PE remote_pe's copy of target."
    return op


atomic_fetch = _make("atomic_fetch")
atomic_set = _make("atomic_set")
atomic_inc = _make("atomic_inc")
atomic_fetch_inc = _make("atomic_fetch_inc")
atomic_add = _make("atomic_add")
atomic_fetch_add = _make("atomic_fetch_add")
atomic_and = _make("atomic_and")
atomic_fetch_and = _make("atomic_fetch_and")
atomic_or = _make("atomic_or")
atomic_fetch_or = _make("atomic_fetch_or")
atomic_xor = _make("atomic_xor")
atomic_fetch_xor = _make("atomic_fetch_xor")
atomic_swap = _make("atomic_swap")
atomic_compare_swap = _make("atomic_compare_swap")

__all__ = [name for name in dir() if name.startswith("atomic_")]
