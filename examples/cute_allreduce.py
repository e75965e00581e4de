"""An all-reduce as one CuTe DSL kernel: every PE sums every PE's copy of
src, read straight through the peer mappings (get_peer_tensor), between
two barriers (the first says every src is ready, the second that no PE
still reads this one's). Needs GPUs, CuPy and nvidia-cutlass-dsl
(pip install 'symmem[cute]'); either engine (SYMMEM_CUTE_ENGINE):

    python -m symmem.run -n 4 examples/cute_allreduce.py

Not yet run on GPUs (its CPU-side compile is checked)."""

import cupy as cp
import cutlass
import cutlass.cute as cute
from cuda.core import Device
from cutlass.cute.runtime import from_dlpack

import symmem
import symmem.device.cute as dev
import symmem.interop.cute as scute

N, THREADS = 10243, 512


@cute.kernel
def allreduce(dst: cute.Tensor, src: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    dev.barrier_all_block()  # every PE's src is written
    for i in range(tid, N, THREADS):
        acc = cutlass.Float32(0.0)
        for pe in range(dev.n_pes()):
            acc = acc + dev.get_peer_tensor(src, pe)[i]
        dst[i] = acc
    dev.barrier_all_block()  # no PE reads this one's src any more


@cute.jit
def launch(dst: cute.Tensor, src: cute.Tensor):
    allreduce(dst, src).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


symmem.init()
Device().set_current()  # CuTe launches in the current context: this PE's GPU
me, npes = symmem.my_pe(), symmem.n_pes()
src = symmem.array((N,), dtype="float32")
dst = symmem.array((N,), dtype="float32")
index = cp.arange(N, dtype=cp.float32)
src[:] = index + me
cp.cuda.Device().synchronize()
args = [from_dlpack(a, assumed_align=16) for a in (dst, src)]
kernel, kobj = scute.cute_compile_helper(launch, *args)  # compile + library_init
kernel(*args)
cp.cuda.Device().synchronize()
want = index * npes + npes * (npes - 1) / 2
assert cp.array_equal(dst, want), f"PE {me}: got {dst[:4]}, want {want[:4]}"
print(
    f"PE {me} OK: the CuTe all-reduce of {N} floats over {npes} PEs is right "
    f"({dev.engine()} engine)"
)
symmem.library_finalize(kobj)
symmem.barrier_all()
for a in (dst, src):
    symmem.free_array(a)
symmem.finalize()
