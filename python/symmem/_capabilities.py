"""What the library offers a program and what its device calls need:
query_thread() and ask_smem(), with NVSHMEM4Py's names. Both work before
init(), as NVSHMEM's do."""
import operator

from symmem._enums import SmemAmount, ThreadSupport
from symmem._errors import invalid

_ASKABLE = (SmemAmount.SMEM_RECOMMENDED, SmemAmount.SMEM_MINIMUM, SmemAmount.SMEM_BARRIERS_ONLY)


def query_thread():
    """THREAD_SERIALIZED: any thread may call symmem, one call at a time.
    symmem's own state (teams, heap, collective channels) takes no lock, and
    its blocking calls release the GIL, so two threads inside it at once
    could interleave; THREAD_MULTIPLE would promise more than that."""
    return ThreadSupport.THREAD_SERIALIZED


def ask_smem(amount=SmemAmount.SMEM_RECOMMENDED):
    """The dynamic shared memory (bytes) a kernel should give NVSHMEM's TMA
    copies: 0 on every backend, as symmem's device calls stage nothing in
    shared memory. An amount that is not a SmemAmount raises NvshmemInvalid
    (NVSHMEM answers its recommended size)."""
    try:
        value = operator.index(amount)
    except TypeError:
        value = None
    if value not in _ASKABLE or isinstance(amount, bool):
        raise invalid(f"ask_smem: amount={amount!r} is not one of "
                      f"{', '.join(a.name for a in _ASKABLE)}")
    return 0


__all__ = ["query_thread", "ask_smem"]
