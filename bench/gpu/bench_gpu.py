"""symmem's side of the gpu benchmarks: the measurements nvshmem_floor.c
makes, through symmem's Python API on CuPy arrays. PE 0 prints JSON lines.

    python -m symmem.run -n 2 bench/gpu/bench_gpu.py [--max-log2 30]
"""
import argparse
import json
import statistics
import time

import cupy as cp

t0 = time.perf_counter()
import symmem as nvshmem  # noqa: E402  (the import is part of start-up)

parser = argparse.ArgumentParser()
parser.add_argument("--max-log2", type=int, default=30)
args = parser.parse_args()
nvshmem.init()
init_seconds = time.perf_counter() - t0
me, n = nvshmem.my_pe(), nvshmem.n_pes()
peer = (me + 1) % n
max_bytes = 1 << args.max_log2
stream = cp.cuda.Stream(non_blocking=True)
src = nvshmem.array((max_bytes,), dtype="uint8")
dst = nvshmem.array((max_bytes,), dtype="uint8")
src[:] = 1
cp.cuda.Device().synchronize()
W = nvshmem.Teams.TEAM_WORLD


def report(**row):
    if me == 0:
        print(json.dumps(row), flush=True)


def time_on_stream(iters, body):
    """Seconds per call of body(), timed with CUDA events on the stream."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    nvshmem.barrier_all(stream=stream)
    start.record(stream)
    for _ in range(iters):
        body()
    stop.record(stream)
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) * 1e-3 / iters


def sizes():
    """8 B, 32 B, ... (x4), ending exactly at max_bytes, as the C floor does."""
    size = 8
    while size < max_bytes:
        yield size
        size *= 4
    yield max_bytes


report(what="init", seconds=round(init_seconds, 4))
for nbytes in sizes():
    iters = 20 if nbytes >= 1 << 26 else 100 if nbytes >= 1 << 20 else 1000
    d, s = dst[:nbytes], src[:nbytes]
    seconds = time_on_stream(iters, (lambda: nvshmem.put(d, s, peer, stream=stream))
                             if me == 0 else (lambda: None))
    nvshmem.quiet(stream=stream)
    stream.synchronize()
    report(what="put_on_stream", bytes=nbytes, us=round(seconds * 1e6, 3),
           GBps=round(nbytes / seconds / 1e9, 2))

d8, s8 = dst[:8], src[:8]
for label, stream_arg in (("put_call_cost", stream), ("put_call_cost_int_handle", stream.ptr)):
    nvshmem.barrier_all()
    costs = []
    for i in range(10000):
        a = time.perf_counter()
        nvshmem.put(d8, s8, peer, stream=stream_arg)
        costs.append(time.perf_counter() - a)
        if i % 1000 == 999:
            stream.synchronize()
    nvshmem.quiet(stream=stream)
    stream.synchronize()
    report(what=label, bytes=8, median_us=round(statistics.median(costs) * 1e6, 3))

costs = []
for _ in range(1000):
    a = time.perf_counter()
    nvshmem.put(d8, s8, peer)  # stream=None: complete before returning
    costs.append(time.perf_counter() - a)
report(what="put_blocking", bytes=8, median_us=round(statistics.median(costs) * 1e6, 3))

fsrc, fdst = src.view(cp.float32), dst.view(cp.float32)
for nbytes in sizes():
    iters = 10 if nbytes >= 1 << 26 else 50 if nbytes >= 1 << 20 else 200
    d, s = fdst[:nbytes // 4], fsrc[:nbytes // 4]
    seconds = time_on_stream(iters, lambda: nvshmem.reduce(W, d, s, "sum", stream=stream))
    report(what="reduce_on_stream", bytes=nbytes, us=round(seconds * 1e6, 3),
           GBps=round(nbytes / seconds / 1e9, 2))

nvshmem.barrier_all()
nvshmem.free_array(src)
nvshmem.free_array(dst)
nvshmem.finalize()
