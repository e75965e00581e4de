"""Peer views that GPU kernels store into: a CuPy kernel and a Numba kernel
write straight into the next PE's symmetric array through get_peer_array.
Run: python -m symmem.run -n 2 tests/gpu/kernel_stores.py"""
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
fill = cp.ElementwiseKernel("float32 base", "float32 out", "out = base + i", "fill_from_peer")
fill(cp.float32(1000 * me), peer[:2048])
cp.cuda.Device().synchronize()
nvshmem.barrier_all()
assert np.array_equal(cp.asnumpy(a[:2048]), np.arange(2048, dtype=np.float32) + 1000 * prv), \
    "CuPy kernel stores did not land"

from numba import cuda  # noqa: E402


@cuda.jit
def store(out, base):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = base - i


store[8, 256](cuda.as_cuda_array(peer[2048:]), np.float32(500 * me))
cuda.synchronize()
nvshmem.barrier_all()
assert np.array_equal(cp.asnumpy(a[2048:]), 500 * prv - np.arange(2048, dtype=np.float32)), \
    "Numba kernel stores did not land"
nvshmem.free_array(a)
nvshmem.finalize()
print(f"PE {me} OK (kernel stores)")
