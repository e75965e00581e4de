"""What every PE must receive in the device-DSL programs (cute_device.py,
mlir_device.py): each PE's source values, exact in every dtype (and their
sums over 4 PEs), the reductions, the atomics' results, and a check that
names the PE, the call and the first bad elements. bfloat16 is stored as
its uint16 bits (CuPy has no bfloat16)."""

import cupy as cp
import numpy as np

FLOATS = ("float16", "bfloat16", "float32", "float64")
ATOMIC_INTS = ("int32", "int64", "uint32", "uint64")
FLOAT_ATOMICS = ("atomic_fetch", "atomic_set", "atomic_swap", "atomic_add", "atomic_fetch_add")
ATOMICS = [
    "atomic_fetch",
    "atomic_set",
    "atomic_swap",
    "atomic_compare_swap",
    "atomic_add",
    "atomic_fetch_add",
    "atomic_inc",
    "atomic_fetch_inc",
    "atomic_and",
    "atomic_fetch_and",
    "atomic_or",
    "atomic_fetch_or",
    "atomic_xor",
    "atomic_fetch_xor",
]
# The target word starts at 5; every op uses 3 (compare_swap: cond 5, value 3).
ATOMIC_START = 5
ATOMIC_AFTER = {
    "atomic_fetch": 5,
    "atomic_set": 3,
    "atomic_swap": 3,
    "atomic_compare_swap": 3,
    "atomic_add": 8,
    "atomic_fetch_add": 8,
    "atomic_inc": 6,
    "atomic_fetch_inc": 6,
    "atomic_and": 1,
    "atomic_fetch_and": 1,
    "atomic_or": 7,
    "atomic_fetch_or": 7,
    "atomic_xor": 6,
    "atomic_fetch_xor": 6,
}
RETURNS_OLD = {
    "atomic_fetch",
    "atomic_swap",
    "atomic_compare_swap",
    "atomic_fetch_add",
    "atomic_fetch_inc",
    "atomic_fetch_and",
    "atomic_fetch_or",
    "atomic_fetch_xor",
}


def numpy_dtype(dtype):
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(dtype)


def storage(dtype):
    """The dtype symmem.array holds dtype's values in."""
    return "uint16" if dtype == "bfloat16" else dtype


def pattern(pe, dtype, n):
    """PE pe's n source values."""
    i = np.arange(n)
    if dtype in FLOATS:
        return (pe * 1.5 + (i % 7) * 0.25).astype(numpy_dtype(dtype))
    low = 0 if dtype.startswith("uint") else -20
    return ((pe * 7 + i * 3) % 23 + low).astype(dtype)


def device(values, dtype):
    """values (of dtype) as a CuPy array of storage(dtype)."""
    return cp.asarray(values.view("uint16") if dtype == "bfloat16" else values)


def host(array, dtype):
    """A symmetric array's values as float64 (exact for every value here)."""
    return cp.asnumpy(array).view(numpy_dtype(dtype)).astype(np.float64)


def reduced(op, dtype, n, npes):
    parts = [pattern(p, dtype, n) for p in range(npes)]
    if op == "sum":
        return sum(p.astype(np.float64) for p in parts)
    if op in ("min", "max"):
        return getattr(np, op + "imum").reduce([p.astype(np.float64) for p in parts])
    return getattr(np, f"bitwise_{op}").reduce(parts).astype(np.float64)


def check(me, what, got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or not np.array_equal(got, want):
        bad = np.flatnonzero(got != want)[:5] if got.shape == want.shape else "shape"
        raise AssertionError(
            f"PE {me}: {what}: at {bad}: got {got.ravel()[:8]}, want {want.ravel()[:8]}"
        )
