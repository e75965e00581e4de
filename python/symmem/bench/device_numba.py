"""Device-initiated communication from @numba.cuda.jit kernels
(symmem.device.numba) against the host-initiated symmem calls, on 2 GPUs:

    python -m symmem.run -n 2 -m symmem.bench.device_numba [max size, default 64M]

PE 0 does the work, PE 1 is the target (both take part in ping-pong and
barriers). Times are CUDA-event times of whole kernels or host loops, the
best of 5 runs after a warm-up that also compiles. Measured:
- put bandwidth, device (1 block of 1024 threads, and 2 blocks per SM
  splitting the buffer; each kernel repeats the put to move 1 GiB, so the
  launch is not what is timed) against symmem.put on a stream;
- put latency: 8-byte put + quiet in a one-thread kernel loop, and p + quiet,
  against symmem.put/p of 8 bytes on a stream (per call, stream-ordered);
- put_signal ping-pong half round trip from a kernel loop, against the
  host's put_signal + signal_wait on a stream;
- device barrier_all in a kernel loop, against symmem.barrier_all on a stream."""
import sys

import symmem.device.numba as dev  # before numba.cuda (NumPy 2.5 compat)

import cupy as cp
import numba
import numpy as np
from numba import cuda

import symmem

numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0


@cuda.jit
def put_chunks(dst, src, chunk, pe, reps):
    b = cuda.blockIdx.x
    start = b * chunk
    end = min(start + chunk, dst.size)
    for _ in range(reps):
        dev.put_block(dst[start:end], src[start:end], pe)
    if cuda.threadIdx.x == 0:
        dev.quiet()


@cuda.jit
def put_loop(dst, src, pe, count):
    for _ in range(count):
        dev.put(dst, src, pe)
        dev.quiet()


@cuda.jit
def p_loop(dst, pe, count):
    for i in range(count):
        dev.p(dst, i, pe)
        dev.quiet()


@cuda.jit
def ping_pong(buf, src, sig, rounds, me, peer):
    for r in range(1, rounds + 1):
        if me == 0:
            dev.put_signal(buf, src, sig, r, dev.SIGNAL_SET, peer)
            dev.signal_wait(sig, dev.CMP_GE, r)
        else:
            dev.signal_wait(sig, dev.CMP_GE, r)
            dev.put_signal(buf, src, sig, r, dev.SIGNAL_SET, peer)


@cuda.jit
def barrier_loop(count):
    for _ in range(count):
        dev.barrier_all()


def timed(body, runs=5):
    """The best of runs CUDA-event times of body() on the current stream, in s."""
    body()  # warm-up and compile
    cuda.synchronize()
    best = float("inf")
    for _ in range(runs):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        body()
        end.record()
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3)
    return best


def main():
    max_size = int(sys.argv[1].rstrip("M")) << 20 if len(sys.argv) > 1 else 64 << 20
    symmem.init()
    me, n = symmem.my_pe(), symmem.n_pes()
    peer = 1 % n
    stream = cp.cuda.get_current_stream()
    view = cuda.as_cuda_array
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    dst = symmem.array((max_size,), dtype="uint8")
    src = symmem.array((max_size,), dtype="uint8")
    symmem.barrier_all()
    rows = []
    if me == 0:
        size = 1 << 20
        while size <= max_size:
            # Each timing moves at least 1 GiB, so launch costs do not count.
            reps = max(1, (1 << 30) // size)
            d, s = dst[:size], src[:size]
            dv, sv = view(d), view(s)
            one = timed(lambda: put_chunks[1, 1024](dv, sv, size, peer, reps)) / reps
            blocks = 2 * sms
            chunk = -(-size // blocks)
            every = timed(lambda: put_chunks[blocks, 1024](dv, sv, chunk, peer, reps)) / reps

            def host_puts():
                for _ in range(reps):
                    symmem.put(d, s, peer, stream=stream)
            host = timed(host_puts) / reps
            rows.append((f"put {size >> 20} MiB GB/s", size / one / 1e9, size / every / 1e9,
                         size / host / 1e9))
            size *= 4
        count = 10000
        d8, s8 = dst[:8], src[:8]
        d8v = d8.view(cp.int64)
        v8, vs8, v8i = view(d8), view(s8), view(d8v)
        lat = timed(lambda: put_loop[1, 1](v8, vs8, peer, count)) / count
        plat = timed(lambda: p_loop[1, 1](v8i, peer, count)) / count
        host_put = timed(lambda: [symmem.put(d8, s8, peer, stream=stream)
                                  for _ in range(1000)]) / 1000
        host_p = timed(lambda: [symmem.p(d8v, 1, peer, stream=stream)
                                for _ in range(1000)]) / 1000
        rows.append(("put 8 B + quiet, us", lat * 1e6, float("nan"), host_put * 1e6))
        rows.append(("p 8 B + quiet, us", plat * 1e6, float("nan"), host_p * 1e6))
    symmem.barrier_all()
    buf = symmem.array((1,), dtype="int64")
    sig = symmem.array((1,), dtype="uint64")
    one = cp.ones(1, dtype="int64")
    rounds = 10000
    results = {}
    for what, body in (
            ("ping-pong half round trip, us",
             lambda: ping_pong[1, 1](view(buf), view(one), view(sig), rounds, me, peer if me == 0 else 0)),
            ("barrier_all, us", lambda: barrier_loop[1, 1](rounds))):
        times = []
        for _ in range(4):
            sig[:] = 0
            cp.cuda.Device().synchronize()
            symmem.barrier_all()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            body()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
        per = min(times[1:]) / rounds / (2 if what.startswith("ping") else 1)
        host_times = []
        for _ in range(3):
            symmem.barrier_all()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            for r in range(1, 1001):
                if what.startswith("barrier"):
                    symmem.barrier_all(stream=stream)
                elif me == 0:
                    symmem.put_signal(buf, one, sig, r, symmem.SignalOp.SIGNAL_SET, peer,
                                      stream=stream)
                    symmem.signal_wait(sig, r, symmem.ComparisonType.CMP_GE, stream=stream)
                else:
                    symmem.signal_wait(sig, r, symmem.ComparisonType.CMP_GE, stream=stream)
                    symmem.put_signal(buf, one, sig, r, symmem.SignalOp.SIGNAL_SET, 0,
                                      stream=stream)
            end.record()
            end.synchronize()
            host_times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
            sig[:] = 0
            cp.cuda.Device().synchronize()
        host = min(host_times) / 1000 / (2 if what.startswith("ping") else 1)
        results[what] = (per * 1e6, float("nan"), host * 1e6)
    if me == 0:
        rows += [(what, *values) for what, values in results.items()]
        print(f"{'':34s} {'device 1 block':>15s} {'device all SMs':>15s} "
              f"{'host symmem':>12s} {'device/host':>12s}")
        for what, a, b, host in rows:
            best = max(a, b) if "GB/s" in what else a
            ratio = best / host if "GB/s" in what else host / best
            print(f"{what:34s} {a:15.2f} {b:15.2f} {host:12.2f} {ratio:11.2f}x")
    symmem.barrier_all()
    for a in (sig, buf, src, dst):
        symmem.free_array(a)
    symmem.finalize()


if __name__ == "__main__":
    main()
