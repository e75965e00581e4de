"""symmem's own all-reduce (SYMMEM_GPU_COLLECTIVES=symmem, one_shot or
two_shot) on the world team: every PE checks what it received against NumPy.
  - every dtype and op, at sizes around the kernels' 16-byte packs and
    their slices (odd counts, a count under one pack), out of place and in
    place, and from a misaligned element (where NVSHMEM's serves);
  - 10,000 back-to-back reduces on one stream, checked at the end;
  - a CUDA graph of 100 chained max-reduces, replayed 20 times with new
    input written on the stream between replays.
Run: SYMMEM_GPU_COLLECTIVES=symmem python -m symmem.run -n 2 tests/gpu/allreduce.py"""
import os

import cupy as cp
import numpy as np
import torch

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
W = nvshmem.Teams.TEAM_WORLD
mode = os.environ.get("SYMMEM_GPU_COLLECTIVES", "nvshmem")
stream = cp.cuda.Stream(non_blocking=True)
checks = 0

INTS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
ARITH = ["sum", "min", "max", "prod"]
BITS = ["and", "or", "xor"]
SIZES = [1, 7, 8, 9, 63, 1000, 4099, 100003]


def values(dtype, pe, count):
    """PE pe's input: small numbers, so sums and products are exact everywhere."""
    base = (np.arange(count) * 7 + pe * 3) % 5
    if dtype == "bool":
        return (base + pe) % 2 == 1
    return (base + 1).astype(np.float64)


def reference(dtype, op, count):
    parts = np.stack([values(dtype, pe, count) for pe in range(n)])
    if dtype == "bool":
        parts = parts.astype(np.uint8)
        fold = {"sum": np.max, "max": np.max, "or": np.max, "prod": np.min, "min": np.min,
                "and": np.min, "xor": np.bitwise_xor.reduce}[op]
        return fold(parts, axis=0).astype(bool)
    if op in BITS:
        parts = parts.astype(np.int64)
        fold = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return fold.reduce(parts, axis=0)
    return {"sum": parts.sum(0), "prod": parts.prod(0), "min": parts.min(0),
            "max": parts.max(0)}[op]


def make(dtype, count, extra=0):
    """A symmetric array (torch for bfloat16) of count (+ extra) elements."""
    if dtype == "bfloat16":
        return nvshmem.tensor((count + extra,), dtype=torch.bfloat16)
    return nvshmem.array((count + extra,), dtype=dtype)


def release(*arrays):
    for x in arrays:
        if isinstance(x, torch.Tensor):
            nvshmem.free_tensor(x)
        else:
            nvshmem.free_array(x)


def to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.float().cpu().numpy()
    return cp.asnumpy(x)


def fill(x, data):
    if isinstance(x, torch.Tensor):
        x.copy_(torch.from_numpy(np.asarray(data, dtype=np.float32)).to(x.device))
    else:
        x[:] = cp.asarray(data.astype(x.dtype))


def check(dtype, op, count, got, what):
    global checks
    want = reference(dtype, op, count)
    got = np.asarray(got)
    if dtype == "bool":
        ok = np.array_equal(got.astype(bool), want)
    else:
        ok = np.array_equal(got.astype(np.float64), want.astype(np.float64))
    if not ok:
        bad = np.flatnonzero(got.astype(np.float64) != want.astype(np.float64))[:6]
        raise AssertionError(f"PE {me} ({mode}): reduce {dtype} {op} count {count} {what}: "
                             f"wrong at {bad.tolist()}: got {got[bad].tolist()}, expected "
                             f"{want[bad].tolist()}")
    checks += 1


# Every dtype and op at every size, out of place and in place.
for dtype in INTS + FLOATS:
    for op in ARITH + (BITS if dtype in INTS else []):
        for count in SIZES:
            src, dst = make(dtype, count), make(dtype, count)
            fill(src, values(dtype, me, count))
            nvshmem.reduce(W, dst, src, op, stream=stream)
            stream.synchronize()
            check(dtype, op, count, to_numpy(dst), "out of place")
            nvshmem.reduce(W, src, src, op)
            check(dtype, op, count, to_numpy(src), "in place")
            release(src, dst)

# From element 1: not 16-byte aligned (NVSHMEM's collective), then aligned again.
for count in (5, 4099):
    src, dst = make("float32", count, 1), make("float32", count, 1)
    fill(src[1:], values("float32", me, count))
    nvshmem.reduce(W, dst[1:], src[1:], "sum")
    check("float32", "sum", count, to_numpy(dst[1:]), "misaligned")
    nvshmem.reduce(W, dst[:count], src[1:], "sum")
    check("float32", "sum", count, to_numpy(dst[:count]), "misaligned src")
    release(src, dst)

# 10,000 back-to-back reduces on one stream: the flags never get out of step.
src, dst = make("float32", 1000), make("float32", 1000)
fill(src, values("float32", me, 1000))
for _ in range(10000):
    nvshmem.reduce(W, dst, src, "sum", stream=stream)
stream.synchronize()
check("float32", "sum", 1000, to_numpy(dst), "after 10,000 back to back")
release(src, dst)

# A graph of 100 chained max-reduces (a -> b -> a ...), replayed with new input.
a, b = make("float32", 4096), make("float32", 4096)
a[:] = 0
nvshmem.reduce(W, b, a, "max", stream=stream)  # kernels built before the capture
stream.synchronize()
nvshmem.barrier_all()
stream.begin_capture()
for k in range(100):
    nvshmem.reduce(W, b if k % 2 == 0 else a, a if k % 2 == 0 else b, "max", stream=stream)
graph = stream.end_capture()
for replay in range(20):
    with stream:
        a[:] = cp.arange(4096, dtype=cp.float32) % 11 + replay * 100 + me
    graph.launch(stream=stream)
    stream.synchronize()
    want = np.arange(4096, dtype=np.float32) % 11 + replay * 100 + (n - 1)
    got = cp.asnumpy(a)  # 100 reduces: the last wrote a
    assert np.array_equal(got, want), (
        f"PE {me} ({mode}): graph replay {replay}: got {got[:4]}, expected {want[:4]}")
    checks += 1
del graph
release(a, b)
nvshmem.barrier_all()
nvshmem.finalize()
print(f"PE {me} OK ({checks} checks, {mode})", flush=True)
