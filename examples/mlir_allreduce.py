"""An all-reduce in a numba-cuda-mlir kernel: one block of every PE calls
the device collective reduce_block (every thread, the same arguments),
which sums every PE's src into every PE's dst through the peer mappings,
between the meetings it makes itself. Needs GPUs, CuPy and numba-cuda-mlir
(pip install 'symmem[mlir]'):

    python -m symmem.run -n 4 examples/mlir_allreduce.py

Not yet run on GPUs (its CPU-side compile is checked)."""

import cupy as cp
from cuda.core import Device
from numba_cuda_mlir import cuda

import symmem
import symmem.device.numba_cuda_mlir as dev

N = 10243


@cuda.jit
def allreduce(dst, src):
    dev.reduce_block(dev.Teams.TEAM_WORLD, dst, src, "sum")


symmem.init()
Device().set_current()  # numba-cuda-mlir launches in the current context: this PE's GPU
me, npes = symmem.my_pe(), symmem.n_pes()
src = symmem.array((N,), dtype="float32")
dst = symmem.array((N,), dtype="float32")
index = cp.arange(N, dtype=cp.float32)
src[:] = index + me
cp.cuda.Device().synchronize()
symmem.barrier_all()
allreduce[1, 256](dst, src)
cp.cuda.Device().synchronize()
want = index * npes + npes * (npes - 1) / 2
assert cp.array_equal(dst, want), f"PE {me}: got {dst[:4]}, want {want[:4]}"
print(f"PE {me} OK: the numba-cuda-mlir all-reduce of {N} floats over {npes} PEs is right")
symmem.barrier_all()
for a in (dst, src):
    symmem.free_array(a)
symmem.finalize()
