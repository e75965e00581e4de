"""What the device benchmarks (device_numba.py, device_triton.py) share:
their command line and start-up, and how they time a kernel: CUDA events
around it on the current stream, the fastest of plan.DEVICE_RUNS runs after
a warm-up, every PE lined up before each run."""

import cupy as cp

import symmem
from symmem.bench import plan


def best_seconds(launch, line_up=None):
    """The fastest of plan.DEVICE_RUNS CUDA-event timings of launch() on the
    current stream, in s, after a warm-up run; line_up() (if any) before
    each run."""
    best = float("inf")
    for run in range(plan.DEVICE_RUNS + 1):  # run 0 warms up (and compiles)
        if line_up:
            line_up()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch()
        end.record()
        end.synchronize()
        if run:
            best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3)
    return best


def line_up():
    """Every PE here, with its earlier GPU work done, before any goes on."""
    cp.cuda.Device().synchronize()
    symmem.barrier_all()


def operations(worker, known, what):
    """The worker's --ops, each one of known (else it exits naming the
    others and what they are not), and {op: sizes}."""
    args = plan.sweep_parser().parse_args()
    ops = args.ops.split(",")
    unknown = [op for op in ops if op not in known]
    if unknown:
        raise SystemExit(f"{worker}: {', '.join(unknown)}: not {what} ({', '.join(known)})")
    return ops, {op: plan.sizes(op, args.min_bytes, args.max_bytes, 2) for op in ops}


def start(worker):
    """symmem.init() on 2 PEs or more (PE 0 puts to PE 1; else it exits)."""
    symmem.init()
    if symmem.n_pes() < 2:
        n = symmem.n_pes()
        symmem.finalize()
        raise SystemExit(f"{worker}: needs 2 PEs (PE 0 puts to PE 1), got {n}")


def sweep(worker, ops, sizes, emit):
    """Every size of every op through worker.measure(op, size) ({library:
    seconds per call}, empty where this PE measures nothing), one record
    each, every PE lined up between sizes; then the worker closes and
    symmem finalizes."""
    for op in ops:
        for size in sizes[op]:
            for lib, seconds in worker.measure(op, size).items():
                emit(lib=lib, op=op, bytes=size, us=seconds * 1e6)
            line_up()
    worker.close()
    symmem.finalize()
