"""Atomics on any PE's copy of a symmetric element:
atomic_*(target, [cond,] [value,] remote_pe=-1, *, offset=0, dtype=None).
remote_pe=-1 means this PE. The target's first element (or element
`offset`) is used; dtype overrides the element type (needed for Buffers)."""
import struct

from symmem import _symmem
from symmem._errors import invalid

# op codes of the C API, in its order
_OPS = ("fetch", "set", "inc", "fetch_inc", "add", "fetch_add", "and", "fetch_and", "or",
        "fetch_or", "xor", "fetch_xor", "swap", "compare_swap")
_CODES = {"int32": "i", "int64": "q", "uint32": "I", "uint64": "Q", "float32": "f",
          "float64": "d"}


def _dtype_name(target, dtype):
    if dtype is None:
        return None
    import numpy as np
    if not isinstance(dtype, str):
        try:  # a NumPy dtype or scalar type (np.int64), or anything NumPy understands
            return np.dtype(dtype).name
        except (TypeError, ValueError):
            pass
    name = str(getattr(dtype, "name", dtype)).replace("torch.", "")
    try:
        name = np.dtype(name).name
    except (TypeError, ValueError):
        pass
    return name


def _bits(call, value, dtype_name, arg):
    """value as the element's bits; the C side reads the low bytes."""
    if value is None:
        return 0
    code = _CODES.get(dtype_name)
    if code is None:
        return int(value) & (2**64 - 1)
    try:
        packed = struct.pack("<" + code, value)
    except struct.error:
        raise invalid(f"{call}: {arg}={value!r} does not fit in {dtype_name}") from None
    return int.from_bytes(packed, "little")


def _from_bits(bits, dtype_name):
    code = _CODES[dtype_name]
    return struct.unpack("<" + code, bits.to_bytes(8, "little")[:struct.calcsize(code)])[0]


def _element_dtype(target, dtype):
    name = _dtype_name(target, dtype)
    if name is not None:
        return name
    found = getattr(target, "dtype", None)
    return _dtype_name(target, found) if found is not None else None


def _atomic(op, target, value=None, cond=None, remote_pe=-1, offset=0, dtype=None,
            takes=()):
    call = "atomic_" + op
    for arg, given in (("value", value), ("cond", cond)):
        if arg in takes and given is None:
            raise invalid(f"{call}: {arg}=None must be a number")
    if isinstance(remote_pe, bool) or not isinstance(remote_pe, int):
        raise invalid(f"{call}: remote_pe={remote_pe!r} must be an int")
    pe = _symmem.my_pe() if remote_pe == -1 else remote_pe
    name = _element_dtype(target, dtype)
    old_bits, actual = _symmem.atomic(_OPS.index(op), target, _bits(call, value, name, "value"),
                                      _bits(call, cond, name, "cond"), pe, offset, name)
    return _from_bits(old_bits, actual)


def _make(op, takes_value, takes_cond, fetches):
    if takes_cond:
        def atomic(target, cond, value, remote_pe=-1, *, offset=0, dtype=None):
            return _atomic(op, target, value, cond, remote_pe, offset, dtype,
                           ("value", "cond"))
    elif takes_value:
        def atomic(target, value, remote_pe=-1, *, offset=0, dtype=None):
            old = _atomic(op, target, value, None, remote_pe, offset, dtype, ("value",))
            return old if fetches else None
    else:
        def atomic(target, remote_pe=-1, *, offset=0, dtype=None):
            old = _atomic(op, target, None, None, remote_pe, offset, dtype)
            return old if fetches else None
    atomic.__name__ = atomic.__qualname__ = "atomic_" + op
    atomic.__doc__ = f"Atomic {op.replace('_', ' ')} on PE remote_pe's copy of target."
    return atomic


atomic_fetch = _make("fetch", False, False, True)
atomic_set = _make("set", True, False, False)
atomic_inc = _make("inc", False, False, False)
atomic_fetch_inc = _make("fetch_inc", False, False, True)
atomic_add = _make("add", True, False, False)
atomic_fetch_add = _make("fetch_add", True, False, True)
atomic_and = _make("and", True, False, False)
atomic_fetch_and = _make("fetch_and", True, False, True)
atomic_or = _make("or", True, False, False)
atomic_fetch_or = _make("fetch_or", True, False, True)
atomic_xor = _make("xor", True, False, False)
atomic_fetch_xor = _make("fetch_xor", True, False, True)
atomic_swap = _make("swap", True, False, True)
atomic_compare_swap = _make("compare_swap", True, True, True)

__all__ = [name for name in dir() if name.startswith("atomic_")]
