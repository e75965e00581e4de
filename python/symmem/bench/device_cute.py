"""One PE of the CuTe DSL benchmark (plan.CUTE_OPS; `python -m symmem.bench`
runs it twice, as "symmem cute" and "nvshmem cute"): the same CuTe kernels
calling symmem.device.cute, on the engine SYMMEM_CUTE_ENGINE names
(symmem's own, or NVSHMEM's device bitcode); the kernels are in
cute_kernels.py. Alone, on 2 GPUs:

    SYMMEM_CUTE_ENGINE=nvshmem python -m symmem.run -n 2 \\
        -m symmem.bench.device_cute --ops cute_put,cute_put_signal

PE 0 works, PE 1 is the target (both play the ping-pong). Each kernel is
compiled once (symmem.interop.cute.cute_compile_helper: compile and
library_init), where it is first launched, and serves every size: sizes,
repetitions and offsets are runtime arguments. A time is the CUDA-event
time of one kernel, the fastest of plan.DEVICE_RUNS runs after a warm-up
run; PE 0 prints one JSON record per line:
- cute_put, cute_get: put_block / get_block of the whole size by one block
  of 1024 threads, repeated plan.device_reps(size) times in one kernel,
  then quiet; us per call. _grid: 2 blocks per SM, each its slice, 16-byte
  aligned (plan.device_chunk). Each get reads the next slot of the buffer
  (as large as the largest size of the run), so no get finds the peer's
  data in L1 from an earlier one.
- cute_put_lat: one thread looping plan.DEVICE_LOOP times over an 8-byte
  put and quiet; cute_get_lat: the same over an 8-byte get (complete on
  return), each from the next 128-byte line of the buffer.
- cute_put_signal: a ping-pong of 8-byte put_signal (SIGNAL_SET) and
  signal_wait (CMP_GE) between one-thread kernels on PE 0 and PE 1; half a
  round trip."""

import os
import time

import cupy as cp
from cuda.core import Device
from cutlass.cute.runtime import from_dlpack

import symmem
import symmem.interop.cute as scute
from symmem.bench import cute_kernels as K
from symmem.bench import plan
from symmem.bench.device_timing import best_seconds, line_up, operations, start, sweep
from symmem.device.cute import _engine


class Worker:
    """The symmetric buffers, the kernels compiled so far, and one method
    per kind of operation, each returning seconds per call (None where this
    PE measures nothing)."""

    def __init__(self, put_bytes, lib):
        self.me, self.put_bytes, self.lib = symmem.my_pe(), put_bytes, lib
        self.sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        self.dst = symmem.array((put_bytes,), dtype="uint8")
        self.src = symmem.array((put_bytes,), dtype="uint8")
        self.sig = symmem.array((1,), dtype="uint64")
        self.src[:] = 1
        # CuTe's views of the arrays, made once: the launches take them as they are
        self.views = [from_dlpack(a, assumed_align=16) for a in (self.dst, self.src)]
        self.sig_view = from_dlpack(self.sig, assumed_align=8)
        self.compiled = {}  # kind -> (compiled launcher, kernel object)
        line_up()

    def close(self):
        line_up()
        for _, kobj in self.compiled.values():
            symmem.library_finalize(kobj)
        for a in (self.sig, self.src, self.dst):
            symmem.free_array(a)

    def launcher(self, kind, *args):
        """The compiled launcher of K.LAUNCHERS[kind], compiled (for args,
        whose values do not matter) the first time."""
        if kind not in self.compiled:
            self.compiled[kind] = scute.cute_compile_helper(K.LAUNCHERS[kind][0], *args)
        return self.compiled[kind][0]

    def measure(self, op, size):
        """{this engine's library: seconds per call}, empty on a PE that
        measures nothing (device_timing.sweep's form)."""
        if op == "cute_put_signal":
            seconds = self.put_signal()
        elif self.me != 0:
            seconds = None
        elif op.endswith("_lat"):
            seconds = self.latency("_get" in op)
        else:
            seconds = self.copy(op, size)
        return {} if seconds is None else {self.lib: seconds}

    # A get reads a slot of the buffer no earlier get of the run read (else
    # it would measure L1 hits: each engine's loads may cache the peer's
    # lines); puts write the same place every time.

    def latency(self, get):
        slots = max(1, self.put_bytes // K.LINE) if get else 1
        count = plan.DEVICE_LOOP
        args = (*self.views, 1, count, slots)
        run = self.launcher("get_lat" if get else "put_lat", *args)
        return best_seconds(lambda: run(*args)) / count

    def copy(self, op, size):
        get = "_get" in op
        slots = max(1, self.put_bytes // size) if get else 1
        reps = plan.device_reps(size)
        blocks = 2 * self.sms if op.endswith("_grid") else 1
        chunk = plan.device_chunk(size, blocks)
        args = (*self.views, chunk, size, 1, reps, slots, blocks)
        run = self.launcher("get" if get else "put", *args)
        return best_seconds(lambda: run(*args)) / reps

    def put_signal(self):
        me, rounds = self.me, plan.DEVICE_LOOP
        args = (*self.views, self.sig_view, rounds, 1 - me, int(me == 0))
        run = self.launcher("put_signal", *args) if me < 2 else None

        def reset():  # both PEs start from signal 0, and meet before either puts
            self.sig[:] = 0
            line_up()

        def launch():
            if run:
                run(*args)

        seconds = best_seconds(launch, reset) / rounds / 2  # one way of the round trip
        return seconds if me == 0 else None


def main():
    ops, sizes = operations("device_cute", tuple(plan.CUTE_OPS), "CuTe operations")
    put_bytes = max([8] + [s for op in ops for s in sizes[op]])
    t0 = time.perf_counter()
    start("device_cute")
    Device().set_current()  # CuTe launches in the current context: this PE's GPU
    lib = f"{_engine.configure('symmem.bench.device_cute')} cute"
    emit = plan.emitter(symmem.my_pe())
    wanted = os.environ.get("SYMMEM_CUTE_ENGINE")
    if wanted and wanted != "auto" and f"{wanted} cute" != lib:
        raise SystemExit(f"device_cute: SYMMEM_CUTE_ENGINE={wanted} but the engine is {lib}")
    worker = Worker(put_bytes, lib)
    emit(lib=lib, op="init", seconds=time.perf_counter() - t0, n_pes=symmem.n_pes())
    sweep(worker, ops, sizes, emit)


if __name__ == "__main__":
    main()
