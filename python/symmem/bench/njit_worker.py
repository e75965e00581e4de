"""One PE of a benchmark run of symmem's device calls from @numba.njit code
(symmem.device.numba, cpu backend): the same operations and sizes as
shmem_worker, each timed as one njit loop of calls, so no Python runs
between them. PE 0 prints one JSON record per line.

    python -m symmem.run -n 2 -m symmem.bench.njit_worker --ops put,reduce ...

call_cost here is the time of one 8-byte put inside such a loop (the Python
library's is the median host time of one call)."""

import time

import numba
import numpy as np

import symmem
import symmem.device.numba as dev
from symmem.bench import plan

LABEL = "symmem njit"
WORLD = symmem.Teams.TEAM_WORLD


@numba.njit
def puts(dst, src, pe, iters, quiet):
    for _ in range(iters):
        dev.put(dst, src, pe)
        if quiet:
            dev.quiet()


@numba.njit
def gets(dst, src, pe, iters, quiet):
    for _ in range(iters):
        dev.get(dst, src, pe)
        if quiet:
            dev.quiet()


@numba.njit
def ping_pong(dst, src, sig, me, iters, done):
    for i in range(done + 1, done + iters + 1):
        if me == 0:
            dev.put_signal(dst, src, sig, 1, dev.SIGNAL_ADD, 1)
            dev.signal_wait(sig, dev.CMP_GE, i)
        elif me == 1:
            dev.signal_wait(sig, dev.CMP_GE, i)
            dev.put_signal(dst, src, sig, 1, dev.SIGNAL_ADD, 0)


@numba.njit
def collective(op, dst, src, iters):
    for _ in range(iters):
        if op == 0:
            dev.reduce(WORLD, dst, src, "sum")
        elif op == 1:
            dev.reducescatter(WORLD, dst, src, "sum")
        elif op == 2:
            dev.broadcast(WORLD, dst, src, 0)
        elif op == 3:
            dev.fcollect(WORLD, dst, src)
        elif op == 4:
            dev.alltoall(WORLD, dst, src)
        else:
            dev.barrier_all()


COLLECTIVE = {
    "reduce": 0,
    "reducescatter": 1,
    "broadcast": 2,
    "fcollect": 3,
    "alltoall": 4,
    "barrier": 5,
}


def arrays(me, *nbytes, dtype="float32"):
    out = []
    for size in nbytes:
        a = symmem.array((max(size, 4) // np.dtype(dtype).itemsize,), dtype=dtype)
        a[:] = me + 1
        out.append(a)
    return out


def best_seconds(iters, run):
    """Seconds per call: run(iters) timed plan.REPEATS times with every PE
    starting together, after a warm-up that also compiles."""
    run(min(iters, 5))
    best = float("inf")
    for _ in range(plan.REPEATS):
        symmem.barrier_all()
        t0 = time.perf_counter()
        run(iters)
        best = min(best, (time.perf_counter() - t0) / iters)
        symmem.barrier_all()
    return best


def measure(op, nbytes, me, n, fixed=None):
    """Seconds per call of op at nbytes (fixed calls a run where given), and
    the arrays to free."""
    iters = plan.iterations(nbytes, fixed)
    if op in ("put", "put_lat", "get", "get_lat", "call_cost"):
        dst, src = arrays(me, nbytes, nbytes, dtype="uint8")
        move, quiet = (gets if op.startswith("get") else puts), op.endswith("_lat")
        seconds = best_seconds(
            iters, lambda k: move(dst, src, 1 % n, k, quiet) if me == 0 else None
        )
        return seconds, (dst, src)
    if op == "put_signal":
        dst, src = arrays(me, nbytes, nbytes, dtype="uint8")
        sig = arrays(me, 8, dtype="uint64")[0]
        sig[:] = 0
        # Every PE's signal is 0 before PE 0's first put_signal adds to PE 1's:
        # an add landing before PE 1's reset would be lost, and PE 1 wait forever.
        symmem.barrier_all()
        done = [0]

        def run(k):
            ping_pong(dst, src, sig, me, k, done[0])
            done[0] += k

        return best_seconds(iters, run) / 2, (dst, src, sig)  # one way of the round trip
    block = nbytes // n
    src_bytes, dst_bytes = {"reducescatter": (nbytes, block), "fcollect": (block, nbytes)}.get(
        op, (nbytes, nbytes)
    )
    src, dst = arrays(me, src_bytes, dst_bytes)
    code = COLLECTIVE[op]
    return best_seconds(iters, lambda k: collective(code, dst, src, k)), (src, dst)


def main():
    parser = plan.sweep_parser()
    args = parser.parse_args()
    t0 = time.perf_counter()
    symmem.init()
    me, n = symmem.my_pe(), symmem.n_pes()
    emit = plan.emitter(me)
    emit(lib=LABEL, op="init", seconds=time.perf_counter() - t0, n_pes=n)
    for op in args.ops.split(","):
        if op == "put_signal" and n < 2:
            continue
        for size in plan.sizes(op, args.min_bytes, args.max_bytes, n):
            seconds, used = measure(op, size, me, n, args.iters)
            for a in used:
                symmem.free_array(a)
            emit(lib=LABEL, op=op, bytes=size, us=seconds * 1e6)
    symmem.barrier_all()
    symmem.finalize()


if __name__ == "__main__":
    main()
