"""What NVSHMEM4Py's examples/device_custom_kernel.py does, on symmem: a ring
all-reduce in one Numba kernel written against the raw bindings, with
NVSHMEM4Py's imports spelled symmem (`import symmem as nvshmem`,
`from symmem.bindings.device.numba import my_pe, n_pes, put_signal_nbi,
signal_wait_until`): each block reduces its own slice chunk by chunk around
the ring with put_signal_nbi (arrays where NVSHMEM's C takes pointers, the
type from them) and signal_wait_until on a slice of the signal array, then
passes the sums back around. Every PE checks that it holds the sum.
(NVSHMEM4Py's own file does not run as it is, anywhere: its `import
cuda.core` rebinds numba's `cuda`, and SignalOp has no ADD member.)

    python -m symmem.run -n 2 tests/gpu/bindings_ring_reduce.py
    python tests/gpu/bindings_ring_reduce.py compile   (no GPU: compiles the kernel)"""

import sys

import numpy as np

import symmem.device.numba  # noqa: F401  (before numba.cuda: np.row_stack on NumPy 2.5)
from numba import cuda

import symmem as nvshmem
from symmem import _symmem
from symmem.bindings.device.numba import my_pe, n_pes, put_signal_nbi, signal_wait_until
from symmem.core import ComparisonType, SignalOp

SIGNAL_ADD = SignalOp.SIGNAL_ADD.value
CMP_GE = ComparisonType.CMP_GE.value
BLOCKS, THREADS, CHUNK = 4, 128, 512


@cuda.jit
def ring_reduce(dst, src, nreduce, signal, chunk):
    """dst = the sum over PEs of src: PE 0 starts each chunk, PE i adds its
    src to what came from PE i - 1 and passes it on; the last PE's sums go
    around once more to the PEs before it. Block b owns a slice and the
    signal signal[b]."""
    me, npes = my_pe(), n_pes()
    peer = (me + 1) % npes
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    share = nreduce // cuda.gridDim.x
    sig = signal[b : b + 1]
    chunks = share // chunk
    for c in range(chunks):
        lo = b * share + c * chunk
        out, mine = dst[lo : lo + chunk], src[lo : lo + chunk]
        if me == 0:
            for i in range(t, chunk, cuda.blockDim.x):
                out[i] = mine[i]
        else:
            if t == 0:
                signal_wait_until(sig, CMP_GE, c + 1)
            cuda.syncthreads()
            for i in range(t, chunk, cuda.blockDim.x):
                out[i] += mine[i]
        cuda.syncthreads()
        if t == 0 and npes > 1:
            put_signal_nbi(out, out, chunk, sig, 1, SIGNAL_ADD, peer)
    if t == 0:  # the sums around again: PE npes - 1 has them; the others wait
        for c in range(chunks):
            lo = b * share + c * chunk
            out = dst[lo : lo + chunk]
            if me < npes - 1:
                signal_wait_until(sig, CMP_GE, (c + 1) if me == 0 else (chunks + c + 1))
            if me < npes - 2:
                put_signal_nbi(out, out, chunk, sig, 1, SIGNAL_ADD, peer)


def compile_only():
    """The kernel compiled for sm_90 with no GPU and no init."""
    import types as simple

    import numba.cuda.dispatcher as dispatcher
    from numba import types

    from symmem.device.numba import _cuda

    dispatcher.get_current_device = lambda: simple.SimpleNamespace(compute_capability=(9, 0))
    _cuda.state_address = lambda call: 0x7F0000001000
    f32 = types.Array(types.float32, 1, "C")
    kinds = (f32, f32, types.int64, types.Array(types.uint64, 1, "C"), types.int64)
    cuda.compile_ptx(ring_reduce.py_func, kinds, cc=(9, 0))
    print("compiled ring_reduce")


def main():
    import cupy as cp

    cuda.select_device(_symmem.launcher()["local_rank"] % len(cuda.gpus))
    nvshmem.init()
    me, npes = nvshmem.my_pe(), nvshmem.n_pes()
    size = BLOCKS * 4 * CHUNK
    src = nvshmem.array((size,), dtype="float32")
    dst = nvshmem.array((size,), dtype="float32")
    signal = nvshmem.array((BLOCKS,), dtype="uint64")
    src[:] = cp.arange(size, dtype="float32") % 97 + me
    dst[:], signal[:] = 0, 0
    cp.cuda.Device().synchronize()
    nvshmem.barrier_all()
    ring_reduce[BLOCKS, THREADS](dst, src, size, signal, CHUNK)
    cp.cuda.Device().synchronize()
    nvshmem.barrier_all()
    want = np.arange(size, dtype="float32") % 97 * npes + npes * (npes - 1) / 2
    got = cp.asnumpy(dst)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"PE {me}: {bad.size} sums wrong, first at {bad[:5]}: {got[bad[:5]]}"
    for a in (src, dst, signal):
        nvshmem.free_array(a)
    nvshmem.finalize()
    print(f"PE {me} OK (bindings ring reduce of {size} floats over {npes} PEs)", flush=True)


if __name__ == "__main__":
    compile_only() if "compile" in sys.argv[1:] else main()
