"""One PE of a benchmark run through an NVSHMEM4Py-style API: symmem, or
NVSHMEM4Py itself. The same code measures both, so every difference is the
library's. PE 0 prints one JSON record per line; the driver reads them.

    python -m symmem.run -n 2 -m symmem.bench.shmem_worker --lib symmem ...
    mpirun -np 2 python -m symmem.bench.shmem_worker --lib nvshmem4py ...
"""

import json
import os
import statistics
import time

import numpy as np

from symmem.bench import plan

CALL_COST_CALLS = 10000


def parse_args():
    parser = plan.sweep_parser()
    parser.add_argument("--lib", choices=("symmem", "nvshmem4py"), required=True)
    parser.add_argument(
        "--label", default=None, help="the library's name in the records (default: --lib)"
    )
    parser.add_argument(
        "--blocking", action="store_true", help="also time symmem's blocking (stream=None) calls"
    )
    return parser.parse_args()


def start(lib):
    """(module, device id or None, stream or None) with the library started."""
    if lib == "symmem":
        import symmem as nvshmem

        nvshmem.init()
        probe = nvshmem.buffer(8)  # where the symmetric heap lives
        ordinal = probe.device_id
        nvshmem.free(probe)
        if ordinal < 0:
            return nvshmem, None, None
        from cuda.core import Device

        device = Device(ordinal)
        device.set_current()
        return nvshmem, device, device.create_stream()
    import nvshmem.core as nvshmem
    from cuda.core import Device
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", comm.Get_rank()))
    device = Device(local % _cupy().cuda.runtime.getDeviceCount())
    device.set_current()
    nvshmem.init(device=device, mpi_comm=comm, initializer_method="emulated_mpi")
    return nvshmem, device, device.create_stream()


def _cupy():
    import cupy

    return cupy


class Bench:
    def __init__(self, args):
        t0 = time.perf_counter()
        self.nvshmem, self.device, self.stream = start(args.lib)
        self.init_seconds = time.perf_counter() - t0
        self.lib = args.lib
        self.me, self.n = self.nvshmem.my_pe(), self.nvshmem.n_pes()
        self.on_gpu = self.stream is not None
        if self.on_gpu:
            cp = _cupy()
            cp.cuda.Device(self.device.device_id).use()
            self.cupy_stream = cp.cuda.ExternalStream(
                int(self.stream.handle), self.device.device_id
            )
        self.world = self.nvshmem.Teams.TEAM_WORLD
        self.signal_total = 0
        self.iters = args.iters

    # ---- output ----

    def emit(self, **record):
        if self.me == 0:
            print(json.dumps(record), flush=True)

    # ---- memory ----

    def arrays(self, *nbytes, dtype="float32"):
        out = []
        for size in nbytes:
            a = self.nvshmem.array((size // np.dtype(dtype).itemsize,), dtype=dtype)
            a[:] = self.me + 1
            out.append(a)
        if self.on_gpu:
            _cupy().cuda.Device().synchronize()
        return out

    def free(self, *arrays):
        for a in arrays:
            self.nvshmem.free_array(a)

    # ---- timing ----

    def line_up(self):
        """Every PE gets here before any goes on (on GPUs through the stream:
        NVSHMEM4Py has no blocking barrier)."""
        self.nvshmem.barrier_all(stream=self.stream)
        if self.stream is not None:
            self.stream.sync()

    def timed(self, iters, body, stream):
        """Seconds per call of body, the best of plan.REPEATS runs."""
        for _ in range(min(iters, 5)):  # warm up
            body()
        return min(self.timed_once(iters, body, stream) for _ in range(plan.REPEATS))

    def timed_once(self, iters, body, stream):
        """Seconds per call of body: CUDA events around the calls on a stream,
        else the host clock; every PE starts together."""
        if stream is None:
            self.nvshmem.quiet()
        self.line_up()
        if stream is not None:
            cp = _cupy()
            begin, end = cp.cuda.Event(), cp.cuda.Event()
            begin.record(self.cupy_stream)
            for _ in range(iters):
                body()
            end.record(self.cupy_stream)
            end.synchronize()
            seconds = cp.cuda.get_elapsed_time(begin, end) * 1e-3 / iters
        else:
            t0 = time.perf_counter()
            for _ in range(iters):
                body()
            seconds = (time.perf_counter() - t0) / iters
        self.line_up()
        return seconds

    def timed_graph(self, iters, body):
        """Seconds per call of body replayed from a CUDA graph of up to
        plan.GRAPH_CALLS calls captured on the stream, the best of
        plan.REPEATS runs."""
        cp, s = _cupy(), self.cupy_stream
        calls = min(iters, plan.GRAPH_CALLS)
        body()  # kernels built before the capture
        s.synchronize()
        self.line_up()
        s.begin_capture()
        for _ in range(calls):
            body()
        graph = s.end_capture()
        graph.launch(stream=s)  # warm up
        replays, best = plan.graph_replays(iters), float("inf")
        for _ in range(plan.REPEATS):
            self.line_up()
            begin, end = cp.cuda.Event(), cp.cuda.Event()
            begin.record(s)
            for _ in range(replays):
                graph.launch(stream=s)
            end.record(s)
            end.synchronize()
            best = min(best, cp.cuda.get_elapsed_time(begin, end) * 1e-3 / (replays * calls))
        self.line_up()
        return best

    # ---- operations: each returns the body to time ----

    def rma(self, op, nbytes, stream):
        nv, peer = self.nvshmem, 1 % self.n
        dst, src = self.arrays(nbytes, nbytes, dtype="uint8")
        move = nv.put if op.startswith("put") else nv.get
        if op.endswith("_lat"):

            def body():
                if self.me == 0:
                    move(dst, src, peer, stream=stream)
                    nv.quiet(stream=stream)
        else:

            def body():
                if self.me == 0:
                    move(dst, src, peer, stream=stream)

        return body, (dst, src), lambda: nv.quiet(stream=stream)

    def atomic(self, stream):
        """8-byte fetch-adds by PE 0 on PE 1's int64, each returning its value
        (so each call ends before the next: run_op times them on the host clock)."""
        nv, peer = self.nvshmem, 1 % self.n
        counter = self.arrays(8, dtype="int64")[0]

        def body():
            if self.me == 0:
                nv.atomic_fetch_add(counter, 1, peer)

        return body, (counter,), None

    def put_signal(self, nbytes, stream):
        nv = self.nvshmem
        dst, src, sig = (
            *self.arrays(nbytes, nbytes, dtype="uint8"),
            self.arrays(8, dtype="uint64")[0],
        )
        sig[:] = 0
        if self.on_gpu:
            _cupy().cuda.Device().synchronize()
        self.line_up()
        signal = nv.array_get_buffer(sig)[0]
        add, ge = nv.SignalOp.SIGNAL_ADD, nv.ComparisonType.CMP_GE
        counter = [0]

        def body():
            counter[0] += 1
            if self.me == 0:
                nv.put_signal(dst, src, signal, 1, add, 1, stream=stream)
                nv.signal_wait(signal, counter[0], ge, stream=stream)
            elif self.me == 1:
                nv.signal_wait(signal, counter[0], ge, stream=stream)
                nv.put_signal(dst, src, signal, 1, add, 0, stream=stream)

        return body, (dst, src, sig), None

    def collective(self, op, nbytes, stream):
        nv, n, world = self.nvshmem, self.n, self.world
        block = nbytes // n
        if op == "reduce":
            src, dst = self.arrays(nbytes, nbytes)
            body = lambda: nv.reduce(world, dst, src, "sum", stream=stream)  # noqa: E731
        elif op == "reducescatter":
            src, dst = self.arrays(nbytes, block)
            body = lambda: nv.reducescatter(world, dst, src, "sum", stream=stream)  # noqa: E731
        elif op == "broadcast":
            src, dst = self.arrays(nbytes, nbytes)
            body = lambda: nv.broadcast(world, dst, src, 0, stream=stream)  # noqa: E731
        elif op == "fcollect":
            src, dst = self.arrays(block, nbytes)
            body = lambda: nv.fcollect(world, dst, src, stream=stream)  # noqa: E731
        elif op == "alltoall":
            src, dst = self.arrays(nbytes, nbytes)
            body = lambda: nv.alltoall(world, dst, src, stream=stream)  # noqa: E731
        else:
            return (lambda: nv.barrier_all(stream=stream)), (), None
        return body, (src, dst), None

    def run_op(self, op, nbytes, stream, label, graph=False):
        if op in ("put", "put_lat", "get", "get_lat"):
            body, arrays, after = self.rma(op, nbytes, stream)
        elif op == "atomic":
            body, arrays, after = self.atomic(stream)
            stream = None  # a blocking call: the host clock, not events on an idle stream
        elif op == "put_signal":
            if self.n < 2:
                return
            body, arrays, after = self.put_signal(nbytes, stream)
        else:
            body, arrays, after = self.collective(op, nbytes, stream)
        if graph:
            seconds = self.timed_graph(plan.iterations(nbytes, self.iters), body)
        else:
            seconds = self.timed(plan.iterations(nbytes, self.iters), body, stream)
        if after:
            after()
        if op == "put_signal":
            seconds /= 2  # one way of the round trip
        self.free(*arrays)
        self.emit(lib=label, op=op, bytes=nbytes, us=seconds * 1e6)

    def call_cost(self, stream, label):
        """Median host time of one 8-byte put (on a stream where there is one)."""
        dst, src = self.arrays(8, 8, dtype="uint8")
        nv, peer, costs = self.nvshmem, 1 % self.n, []
        self.line_up()
        for i in range(CALL_COST_CALLS):
            t0 = time.perf_counter()
            nv.put(dst, src, peer, stream=stream)
            costs.append(time.perf_counter() - t0)
            if stream is not None and i % 1000 == 999:
                self.stream.sync()
        nv.quiet(stream=stream)
        self.line_up()
        self.free(dst, src)
        self.emit(lib=label, op="call_cost", bytes=8, us=statistics.median(costs) * 1e6)


def main():
    args = parse_args()
    bench = Bench(args)
    label = args.label or args.lib
    # the engine symmem's gpu backend runs on ("" elsewhere): the report says which
    engine = bench.nvshmem.get_version().engine if args.lib == "symmem" else ""
    bench.emit(lib=label, op="init", seconds=bench.init_seconds, n_pes=bench.n, engine=engine)
    variants = [(bench.stream, label, False)]
    if args.blocking and bench.on_gpu:
        variants.append((None, f"{label} (blocking)", False))
    if args.graph and bench.on_gpu and args.lib == "symmem":
        variants.append((bench.stream, f"{label} (graph)", True))
    for op in args.ops.split(","):
        for stream, label, graph in variants:
            # pipelining needs a stream, blocking latency is put_lat/get_lat; the
            # atomic blocks either way: timed once, on the host clock
            if stream is None and bench.on_gpu and op in ("put", "get", "put_signal", "atomic"):
                continue
            if graph and op not in plan.COLLECTIVES:
                continue
            if op == "call_cost":
                bench.call_cost(stream, label)
                continue
            for size in plan.sizes(op, args.min_bytes, args.max_bytes, bench.n):
                bench.run_op(op, size, stream, label, graph)
    bench.line_up()
    bench.nvshmem.finalize()


if __name__ == "__main__":
    main()
