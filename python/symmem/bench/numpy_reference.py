"""What a user would do without symmem on one machine: the same data
movement by NumPy in one process. A put or get is one copy; a collective
over n PEs is the whole job done by one process (reduce: sum n arrays;
broadcast, fcollect, alltoall: the n copies every PE would receive)."""
import statistics
import time

import numpy as np

from symmem.bench import plan


def _body(op, nbytes, n):
    count, block = nbytes // 4, nbytes // 4 // n
    if op in ("put", "put_lat", "get", "get_lat", "put_signal"):
        src, dst = np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)
        return lambda: np.copyto(dst, src)
    if op in ("reduce", "reducescatter"):
        parts = [np.full(count, p + 1.0, np.float32) for p in range(n)]
        out = np.empty(count, np.float32)

        def reduce():
            np.copyto(out, parts[0])
            for part in parts[1:]:
                np.add(out, part, out=out)
        return reduce
    if op == "broadcast":
        src, dsts = np.ones(count, np.float32), [np.empty(count, np.float32) for _ in range(n)]
        return lambda: [np.copyto(d, src) for d in dsts]
    if op == "fcollect":
        parts = [np.full(block, p, np.float32) for p in range(n)]
        dsts = [np.empty(n * block, np.float32) for _ in range(n)]
        return lambda: [np.concatenate(parts, out=d) for d in dsts]
    if op == "alltoall":
        srcs = [np.full(count, p, np.float32) for p in range(n)]
        dsts = [np.empty(count, np.float32) for _ in range(n)]

        def alltoall():
            for p, dst in enumerate(dsts):
                for q, src in enumerate(srcs):
                    dst[q * block:(q + 1) * block] = src[p * block:(p + 1) * block]
        return alltoall
    return None  # barrier: nothing to do in one process


def measure(ops, min_bytes, max_bytes, n):
    """Records like the workers', lib 'numpy'."""
    yield dict(lib="numpy", op="init", seconds=0.0, n_pes=1)
    for op in ops:
        if op == "call_cost":
            src, dst = np.ones(8, np.uint8), np.empty(8, np.uint8)
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
            yield dict(lib="numpy", op=op, bytes=size,
                       us=plan.best_seconds(plan.iterations(size), body) * 1e6)
