import os
import symmem.device.numba as dev
import cupy as cp, numpy as np
from numba import cuda, types
import symmem as nvshmem
from symmem.device.numba import _cuda
cuda.select_device(int(os.environ["SYMMEM_LOCAL_RANK"]))
nvshmem.init()
me = nvshmem.my_pe()
REPS = 16384
dst = nvshmem.array((1 << 20,), dtype="float32"); src = nvshmem.array((1 << 20,), dtype="float32")
st = nvshmem._symmem.device_state_gpu()
raw_put = _cuda.DEVICE["put_block"]
my_pe = _cuda.DEVICE["my_pe"]

@cuda.jit
def a_put(dst, src, n, reps):
    for _ in range(reps):
        dev.put_block(dst[0:n], src[0:n], 1)

@cuda.jit
def a_put_hoisted(dst, src, reps):
    for _ in range(reps):
        dev.put_block(dst, src, 1)

@cuda.jit
def d_raw(d, s, nbytes, reps):
    for _ in range(reps):
        raw_put(types.uint64(st), d, s, nbytes, 1)

@cuda.jit
def e_raw_param(stp, d, s, nbytes, reps):
    for _ in range(reps):
        raw_put(stp, d, s, nbytes, 1)

def timed(f):
    best = 1e9
    for i in range(4):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(); f(); e1.record(); e1.synchronize()
        if i: best = min(best, cp.cuda.get_elapsed_time(e0, e1) * 1e3 / REPS)
    return best

if me == 0:
    dv, sv = cuda.as_cuda_array(dst), cuda.as_cuda_array(src)
    n = 256
    r = {}
    r["put_block sliced"] = timed(lambda: a_put[1, 1024](dv, sv, n, REPS))
    r["put_block whole 1K views"] = timed(lambda: a_put_hoisted[1, 1024](dv[:n], sv[:n], REPS))
    r["raw const st"] = timed(lambda: d_raw[1, 1024](np.uint64(dst.data.ptr), np.uint64(src.data.ptr), np.uint64(1024), REPS))
    r["raw param st"] = timed(lambda: e_raw_param[1, 1024](np.uint64(st), np.uint64(dst.data.ptr), np.uint64(src.data.ptr), np.uint64(1024), REPS))
    print({k: round(v, 3) for k, v in r.items()}, flush=True)
    ptx = a_put.inspect_asm()
    sass = None
    try:
        sass = list(a_put.inspect_sass().values())[0]
    except Exception as e:
        sass = repr(e)
    open(os.environ.get("OUT", "/tmp") + "/a_put.sass", "w").write(str(sass))
    open(os.environ.get("OUT", "/tmp") + "/a_put.ptx", "w").write(str(list(ptx.values())[0]))
nvshmem.barrier_all()
nvshmem.free_array(dst); nvshmem.free_array(src)
nvshmem.finalize()
