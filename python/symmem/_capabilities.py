"""What the library offers a program and what its device calls need:
query_thread() and ask_smem(), with NVSHMEM4Py's names. Both work before
init(), as NVSHMEM's do. symmem.device.numba's ask_smem answers the same."""

import operator

from symmem._enums import SmemAmount, ThreadSupport
from symmem._errors import invalid

_ASKABLE = (
    SmemAmount.SMEM_RECOMMENDED,
    SmemAmount.SMEM_MINIMUM,
    SmemAmount.SMEM_BARRIERS_ONLY,
    SmemAmount.MAX,
)

# What ask_smem answers for every amount, here and in device code. symmem's
# device calls stage nothing in shared memory, but programs written for
# NVSHMEM carve their own data after the amount or require it to be
# positive: one 16-byte unit, the alignment NVSHMEM's registration asks for.
SMEM_BYTES = 16


def query_thread():
    """The thread support symmem gives: THREAD_SERIALIZED.

    Any thread may call symmem, one call at a time. symmem's own state
    (teams, heap, collective channels) takes no lock, and its blocking
    calls release the GIL, so two threads inside it at once could
    interleave; THREAD_MULTIPLE would promise more than that. Works before
    init().

    Returns:
        ThreadSupport.THREAD_SERIALIZED.

    Example:
        >>> symmem.query_thread() == symmem.ThreadSupport.THREAD_SERIALIZED
        True
    """
    return ThreadSupport.THREAD_SERIALIZED


def ask_smem(amount=SmemAmount.SMEM_RECOMMENDED):
    """The dynamic shared memory a kernel should give NVSHMEM's TMA copies.

    16 bytes for every amount, on every backend: symmem's device calls
    stage nothing in shared memory (give_smem in a kernel registers
    nothing), but programs written for NVSHMEM launch with this much, carve
    their own data after it, or require it to be positive. MAX answers the
    recommended amount, as NVSHMEM's does. Works before init().

    Args:
        amount: a SmemAmount: SMEM_RECOMMENDED, SMEM_MINIMUM,
            SMEM_BARRIERS_ONLY or MAX.

    Returns:
        The number of bytes, 16.

    Raises:
        NvshmemInvalid: amount is not one of those SmemAmount members (or
            their values); NVSHMEM would answer its recommended size.

    Example:
        >>> symmem.ask_smem(symmem.SmemAmount.SMEM_MINIMUM)
        16
    """
    try:
        value = operator.index(amount)
    except TypeError:
        value = None
    if value not in _ASKABLE or isinstance(amount, bool):
        raise invalid(
            f"ask_smem: amount={amount!r} is not one of {', '.join(a.name for a in _ASKABLE)}"
        )
    return SMEM_BYTES


__all__ = ["query_thread", "ask_smem"]
