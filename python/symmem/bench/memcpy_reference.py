"""The reference for put and get bandwidth on GPUs: the GPU's own
device-to-device cudaMemcpyAsync (through CuPy) of the sizes symmem's put
and get sweep, timed as symmem's calls on a stream are
(shmem_worker.Bench.timed): back to back on one stream, CUDA events around
plan.iterations() calls, the fastest of plan.REPEATS runs after a warm-up
of up to 5. One process. Where PE 0 and PE 1 are on one GPU (one GPU, or
PEs sharing it) it is a copy within that GPU; else a peer copy between
their GPUs (put: from PE 0's to PE 1's; get: from PE 1's to PE 0's), on a
stream of PE 0's GPU, as PE 0 issues symmem's, with peer access on where
the GPUs allow it. After each size the destination is checked.

    python -m symmem.bench.memcpy_reference --ops put,get --pe0-gpu 0 --pe1-gpu 1
"""

import time

import cupy as cp

from symmem.bench import plan
from symmem.bench.engine_libraries import MEMCPY as LABEL
from symmem.bench.engine_libraries import MEMCPY_OPS as OPS

DEVICE_TO_DEVICE = 3  # cudaMemcpyKind cudaMemcpyDeviceToDevice


def peer_access(first, second):
    """Turns on peer access between two GPUs both ways where they allow it;
    whether they do (a copy within one GPU: True)."""
    if first == second:
        return True
    for here, there in ((first, second), (second, first)):
        if not cp.cuda.runtime.deviceCanAccessPeer(here, there):
            return False
        with cp.cuda.Device(here):
            try:
                cp.cuda.runtime.deviceEnablePeerAccess(there)
            except cp.cuda.runtime.CUDARuntimeError as error:
                if "PeerAccessAlreadyEnabled" not in str(error):
                    raise
    return True


def seconds_per_copy(dst, src, nbytes, stream, iters):
    """Seconds per cudaMemcpyAsync of nbytes from src to dst on stream: CUDA
    events around iters copies, the fastest of plan.REPEATS runs."""
    runtime = cp.cuda.runtime

    def copy():
        runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, DEVICE_TO_DEVICE, stream.ptr)

    for _ in range(min(iters, 5)):  # warm up, as symmem's timed()
        copy()
    best = float("inf")
    for _ in range(plan.REPEATS):
        stream.synchronize()
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        begin.record(stream)
        for _ in range(iters):
            copy()
        end.record(stream)
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(begin, end) * 1e-3 / iters)
    return best


def measure(op, nbytes, gpus, stream, iters):
    """Seconds per copy of op (put or get) at nbytes; gpus: (PE 0's, PE 1's)."""
    src_gpu, dst_gpu = gpus if op == "put" else gpus[::-1]
    with cp.cuda.Device(src_gpu):
        src = cp.full(nbytes, 7, dtype=cp.uint8)
    with cp.cuda.Device(dst_gpu):
        dst = cp.zeros(nbytes, dtype=cp.uint8)
    with cp.cuda.Device(gpus[0]):
        seconds = seconds_per_copy(dst, src, nbytes, stream, iters)
    with cp.cuda.Device(dst_gpu):
        if not bool((dst == 7).all()):
            raise SystemExit(f"memcpy_reference: {op} of {nbytes} bytes left other data")
    del src, dst
    for gpu in set(gpus):  # the next size's buffers, not this one's, in memory
        with cp.cuda.Device(gpu):
            cp.get_default_memory_pool().free_all_blocks()
    return seconds


def main():
    parser = plan.sweep_parser()
    parser.add_argument("--pe0-gpu", type=int, default=0, help="PE 0's GPU")
    parser.add_argument("--pe1-gpu", type=int, default=0, help="PE 1's GPU")
    args = parser.parse_args()
    gpus = (args.pe0_gpu, args.pe1_gpu)
    t0 = time.perf_counter()
    with cp.cuda.Device(gpus[0]):
        stream = cp.cuda.Stream(non_blocking=True)
    peer = peer_access(*gpus)
    emit = plan.emitter(0)
    started = time.perf_counter() - t0
    emit(lib=LABEL, op="init", seconds=started, n_pes=1, gpus=list(gpus), peer=peer)
    for op in args.ops.split(","):
        if op not in OPS:
            raise SystemExit(f"memcpy_reference: {op}: not one of {', '.join(OPS)}")
        for size in plan.sizes(op, args.min_bytes, args.max_bytes, 2):
            seconds = measure(op, size, gpus, stream, plan.iterations(size, args.iters))
            emit(lib=LABEL, op=op, bytes=size, us=seconds * 1e6)


if __name__ == "__main__":
    main()
