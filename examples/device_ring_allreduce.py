"""A ring all-reduce written as one GPU kernel: each block moves its share of
every chunk around the ring with put_signal_nbi and waits for its own
signal, with no trip through the host (the pattern of NVSHMEM4Py's ring
example). Needs GPUs and numba-cuda:

    python -m symmem.run -n 2 examples/device_ring_allreduce.py

Reduce-scatter: in step s PE me sends chunk (me - s) to the next PE, which
adds it into its own copy; after n - 1 steps PE me holds the full sum of
chunk (me + 1). All-gather: the sums travel n - 1 more steps into `out`.
A block's signal counts the steps that reached it (SIGNAL_ADD), so one
counter serves both phases."""

import symmem.device.numba as dev  # before numba.cuda (it needs the NumPy 2.5 fix)

import cupy as cp
import numpy as np
from numba import cuda

import symmem as nvshmem


@cuda.jit
def ring_allreduce(data, recv, out, sig, chunk, me, n):
    b, per = cuda.blockIdx.x, chunk // cuda.gridDim.x
    nxt = (me + 1) % n
    my_sig = sig[b : b + 1]
    for s in range(n - 1):  # reduce-scatter
        send, into = (me - s) % n, (me - s - 1) % n
        at = send * chunk + b * per
        staged = s * chunk + b * per  # a slot per step: nothing is overwritten
        dev.put_signal_nbi_block(
            recv[staged : staged + per], data[at : at + per], my_sig, 1, dev.SIGNAL_ADD, nxt
        )
        if cuda.threadIdx.x == 0:
            dev.signal_wait(my_sig, dev.CMP_GE, s + 1)
        cuda.syncthreads()
        for i in range(cuda.threadIdx.x, per, cuda.blockDim.x):
            data[into * chunk + b * per + i] += recv[staged + i]
        cuda.syncthreads()
    mine = ((me + 1) % n) * chunk + b * per
    for i in range(cuda.threadIdx.x, per, cuda.blockDim.x):
        out[mine + i] = data[mine + i]
    cuda.syncthreads()
    for s in range(n - 1):  # all-gather, in place in out
        at = ((me + 1 - s) % n) * chunk + b * per
        dev.put_signal_nbi_block(
            out[at : at + per], out[at : at + per], my_sig, 1, dev.SIGNAL_ADD, nxt
        )
        if cuda.threadIdx.x == 0:
            dev.signal_wait(my_sig, dev.CMP_GE, n - 1 + s + 1)
        cuda.syncthreads()


nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
blocks, per_block = 8, 1024
chunk = blocks * per_block
data = nvshmem.array((n * chunk,), dtype="float32")
recv = nvshmem.array((max(n - 1, 1) * chunk,), dtype="float32")
out = nvshmem.array((n * chunk,), dtype="float32")
sig = nvshmem.array((blocks,), dtype="uint64")
data[:] = cp.arange(n * chunk, dtype="float32") * (me + 1)
sig[:] = 0
nvshmem.barrier_all()

ring_allreduce[blocks, 256](
    cuda.as_cuda_array(data),
    cuda.as_cuda_array(recv),
    cuda.as_cuda_array(out),
    cuda.as_cuda_array(sig),
    chunk,
    me,
    n,
)
cuda.synchronize()

want = np.arange(n * chunk, dtype="float32") * sum(range(1, n + 1))
assert np.array_equal(cp.asnumpy(out), want), f"PE {me}: wrong sums"
print(f"PE {me} OK: the device ring all-reduce of {n * chunk} floats over {n} PEs is right")
for a in (sig, out, recv, data):
    nvshmem.free_array(a)
nvshmem.finalize()
