"""NVSHMEM4Py's raw Numba device bindings (nvshmem.bindings.device.numba) on
symmem: NVSHMEM's device functions under their C names, for
@numba.cuda.jit kernels on the gpu backend::

    from numba import cuda
    from symmem.bindings.device.numba import int32_put_block, my_pe, n_pes

    @cuda.jit
    def shift(dst, src, n):
        int32_put_block(dst, src, n, (my_pe() + 1) % n_pes())

Every function of NVSHMEM4Py 0.4.1's module, with its name, argument order
and types (2,729 of them: int_p, float_put_signal_nbi_block, putmem, iput64,
long_wait_until_any_vector, uint_atomic_fetch_add, double_sum_reduce_warp,
barrier, quiet, ...), and the generic forms without the type
(put_signal_nbi, atomic_add, ...). Pointer arguments take what numba types
as a pointer (cffi's from_buffer, say), an array (its first element: a
symmem.array or a slice of one), or an address (an int); counts are
elements (bytes for the mem forms: putmem, ...). The calls are symmem's device library
(device.cuh), as symmem.device.numba's, and what NVSHMEM4Py has that
symmem cannot serve (mc_ptr: symmem never enables NVLink multicast;
barrier_warpgroup; maxloc; region_stop_block) fails the kernel's compile
with a TypingError naming it and why.

Kernels using these compile after symmem.init() on the gpu backend and must
not be cached to disk (they embed the device state block's address), as
symmem.device.numba's. Without numba-cuda the module still imports (the
names, their signatures and docstrings); GPU_UNAVAILABLE says why kernels
cannot use them."""

from enum import IntEnum

from symmem._enums import SmemAmount

from . import _stubs

STUBS = _stubs.make("numba")
globals().update(STUBS)


class nvshmemx_smem_amount_t(IntEnum):
    """NVSHMEM's shared-memory amounts (ask_smem's argument), by NVSHMEM's names."""

    NVSHMEMX_SMEM_RECOMMENDED = int(SmemAmount.SMEM_RECOMMENDED)
    NVSHMEMX_SMEM_MINIMUM = int(SmemAmount.SMEM_MINIMUM)
    NVSHMEMX_SMEM_BARRIERS_ONLY = int(SmemAmount.SMEM_BARRIERS_ONLY)
    NVSHMEMX_SMEM_AMOUNT_MAX = int(SmemAmount.MAX)


def _register():
    """None once the names work in @numba.cuda.jit kernels, else why not."""
    try:
        from symmem.device.numba import _gpu_target
    except ImportError as error:  # numba itself
        return f"numba is not installed ({error})"
    if _gpu_target.GPU_UNAVAILABLE:
        return _gpu_target.GPU_UNAVAILABLE
    if _gpu_target._simulated():
        return (
            "numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1) runs kernels as Python, with no "
            "pointers to take: use symmem.device.numba there"
        )
    from . import _numba_cuda

    _numba_cuda.register(STUBS)
    return None


GPU_UNAVAILABLE = _register()

__all__ = sorted(STUBS) + ["nvshmemx_smem_amount_t"]
