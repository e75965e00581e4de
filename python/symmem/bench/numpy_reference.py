"""What a user would do without symmem on one machine: the same data
movement by NumPy in one process. A put or get is one copy; a collective
over n PEs is the whole job done by one process (reduce: sum n arrays;
broadcast, fcollect, alltoall: the n copies every PE would receive).

Every buffer is memory of the kind symmem's cpu heap is, placed as it is
(shared()): where NumPy's own allocation puts a buffer (malloc's choice, 16
bytes past a page for large ones) changes how fast a copy runs, so the
ratios would compare alignments as much as libraries."""

import mmap
import os
import statistics
import time

import numpy as np

from symmem.bench import plan

# symmem's cpu backend maps each PE's heap at this boundary (segment.c,
# SYMMEM_CPU_ALIGN_MAX); its arrays are 256-byte aligned offsets into it.
HEAP_ALIGN = 2 << 20
SETUP = (
    "one process; every buffer in shared memory (a memfd file: tmpfs pages, as "
    "symmem's /dev/shm heap) starting at a 2 MiB boundary, as symmem's heap is mapped"
)


def shared(count, dtype, fill=None):
    """count items of dtype in a shared-memory file mapping, starting at a
    HEAP_ALIGN boundary (filled with fill where given)."""
    nbytes = count * np.dtype(dtype).itemsize
    fd = os.memfd_create("symmem-bench-numpy")
    try:
        os.ftruncate(fd, nbytes + HEAP_ALIGN)
        mapping = mmap.mmap(fd, nbytes + HEAP_ALIGN)  # unmapped with its last array
    finally:
        os.close(fd)
    raw = np.frombuffer(mapping, np.uint8)
    start = -raw.__array_interface__["data"][0] % HEAP_ALIGN
    out = raw[start : start + nbytes].view(dtype)
    if fill is not None:
        out[:] = fill
    return out


def _body(op, nbytes, n):
    count, block = nbytes // 4, nbytes // 4 // n
    if op in ("put", "put_lat", "get", "get_lat", "put_signal"):
        src, dst = shared(nbytes, np.uint8, 1), shared(nbytes, np.uint8)
        return lambda: np.copyto(dst, src)
    if op in ("reduce", "reducescatter"):
        parts = [shared(count, np.float32, p + 1.0) for p in range(n)]
        out = shared(count, np.float32)

        def reduce():
            np.copyto(out, parts[0])
            for part in parts[1:]:
                np.add(out, part, out=out)

        return reduce
    if op == "broadcast":
        src, dsts = shared(count, np.float32, 1), [shared(count, np.float32) for _ in range(n)]
        return lambda: [np.copyto(d, src) for d in dsts]
    if op == "fcollect":
        parts = [shared(block, np.float32, p) for p in range(n)]
        dsts = [shared(n * block, np.float32) for _ in range(n)]
        return lambda: [np.concatenate(parts, out=d) for d in dsts]
    if op == "alltoall":
        srcs = [shared(count, np.float32, p) for p in range(n)]
        dsts = [shared(count, np.float32) for _ in range(n)]

        def alltoall():
            for p, dst in enumerate(dsts):
                for q, src in enumerate(srcs):
                    dst[q * block : (q + 1) * block] = src[p * block : (p + 1) * block]

        return alltoall
    return None  # barrier: nothing to do in one process


def measure(ops, min_bytes, max_bytes, n, fixed=None):
    """Records like the workers', lib 'numpy' (fixed calls a timed run where
    given: --iters)."""
    yield dict(lib="numpy", op="init", seconds=0.0, n_pes=1)
    for op in ops:
        if op == "call_cost":
            src, dst = shared(8, np.uint8, 1), shared(8, np.uint8)
            costs = []
            for _ in range(10000):
                t0 = time.perf_counter()
                np.copyto(dst, src)
                costs.append(time.perf_counter() - t0)
            yield dict(lib="numpy", op=op, bytes=8, us=statistics.median(costs) * 1e6)
            continue
        for size in plan.sizes(op, min_bytes, max_bytes, n):
            body = _body(op, size, n)
            if body is None:
                continue
            yield dict(
                lib="numpy",
                op=op,
                bytes=size,
                us=plan.best_seconds(plan.iterations(size, fixed), body) * 1e6,
            )
