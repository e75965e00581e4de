"""What the benchmarks measure: the operations, the message sizes, how many
calls each size gets, and the nccl-tests bus-bandwidth factors. The driver
and every worker read this one plan, so all libraries measure the same."""

import argparse
import json
import time

# op -> what one record's "bytes" means and how bus bandwidth scales.
# size: the larger of one PE's source and destination (nccl-tests' convention).
OPS = {
    "put": "puts from PE 0 to PE 1, back to back (GPUs: on a stream)",
    "put_lat": "one put then quiet, repeated: completion latency",
    "get": "gets by PE 0 from PE 1, back to back (GPUs: on a stream)",
    "get_lat": "one get then quiet, repeated",
    "put_signal": "put_signal ping-pong between PE 0 and PE 1: half a round trip",
    "call_cost": "host time to issue one 8-byte put (GPUs: on a stream); median",
    "reduce": "sum of float32 over every PE (all-reduce)",
    "reducescatter": "sum of float32, each PE keeps 1/n",
    "broadcast": "root 0 to every PE",
    "fcollect": "every PE's 1/n gathered on every PE (all-gather)",
    "alltoall": "every PE sends 1/n of its buffer to each PE",
    "barrier": "barrier over every PE",
}
POINT_TO_POINT = ("put", "put_lat", "get", "get_lat", "put_signal", "call_cost")
COLLECTIVES = ("reduce", "reducescatter", "broadcast", "fcollect", "alltoall", "barrier")
NCCL_OPS = COLLECTIVES[:-1]  # the collectives NCCL has: all but the barrier
# Latency-bound ops stop at this size: beyond it they measure bandwidth again.
LATENCY_MAX_BYTES = 4 << 20

# Device-initiated operations (gpu backend, 2 PEs or more): Numba kernels calling
# symmem.device.numba ("symmem device", device_numba.py), the same kernels
# written with NVSHMEM's device API ("nvshmem device", nvshmem_device.cu), and
# symmem's host calls on a stream doing the same ("symmem host"). PE 0 works,
# PE 1 is the target.
DEVICE_OPS = {
    "device_put": "put_block from 1 block of 1024 threads, repeated in one kernel",
    "device_put_grid": "put_block from 2 blocks per SM, each its slice, repeated",
    "device_put_lat": "one thread: 8-byte put + quiet, in a kernel loop",
    "device_p_lat": "one thread: p of an int64 + quiet, in a kernel loop",
    "device_put_signal": "put_signal + signal_wait ping-pong from kernels: half a round trip",
    "device_barrier": "barrier_all from one thread, in a kernel loop",
    "device_barrier_block": "barrier_all_block from one block of 1024 threads, in a loop",
}
# Triton kernels calling symmem.device.triton, on symmem's own engine
# ("symmem triton") and on NVSHMEM's device bitcode ("nvshmem triton"): the
# same kernel, compiled once per engine (device_triton.py).
TRITON_OPS = {
    "triton_put": "putmem_block from 1 program of 1024 threads, repeated in one kernel",
    "triton_put_grid": "putmem_block from 2 programs per SM, each its slice, repeated",
    "triton_get": "getmem_block by 1 program of 1024 threads, repeated in one kernel",
    "triton_get_grid": "getmem_block by 2 programs per SM, each its slice, repeated",
    "triton_put_lat": "1 program of 32 threads: 8-byte putmem_block + quiet, in a loop",
    "triton_get_lat": "1 program of 32 threads: 8-byte getmem_block, in a loop",
    "triton_put_signal": "8-byte putmem_signal_block + signal_wait_until ping-pong from "
    "kernels of 32 threads: half a round trip",
}
# CuTe DSL kernels calling symmem.device.cute, on symmem's own engine ("symmem
# cute") and on NVSHMEM's device bitcode ("nvshmem cute"): the same kernels,
# compiled once per engine and run (device_cute.py, cute_kernels.py).
CUTE_OPS = {
    "cute_put": "put_block from 1 block of 1024 threads, repeated in one kernel",
    "cute_put_grid": "put_block from 2 blocks per SM, each its slice, repeated",
    "cute_get": "get_block by 1 block of 1024 threads, repeated in one kernel",
    "cute_get_grid": "get_block by 2 blocks per SM, each its slice, repeated",
    "cute_put_lat": "one thread: 8-byte put + quiet, in a kernel loop",
    "cute_get_lat": "one thread: 8-byte get, in a kernel loop",
    "cute_put_signal": "8-byte put_signal + signal_wait ping-pong from one-thread kernels: "
    "half a round trip",
}
NUMBA_DEVICE_OPS = tuple(DEVICE_OPS)
DEVICE_OPS.update(TRITON_OPS)
DEVICE_OPS.update(CUTE_OPS)
DEVICE_PUTS = (
    "device_put",
    "device_put_grid",
    "triton_put",
    "triton_put_grid",
    "triton_get",
    "triton_get_grid",
    "cute_put",
    "cute_put_grid",
    "cute_get",
    "cute_get_grid",
)
# In the default run of --backend mpi (beside mpi4py's) and gpu, or where --ops names it.
ATOMIC_OPS = {
    "atomic": "8-byte fetch-add by PE 0 on PE 1, back to back, host clock (MPI: "
    "Fetch_and_op + Flush)",
}
# symmem's start and end, each launch a fresh job (init_worker.py): in the
# default run of --backend gpu (the engines' start-up differs most), or
# where --ops names them ("init" names both). A record's time is the median
# over INIT_LAUNCHES launches of the slowest PE's init() + finalize().
INIT_OPS = {
    "init_first": "symmem.init() + finalize(), the first of a fresh process (slowest PE, "
    "median of 3 launches)",
    "init_again": "a second init() + finalize() in the same process",
}
INIT_LAUNCHES = 3
ALL_OPS = {**OPS, **ATOMIC_OPS, **INIT_OPS, **DEVICE_OPS}
HOST_OPS = {**OPS, **ATOMIC_OPS, **INIT_OPS}
# --ops words that name several operations.
OP_GROUPS = {
    "host": tuple(OPS),
    "device": tuple(DEVICE_OPS),
    "triton": tuple(TRITON_OPS),
    "cute": tuple(CUTE_OPS),
    "init": tuple(INIT_OPS),
}
DEVICE_PUT_SIZES = (1 << 10, 64 << 20)  # the device put sweep: 1K to 64M, x4 steps
DEVICE_MOVE_BYTES = 1 << 30  # a put kernel repeats its put to move this much,
DEVICE_MAX_REPS = 1 << 14  # but at most this many times (small sizes)
DEVICE_LOOP = 10000  # calls in one latency, ping-pong or barrier kernel
DEVICE_HOST_LOOP = 1000  # host calls in one timed run of their reference
DEVICE_RUNS = 5  # timed runs after a warm-up run; the fastest is kept


def device_reps(nbytes):
    """How many times a device put kernel repeats its put of nbytes."""
    return max(1, min(DEVICE_MOVE_BYTES // nbytes, DEVICE_MAX_REPS))


def device_chunk(nbytes, programs):
    """The bytes each of programs copies of an nbytes grid put: an even share
    rounded up to 16 bytes, so that every program's slice starts 16-byte
    aligned, as a kernel splitting a buffer would make them (an unrounded
    share left most slices at odd addresses: a byte-wise copy)."""
    return -(-nbytes // (16 * programs)) * 16


def bus_factor(op, n_pes):
    """nccl-tests' factor from algorithm to bus bandwidth."""
    if op == "reduce":
        return 2 * (n_pes - 1) / n_pes
    if op in ("reducescatter", "fcollect", "alltoall"):
        return (n_pes - 1) / n_pes
    return 1.0


def sizes(op, min_bytes, max_bytes, n_pes, factor=4):
    """The sizes op runs at: min_bytes, x factor, ..., ending at max_bytes;
    for a collective each rounded to whole float32 blocks of 1/n_pes (at
    least one each), without repeats. Device puts keep within
    DEVICE_PUT_SIZES."""
    if op in (
        "call_cost",
        "atomic",
        "device_put_lat",
        "device_p_lat",
        "device_put_signal",
        "triton_put_lat",
        "triton_get_lat",
        "triton_put_signal",
        "cute_put_lat",
        "cute_get_lat",
        "cute_put_signal",
    ):
        return [8]
    if op in ("barrier", "device_barrier", "device_barrier_block", *INIT_OPS):
        return [0]
    if op in DEVICE_PUTS:
        min_bytes = max(min_bytes, DEVICE_PUT_SIZES[0])
        max_bytes = min(max_bytes, DEVICE_PUT_SIZES[1])
        if min_bytes > max_bytes:
            return []
    top = (
        min(max_bytes, LATENCY_MAX_BYTES)
        if op in ("put_lat", "get_lat", "put_signal")
        else max_bytes
    )
    out, size = [], min_bytes
    while size < top:
        out.append(size)
        size *= factor
    out.append(top)
    if op in COLLECTIVES:
        unit = 4 * n_pes
        out = [max(unit, s - s % unit) for s in out]
    return sorted(set(out))


GRAPH_CALLS = 100  # calls captured in one graph (graph mode)


def graph_replays(iters):
    """Replays of a graph of GRAPH_CALLS calls for a run of about iters calls."""
    return max(1, iters // GRAPH_CALLS) * 2


# Each size is timed this many times and the fastest run kept: runs of
# different libraries happen at different moments on a shared machine.
REPEATS = 3


def best_seconds(iters, body, line_up=None):
    """Seconds per call of body on the host clock: a short warm-up, then the
    fastest of REPEATS runs of iters calls, each run after line_up() (every
    PE starts together) where there is one."""
    for _ in range(min(iters, 5)):
        body()
    best = float("inf")
    for _ in range(REPEATS):
        if line_up:
            line_up()
        t0 = time.perf_counter()
        for _ in range(iters):
            body()
        best = min(best, (time.perf_counter() - t0) / iters)
    return best


def iterations(nbytes, fixed=None):
    """Calls per timed run: enough to swamp timer resolution, few for big
    messages; fixed (--iters) where given."""
    if fixed:
        return fixed
    if nbytes >= 64 << 20:
        return 10
    if nbytes >= 1 << 20:
        return 50
    return 200


def parse_size(text):
    """'8', '4K', '16M', '1G' -> bytes."""
    text = str(text).strip().upper().rstrip("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("KMG")) * scale)


def format_size(nbytes):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return str(nbytes)


def sweep_parser():
    """The options every worker takes (libraries.sweep_args writes them);
    a worker adds its own to the parser."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", required=True)
    parser.add_argument("--min-bytes", type=int, default=8)
    parser.add_argument("--max-bytes", type=int, default=1 << 20)
    parser.add_argument(
        "--graph", action="store_true", help="also time collectives replayed from a CUDA graph"
    )
    parser.add_argument(
        "--iters", type=int, default=None, help="calls per timed run (default: iterations())"
    )
    return parser


def emitter(me):
    """emit(**record): PE 0 prints the record as one JSON line (the driver
    reads them); the other PEs print nothing."""
    if me != 0:
        return lambda **record: None
    return lambda **record: print(json.dumps(record), flush=True)
