"""One PE of the Triton benchmark (plan.TRITON_OPS; `python -m symmem.bench`
runs it twice, as "symmem triton" and "nvshmem triton"): the same Triton
kernels calling symmem.device.triton, on the engine SYMMEM_TRITON_ENGINE
names (symmem's own, or NVSHMEM's device bitcode); the kernels are in
triton_kernels.py. Alone, on 2 GPUs:

    SYMMEM_TRITON_ENGINE=nvshmem python -m symmem.run -n 2 \\
        -m symmem.bench.device_triton --ops triton_put,triton_put_signal

PE 0 works, PE 1 is the target (both play the ping-pong). A time is the
CUDA-event time of one kernel, the fastest of plan.DEVICE_RUNS runs after a
warm-up run (which also compiles); PE 0 prints one JSON record per line:
- triton_put, triton_get: putmem_block / getmem_block of the whole size by
  one program of 1024 threads (NVSHMEM's device benchmark's block),
  repeated plan.device_reps(size) times in one kernel, then quiet; us per
  call. _grid: 2 programs per SM, each its slice, 16-byte aligned
  (plan.device_chunk). Each get reads the next
  slot of the buffer (as large as the largest size of the run), so no get
  finds the peer's data in L1 from an earlier one.
- triton_put_lat: one program of 32 threads (Triton's smallest) looping
  plan.DEVICE_LOOP times over an 8-byte putmem_block and quiet;
  triton_get_lat: the same over an 8-byte getmem_block (complete on
  return), each from the next 128-byte line of the buffer.
- triton_put_signal: a ping-pong of 8-byte putmem_signal_block (SIGNAL_SET)
  and signal_wait_until (CMP_GE) between kernels of 32 threads on PE 0 and
  PE 1; half a round trip."""

import os
import time

import cupy as cp

import symmem
import symmem.device.triton as sdt
from symmem.bench import plan
from symmem.bench.device_timing import best_seconds, line_up, operations, start, sweep
from symmem.bench.triton_kernels import LINE, copy_chunks, latency_loop, ping_pong

BLOCK_WARPS = 32  # 1024 threads, as nvshmem_device.cu's and device_numba's blocks
LATENCY_WARPS = 1


class Worker:
    """The symmetric buffers, and one method per kind of operation, each
    returning seconds per call (None where this PE measures nothing)."""

    def __init__(self, put_bytes, lib):
        self.me, self.put_bytes, self.lib = symmem.my_pe(), put_bytes, lib
        self.sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        self.dst = symmem.array((put_bytes,), dtype="uint8")
        self.src = symmem.array((put_bytes,), dtype="uint8")
        self.sig = symmem.array((1,), dtype="uint64")
        self.src[:] = 1
        line_up()

    def close(self):
        line_up()
        for a in (self.sig, self.src, self.dst):
            symmem.free_array(a)

    def measure(self, op, size):
        """{this engine's library: seconds per call}, empty on a PE that
        measures nothing (device_timing.sweep's form)."""
        if op == "triton_put_signal":
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
        slots = max(1, self.put_bytes // LINE.value) if get else 1
        count = plan.DEVICE_LOOP
        seconds = best_seconds(
            lambda: latency_loop[(1,)](
                self.dst, self.src, 1, count, slots, get, num_warps=LATENCY_WARPS
            )
        )
        return seconds / count

    def copy(self, op, size):
        get = "_get" in op
        slots = max(1, self.put_bytes // size) if get else 1
        reps = plan.device_reps(size)
        programs = 2 * self.sms if op.endswith("_grid") else 1
        chunk = plan.device_chunk(size, programs)
        seconds = best_seconds(
            lambda: copy_chunks[(programs,)](
                self.dst, self.src, chunk, size, 1, reps, slots, get, num_warps=BLOCK_WARPS
            )
        )
        return seconds / reps

    def put_signal(self):
        me, rounds = self.me, plan.DEVICE_LOOP

        def reset():  # both PEs start from signal 0, and meet before either puts
            self.sig[:] = 0
            line_up()

        def run():
            if me < 2:
                ping_pong[(1,)](
                    self.dst, self.src, self.sig, rounds, 1 - me, me == 0, num_warps=LATENCY_WARPS
                )

        seconds = best_seconds(run, reset) / rounds / 2  # one way of the round trip
        return seconds if me == 0 else None


def main():
    ops, sizes = operations("device_triton", tuple(plan.TRITON_OPS), "Triton operations")
    put_bytes = max([8] + [s for op in ops for s in sizes[op]])
    t0 = time.perf_counter()
    start("device_triton")
    lib = f"{sdt.configure()} triton"
    emit = plan.emitter(symmem.my_pe())
    wanted = os.environ.get("SYMMEM_TRITON_ENGINE")
    if wanted and f"{wanted} triton" != lib:
        raise SystemExit(f"device_triton: SYMMEM_TRITON_ENGINE={wanted} but the engine is {lib}")
    worker = Worker(put_bytes, lib)
    emit(lib=lib, op="init", seconds=time.perf_counter() - t0, n_pes=symmem.n_pes())
    sweep(worker, ops, sizes, emit)


if __name__ == "__main__":
    main()
