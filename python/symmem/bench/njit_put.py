"""The cost of an 8-byte put from @numba.njit code (symmem.device.numba)
against the Python call symmem.put, on the cpu backend:

    python -m symmem.run -n 2 -m symmem.bench.njit_put [iterations]

PE 0 puts 8 bytes to PE 1 in a loop, each way; the time per put is the
median of 5 runs, after a warm-up run (which also compiles the njit loop)."""

import statistics
import sys
import time

import numba
import numpy as np

import symmem
import symmem.device.numba as dev


@numba.njit
def njit_puts(dst, src, pe, count):
    for _ in range(count):
        dev.put(dst, src, pe)


def python_puts(dst, src, pe, count):
    put = symmem.put
    for _ in range(count):
        put(dst, src, pe)


def per_put(fn, dst, src, pe, count):
    fn(dst, src, pe, min(count, 1000))  # warm-up (and njit compilation)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fn(dst, src, pe, count)
        times.append((time.perf_counter() - start) / count)
    return statistics.median(times)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    symmem.init()
    me, n = symmem.my_pe(), symmem.n_pes()
    dst = symmem.array((1,), dtype="int64")
    src = np.ones(1, dtype=np.int64)
    symmem.barrier_all()
    if me == 0:
        pe = 1 % n
        fast = per_put(njit_puts, dst, src, pe, count)
        slow = per_put(python_puts, dst, src, pe, count // 10)
        print(
            f"8-byte put to PE {pe}: njit {fast * 1e9:.1f} ns, Python symmem.put "
            f"{slow * 1e9:.1f} ns: njit is {slow / fast:.1f}x cheaper",
            flush=True,
        )
    symmem.barrier_all()
    symmem.free_array(dst)
    symmem.finalize()


if __name__ == "__main__":
    main()
