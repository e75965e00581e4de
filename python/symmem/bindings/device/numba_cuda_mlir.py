"""NVSHMEM4Py's raw numba-cuda-mlir device bindings
(nvshmem.bindings.device.numba_cuda_mlir) on symmem: NVSHMEM's device
functions under their C names, for numba-cuda-mlir kernels (`from
numba_cuda_mlir import cuda`, `@cuda.jit`) on the gpu backend::

    from numba_cuda_mlir import cuda
    from symmem.bindings.device.numba_cuda_mlir import float_put_block, my_pe, n_pes

    @cuda.jit
    def shift(dst, src, n):
        float_put_block(dst, src, n, (my_pe() + 1) % n_pes())

Every function of NVSHMEM4Py 0.4.1's module (the names of
symmem.bindings.device.numba but ask_smem, plus ptr), with its argument
orders and types, and the generic forms without the type. Pointer
arguments take a pointer, an array (its first element) or an address (an
int); output arguments (info_get_version's, ...) a pointer or an array.
The calls are symmem's device library, as symmem.device.numba_cuda_mlir's;
what symmem cannot serve (mc_ptr, barrier_warpgroup, maxloc,
region_stop_block) fails the kernel's compile naming it and why. Kernels
compile after symmem.init() on the gpu backend."""

try:
    import numba_cuda_mlir  # noqa: F401
    from numba_cuda_mlir import cuda as _cuda  # noqa: F401
except ImportError as _error:
    raise ImportError(
        "symmem.bindings.device.numba_cuda_mlir needs numba-cuda-mlir, which is not "
        f"installed: pip install 'symmem[mlir]'. ({_error})"
    ) from _error

from . import _mlir, _stubs

STUBS = _stubs.make("numba_cuda_mlir")
globals().update(STUBS)
_mlir.register(STUBS)

__all__ = sorted(STUBS)
