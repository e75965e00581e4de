"""Peer views that GPU kernels store into: a CuPy or a Numba kernel writes
straight into the next PE's symmetric array through get_peer_array.
Run: python -m symmem.run -n 2 tests/gpu/kernel_stores.py cupy|numba"""

import sys

import cupy as cp
import numpy as np

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
a = nvshmem.array((4096,), dtype="float32")
a[:] = -1
nvshmem.barrier_all()

peer = nvshmem.get_peer_array(a, nxt)
if sys.argv[1] == "cupy":
    fill = cp.ElementwiseKernel("float32 base", "float32 out", "out = base - i", "fill_peer")
    fill(cp.float32(500 * me), peer)
    cp.cuda.Device().synchronize()
else:
    import symmem.device.numba  # noqa: F401  (before numba.cuda: NumPy 2.5's row_stack)
    from numba import cuda

    @cuda.jit
    def fill(out, base):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = base - i

    fill[16, 256](cuda.as_cuda_array(peer), np.float32(500 * me))
    cuda.synchronize()
nvshmem.barrier_all()
assert np.array_equal(cp.asnumpy(a), 500 * prv - np.arange(4096, dtype=np.float32)), (
    f"{sys.argv[1]} kernel stores did not land"
)
nvshmem.free_array(a)
nvshmem.finalize()
print(f"PE {me} OK ({sys.argv[1]} kernel stores)")
