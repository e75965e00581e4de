"""The one order of docs/reproducibility.md in NumPy, for the gpu tests of
the device-side reductions (device_collectives.py, triton_device.py):
values whose sum's bits depend on the order, the reference combined in
that order, and a comparison bit for bit. tests/python/test_reproducible.py
holds the host collectives' fuller version."""

import numpy as np

OPS = {"sum": np.add, "prod": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or}
OPS["xor"] = np.bitwise_xor


def spread(pe, n, size, dtype):
    """PE pe's (of n) values: for a float dtype, magnitudes over much of its
    range, alternating in sign from PE to PE; at every 4th element a large
    value that the even members hold with alternating signs (1e8, x, -1e8,
    y: cancellation); signed zeros and a NaN at one member (mostly not member
    0) at others; for an integer dtype, small values."""
    dt = np.dtype(dtype)
    i = np.arange(size)
    if dt.kind != "f":
        return ((i * 3 + pe * 5 + 1) % 50).astype(dt)
    r = np.random.default_rng([49, pe, size]).random((2, size))
    lo, hi = (-14, 12) if dt.itemsize == 2 else (-60, 60)
    x = np.ldexp(1 + r[0], (lo + r[1] * (hi - lo)).astype(np.int64)) * (-1.0) ** pe
    if pe % 2 == 0:
        x[i % 4 == 0] = np.ldexp(1 + (i[i % 4 == 0] % 1021) / 1021, hi - 2) * (-1.0) ** (pe // 2)
    x[i % 16 == 5] = -0.0 if pe % 2 else 0.0
    x[(i % 16 == 9) & ((i // 16) % n == pe)] = np.nan
    return x.astype(dt)


def one_order(every, op, dtype):
    """every member's values combined member 0 first, as symmem/vocabulary.h's
    combine column says (min and max: a NaN wins, of equal values the
    earlier member's), float16 in float32 and rounded once; for bfloat16
    pass float32 values and round the result."""
    acc = every[0].astype(np.float32 if np.dtype(dtype) == np.float16 else dtype)
    with np.errstate(all="ignore"):
        for x in every[1:]:
            b = x.astype(acc.dtype)
            if op in ("min", "max"):
                acc = np.where(((b < acc) if op == "min" else (b > acc)) | (b != b), b, acc)
            else:
                acc = OPS[op](acc, b)
    return acc.astype(dtype)


def same_bits(got, want):
    """got equals want element by element; floats bit for bit (-0 is not
    0), any NaN as any NaN (its bits are the engine's)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    bits = got.dtype.str.replace("f", "u")
    return bool(((got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))).all())
