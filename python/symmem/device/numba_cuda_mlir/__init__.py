"""NVSHMEM4Py's numba-cuda-mlir device API (nvshmem.core.device.numba_cuda_mlir)
on symmem, for kernels of numba-cuda-mlir (`from numba_cuda_mlir import
cuda`, `@cuda.jit`), the MLIR successor of numba-cuda; also importable as
symmem.core.device.numba_cuda_mlir::

    from numba_cuda_mlir import cuda
    import symmem.device.numba_cuda_mlir as dev

    @cuda.jit
    def ring(dst, src, sig):
        me, n = dev.my_pe(), dev.n_pes()
        dev.put_signal_block(dst, src, sig, 1, dev.SIGNAL_SET, (me + 1) % n)
        if cuda.threadIdx.x == 0:
            dev.signal_wait(sig, dev.CMP_EQ, 1)

The same names, argument orders and sizes as symmem.device.numba's CUDA
target (arrays made by symmem.array, or contiguous slices; signals uint64
arrays; _warp and _block forms called by every thread of the scope), plus
quiet, fence and wait_until. The calls are symmem's device library
(device.cuh), compiled by NVRTC into LTO-IR and linked into each kernel
through cuda.declare_device(..., link=...): the one engine of the Numba
and CuTe calls, so waits end on a dead peer with an error naming it.
Kernels compile after symmem.init() on the gpu backend, and must not be
cached to disk (they embed the device state block's address)."""

try:
    import numba_cuda_mlir  # noqa: F401
    from numba_cuda_mlir import cuda as _cuda  # noqa: F401
except ImportError as _error:
    raise ImportError(
        "symmem.device.numba_cuda_mlir needs numba-cuda-mlir, which is not "
        f"installed: pip install 'symmem[mlir]'. ({_error})"
    ) from _error

from symmem._enums import ComparisonType, SignalOp, Teams

from . import _collectives  # noqa: F401 (registers the collectives' overloads)
from ._calls import STUBS as _STUBS

globals().update(_STUBS)

SIGNAL_SET, SIGNAL_ADD = int(SignalOp.SIGNAL_SET), int(SignalOp.SIGNAL_ADD)
CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE = (
    int(c)
    for c in (
        ComparisonType.CMP_EQ,
        ComparisonType.CMP_NE,
        ComparisonType.CMP_GT,
        ComparisonType.CMP_LE,
        ComparisonType.CMP_LT,
        ComparisonType.CMP_GE,
    )
)

__all__ = sorted(_STUBS) + [
    "Teams",
    "SignalOp",
    "ComparisonType",
    "SIGNAL_SET",
    "SIGNAL_ADD",
    "CMP_EQ",
    "CMP_NE",
    "CMP_GT",
    "CMP_LE",
    "CMP_LT",
    "CMP_GE",
]
