import os
import symmem.device.numba as dev
import cupy as cp, numpy as np
from numba import cuda
import symmem as nvshmem
from symmem.device.numba import _library
cuda.select_device(int(os.environ["SYMMEM_LOCAL_RANK"]))
nvshmem.init()
me = nvshmem.my_pe()
REPS = 16384
dst = nvshmem.array((1 << 20,), dtype="float32"); src = nvshmem.array((1 << 20,), dtype="float32")
st = nvshmem._symmem.device_state_gpu()

@cuda.jit
def a_put(dst, src, n, reps):
    for _ in range(reps):
        dev.put_block(dst[0:n], src[0:n], 1)

@cuda.jit
def b_sync(reps):
    for _ in range(reps):
        cuda.syncthreads()

@cuda.jit
def c_call(out, reps):
    s = 0
    for _ in range(reps):
        s += dev.my_pe()
        cuda.syncthreads()
    out[0] = s

def timed(f):
    best = 1e9
    for i in range(4):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(); f(); e1.record(); e1.synchronize()
        if i: best = min(best, cp.cuda.get_elapsed_time(e0, e1) * 1e3 / REPS)
    return best

src_text = _library.SOURCE
inline = "#define SYMMEM_DEVICE_API static __device__ __forceinline__\n" + src_text
kern = r'''
extern "C" __global__ void k_put(symmem_u64 st, symmem_u64 d, symmem_u64 s, symmem_u64 n, int reps)
{ for (int r = 0; r < reps; r++) symmem_dev_put_block(st, d, s, n, 1); }
extern "C" __global__ void k_raw(symmem_u64 st, symmem_u64 d, symmem_u64 s, symmem_u64 n, int reps)
{ const symmem_device_state *S = (const symmem_device_state *)st; symmem_u64 remote = S->peer_base[1] + (d - S->heap_base);
  for (int r = 0; r < reps; r++) { symmem__copy(remote, s, n, threadIdx.x, blockDim.x); __syncthreads(); } }
'''
if me == 0:
    out = cp.zeros(1, dtype="int64")
    for nbytes in (1024, 65536, 1 << 20):
        n = nbytes // 4
        res = {}
        res["numba put_block"] = timed(lambda: a_put[1, 1024](cuda.as_cuda_array(dst), cuda.as_cuda_array(src), n, REPS if nbytes < 65536 else 1024))
        for name, text in (("rawkernel non-inline", src_text + kern), ("rawkernel inline", inline + kern)):
            m = cp.RawModule(code=text, options=("-std=c++17",))
            k = m.get_function("k_put"); kr = m.get_function("k_raw")
            reps = REPS if nbytes < 65536 else 1024
            res[name] = timed(lambda: k((1,), (1024,), (np.uint64(st), np.uint64(dst.data.ptr), np.uint64(src.data.ptr), np.uint64(nbytes), np.int32(reps))))
            res[name + " raw copy"] = timed(lambda: kr((1,), (1024,), (np.uint64(st), np.uint64(dst.data.ptr), np.uint64(src.data.ptr), np.uint64(nbytes), np.int32(reps))))
        if nbytes >= 65536:
            res = {k: v * 1024 / REPS for k, v in res.items()} if False else res
        print(nbytes, {k: round(v * (REPS / (REPS if nbytes < 65536 else 1024)), 3) for k, v in res.items()}, flush=True)
    print("sync only", round(timed(lambda: b_sync[1, 1024](REPS)), 3), "call+sync", round(timed(lambda: c_call[1, 1024](cuda.as_cuda_array(out), REPS)), 3))
nvshmem.barrier_all()
nvshmem.free_array(dst); nvshmem.free_array(src)
nvshmem.finalize()
