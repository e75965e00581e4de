"""NVSHMEM4Py's CuTe DSL device API (nvshmem.core.device.cute) on symmem, for
kernels of NVIDIA's CuTe DSL (nvidia-cutlass-dsl); also importable as
symmem.core.device.cute::

    import cutlass, cutlass.cute as cute
    import symmem.device.cute as dev

    @cute.kernel
    def ring(dst: cute.Tensor, src: cute.Tensor, sig: cute.Tensor):
        me, n = dev.my_pe(), dev.n_pes()
        dev.put_signal_block(dst, src, sig, 1, dev.SIGNAL_SET, (me + 1) % n)
        dev.signal_wait(sig, dev.CMP_EQ, 1)

Arguments are cute.Tensor views of symmetric memory (symmem.interop.cute
makes them); counts are min(size(dst), size(src)) elements of one dtype;
signals are uint64 tensors (their first element). The _warp and _block
forms are called by every thread of the warp or block with the same
arguments. Every dtype NVSHMEM4Py takes, bfloat16 too.

Two engines behind the same names, fixed for the process at the first
kernel traced (SYMMEM_CUTE_ENGINE=auto|symmem|nvshmem; engine() says
which): symmem's own (its device library, device.cuh, as LLVM bitcode
linked into each kernel: no NVSHMEM device state, waits end on a dead
peer with an error naming it) and NVSHMEM's device bitcode (reaches PEs
on other nodes; such kernels need library_init(), which
symmem.interop.cute.cute_compile_helper does). See _engine.py.

Kernels that call these are traced after symmem.init() on the gpu
backend: the own engine compiles in the device state block's address, so
they must not be cached to disk across processes."""

try:
    import cutlass  # noqa: F401
    import cutlass.cute  # noqa: F401
except ImportError as _error:
    raise ImportError(
        "symmem.device.cute needs NVIDIA's CuTe DSL, which is not installed: "
        "pip install 'symmem[cute]' (nvidia-cutlass-dsl; for CUDA 13 also "
        f"nvidia-cutlass-dsl[cu13]). ({_error})"
    ) from _error

from symmem._enums import ComparisonType, SignalOp, SmemAmount, Teams

from . import _atomics, _collectives, _rma
from ._engine import engine
from ._memory import ask_smem, get_multicast_tensor, get_peer_tensor, give_smem, release_smem
from ._rma import fence, g, my_pe, n_pes, p, quiet, signal_op, signal_wait, wait_until

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

# put, put_nbi_warp, ..., reduce_block, atomic_fetch_add: the generated calls
_GENERATED = {**_rma.CALLS, **_collectives.CALLS, **_atomics.CALLS}
globals().update(_GENERATED)

__all__ = sorted(_GENERATED) + [
    "my_pe",
    "n_pes",
    "p",
    "g",
    "signal_op",
    "signal_wait",
    "wait_until",
    "quiet",
    "fence",
    "get_peer_tensor",
    "get_multicast_tensor",
    "ask_smem",
    "give_smem",
    "release_smem",
    "SmemAmount",
    "Teams",
    "SignalOp",
    "ComparisonType",
    "engine",
    "SIGNAL_SET",
    "SIGNAL_ADD",
    "CMP_EQ",
    "CMP_NE",
    "CMP_GT",
    "CMP_LE",
    "CMP_LT",
    "CMP_GE",
]
