import os
import symmem.device.numba as dev
import cupy as cp, numpy as np
from numba import cuda
import symmem as nvshmem
cuda.select_device(int(os.environ.get("LOCAL_RANK", "0")) % len(cuda.gpus))
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()

@cuda.jit
def probe(a, pe, out):
    peer = dev.get_peer_array(a, pe)
    out[0] = peer.size
    out[1] = peer.shape[0]
    out[2] = peer.strides[0]
    peer[3] = 77.0
    out[3] = peer[3]
    out[4] = peer[5]

a = nvshmem.array((16,), dtype="float32"); a[:] = cp.arange(16, dtype="float32") + 100 * me
nvshmem.barrier_all()
out = cp.zeros(8, dtype="float64")
probe[1, 1](cuda.as_cuda_array(a), (me + 1) % n, cuda.as_cuda_array(out))
cuda.synchronize(); nvshmem.barrier_all()
print(me, "out", cp.asnumpy(out), "a", cp.asnumpy(a), "host peer ptr", hex(nvshmem.get_peer_array(a, (me+1)%n).data.ptr), "mine", hex(a.data.ptr))
print(probe.inspect_llvm()[list(probe.inspect_llvm())[0]][-3000:] if me == 0 else "")
nvshmem.free_array(a); nvshmem.finalize()
