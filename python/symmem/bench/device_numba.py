"""One PE of the device benchmark (plan.DEVICE_OPS; `python -m symmem.bench`
runs it as the "symmem device" library): kernels calling symmem.device.numba
("symmem device") and, beside each, symmem's host calls on a stream doing
the same ("symmem host"). nvshmem_device.cu measures the same kernels
written with NVSHMEM's device API. Alone, on 2 GPUs:

    python -m symmem.run -n 2 -m symmem.bench.device_numba --ops device_put,device_barrier

PE 0 works, PE 1 is the target (both play the ping-pong; every PE takes part
in the barriers). A time is the CUDA-event time of one kernel, or of one loop
of host calls on the stream, the fastest of plan.DEVICE_RUNS runs after a
warm-up run (which also compiles). PE 0 prints one JSON record per line:
- device_put, device_put_grid: put_block from 1 block of 1024 threads, or
  from 2 blocks per SM each putting its slice, repeated plan.device_reps(size)
  times in one kernel (so the launch is not what is timed), then quiet; us
  per put. Host: symmem.put of the same size on a stream, as many times.
- device_put_lat, device_p_lat: a one-thread kernel looping plan.DEVICE_LOOP
  times over an 8-byte put (or p of an int64) and quiet. Host:
  plan.DEVICE_HOST_LOOP times put (or p) and quiet on a stream.
- device_put_signal: a ping-pong of 8-byte put_signal (SIGNAL_SET) and
  signal_wait (CMP_GE) between one-thread kernels on PE 0 and PE 1; half a
  round trip. Host: put_signal and signal_wait on a stream.
- device_barrier, device_barrier_block: barrier_all from a one-thread kernel,
  barrier_all_block from one block of 1024 threads, in a loop. Host:
  barrier_all on a stream."""

import symmem.device.numba as dev  # before numba.cuda (NumPy 2.5 compat)

import time

import cupy as cp
import numba
from numba import cuda

import symmem
from symmem.bench import plan
from symmem.bench.device_timing import best_seconds, line_up, operations, start, sweep

numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
DEVICE, HOST = "symmem device", "symmem host"
THREADS = 1024  # a block's threads, as nvshmem_device.cu's kernels


@cuda.jit
def put_chunks(dst, src, chunk, pe, reps):
    start = cuda.blockIdx.x * chunk
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


@cuda.jit
def barrier_block_loop(count):
    for _ in range(count):
        dev.barrier_all_block()


class Worker:
    """The symmetric buffers, and one method per kind of operation, each
    returning {library: seconds per call} (empty where this PE measures
    nothing)."""

    def __init__(self, put_bytes):
        self.me, self.n = symmem.my_pe(), symmem.n_pes()
        self.stream = cp.cuda.get_current_stream()
        self.sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        self.dst = symmem.array((put_bytes,), dtype="uint8")
        self.src = symmem.array((put_bytes,), dtype="uint8")
        self.buf = symmem.array((1,), dtype="int64")
        self.one = symmem.array((1,), dtype="int64")
        self.sig = symmem.array((1,), dtype="uint64")
        self.src[:] = 1
        self.one[:] = 1
        self.host_put, self.host_barrier = {}, None  # shared by the two forms of each
        line_up()

    def close(self):
        line_up()
        for a in (self.sig, self.one, self.buf, self.src, self.dst):
            symmem.free_array(a)

    def measure(self, op, size):
        if op in plan.DEVICE_PUTS:
            return self.put(op, size)
        if op in ("device_put_lat", "device_p_lat"):
            return self.latency(op)
        if op == "device_put_signal":
            return self.put_signal()
        return self.barrier(op)

    def put(self, op, size):
        if self.me != 0:
            return {}
        reps, view = plan.device_reps(size), cuda.as_cuda_array
        d, s = self.dst[:size], self.src[:size]
        dv, sv = view(d), view(s)
        blocks = 2 * self.sms if op == "device_put_grid" else 1
        chunk = plan.device_chunk(size, blocks)
        device = best_seconds(lambda: put_chunks[blocks, THREADS](dv, sv, chunk, 1, reps))
        if size not in self.host_put:

            def host():
                for _ in range(reps):
                    symmem.put(d, s, 1, stream=self.stream)

            self.host_put[size] = best_seconds(host)
        return {DEVICE: device / reps, HOST: self.host_put[size] / reps}

    def latency(self, op):
        if self.me != 0:
            return {}
        count, calls, stream = plan.DEVICE_LOOP, plan.DEVICE_HOST_LOOP, self.stream
        d8, s8 = self.dst[:8], self.src[:8]
        if op == "device_p_lat":
            d64 = d8.view(cp.int64)
            v = cuda.as_cuda_array(d64)
            device = best_seconds(lambda: p_loop[1, 1](v, 1, count))

            def host():
                for i in range(calls):
                    symmem.p(d64, i, 1, stream=stream)
                    symmem.quiet(stream=stream)
        else:
            dv, sv = cuda.as_cuda_array(d8), cuda.as_cuda_array(s8)
            device = best_seconds(lambda: put_loop[1, 1](dv, sv, 1, count))

            def host():
                for _ in range(calls):
                    symmem.put(d8, s8, 1, stream=stream)
                    symmem.quiet(stream=stream)

        return {DEVICE: device / count, HOST: best_seconds(host) / calls}

    def put_signal(self):
        me, stream, calls = self.me, self.stream, plan.DEVICE_HOST_LOOP
        rounds = plan.DEVICE_LOOP
        peer = 1 if me == 0 else 0
        bv, ov, sv = (cuda.as_cuda_array(a) for a in (self.buf, self.one, self.sig))
        set_, ge = symmem.SignalOp.SIGNAL_SET, symmem.ComparisonType.CMP_GE

        def reset():  # both PEs start from signal 0, and meet before either puts
            self.sig[:] = 0
            line_up()

        def device():
            if me < 2:
                ping_pong[1, 1](bv, ov, sv, rounds, me, peer)

        def host():
            if me >= 2:
                return
            for r in range(1, calls + 1):
                if me == 0:
                    symmem.put_signal(self.buf, self.one, self.sig, r, set_, peer, stream=stream)
                    symmem.signal_wait(self.sig, r, ge, stream=stream)
                else:
                    symmem.signal_wait(self.sig, r, ge, stream=stream)
                    symmem.put_signal(self.buf, self.one, self.sig, r, set_, peer, stream=stream)

        # One way of the round trip: half of each round's time.
        times = {
            DEVICE: best_seconds(device, reset) / rounds / 2,
            HOST: best_seconds(host, reset) / calls / 2,
        }
        return times if me == 0 else {}

    def barrier(self, op):
        count, calls, stream = plan.DEVICE_LOOP, plan.DEVICE_HOST_LOOP, self.stream
        if op == "device_barrier_block":
            device = best_seconds(lambda: barrier_block_loop[1, THREADS](count), line_up)
        else:
            device = best_seconds(lambda: barrier_loop[1, 1](count), line_up)
        if self.host_barrier is None:

            def host():
                for _ in range(calls):
                    symmem.barrier_all(stream=stream)

            self.host_barrier = best_seconds(host, line_up)
        return {DEVICE: device / count, HOST: self.host_barrier / calls}


def main():
    ops, sizes = operations("device_numba", plan.NUMBA_DEVICE_OPS, "Numba device operations")
    put_bytes = max([8] + [s for op in plan.DEVICE_PUTS for s in sizes.get(op, [])])
    t0 = time.perf_counter()
    start("device_numba")
    emit = plan.emitter(symmem.my_pe())
    worker = Worker(put_bytes)
    emit(lib=DEVICE, op="init", seconds=time.perf_counter() - t0, n_pes=worker.n)
    sweep(worker, ops, sizes, emit)


if __name__ == "__main__":
    main()
