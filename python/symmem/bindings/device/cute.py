"""NVSHMEM4Py's raw CuTe DSL device bindings (nvshmem.bindings.device.cute)
on symmem: NVSHMEM's device functions under their C names, for CuTe DSL
kernels on the gpu backend::

    import cutlass.cute as cute
    from symmem.bindings.device.cute import int_p, my_pe, n_pes

    @cute.kernel
    def shift(dest: cute.Tensor):
        me = my_pe()
        int_p(dest.iterator, me + 1, (me + 1) % n_pes())

Every function of NVSHMEM4Py 0.4.1's module (its nvshmemi_<type>_put_signal
internals and ptr too), with its argument orders and types, and the
generic forms without the type. Pointer arguments take a cute pointer (a
tensor's .iterator), a cute.Tensor (its first element) or an address;
counts are elements (bytes for the mem forms: putmem, ...). Two engines, as
symmem.device.cute's (SYMMEM_CUTE_ENGINE=auto|symmem|nvshmem; engine()
says which): symmem's device library, or NVSHMEM's own device bitcode
(reaching PEs on other nodes; its kernels need library_init, which
symmem.interop.cute.cute_compile_helper does). What symmem's engine cannot
serve (barrier_warpgroup, maxloc, region_stop_block) fails the trace with a
TypeError naming it and why, and mc_ptr on both (symmem never enables
NVLink multicast). NVSHMEM4Py's way of linking NVSHMEM's bitcode itself
(cute.compile(..., options="--link-libraries=...")) works too. Kernels are
traced after symmem.init() on the gpu backend."""

try:
    import cutlass  # noqa: F401
    import cutlass.cute  # noqa: F401
except ImportError as _error:
    raise ImportError(
        "symmem.bindings.device.cute needs NVIDIA's CuTe DSL, which is not installed: "
        "pip install 'symmem[cute]' (nvidia-cutlass-dsl; for CUDA 13 also "
        f"nvidia-cutlass-dsl[cu13]). ({_error})"
    ) from _error

from symmem.device.cute._engine import engine

from . import _cute

FUNCTIONS = _cute.functions()
globals().update(FUNCTIONS)

__all__ = sorted(FUNCTIONS) + ["engine"]
