"""NVSHMEM4Py's shared-memory staging names (SmemAmount, ask_smem, give_smem,
release_smem) and the device-side get_multicast_array, for @numba.njit code
on the cpu backend; _cuda_smem.py registers them for @numba.cuda.jit kernels
and _simulator.py for simulated ones.

NVSHMEM can stage a block's copies through shared memory the kernel gives it
(its TMA path): a kernel asks how much (ask_smem), is launched with that
much dynamic shared memory, registers it (give_smem) and releases it before
it ends. symmem's device calls copy through the peer mappings and stage
nothing, so registering is a no-op; ask_smem still answers the same small
nonzero size as the host call (symmem.ask_smem), because programs written
for NVSHMEM carve their own data after it or require it to be positive.

NVLink multicast is never enabled by symmem (it can take a shared host's
GPUs down), so get_multicast_array fails the compile, naming the call and
why (symmem._multicast says which reason applies)."""

from numba import types
from numba.core.errors import TypingError

from symmem._capabilities import SMEM_BYTES
from symmem._enums import SmemAmount
from symmem._multicast import multicast_unavailable_reason

from ._stubs import cpu_overload, require_array, stub

ask_smem = stub("ask_smem", "flag")
give_smem = stub("give_smem", "smem")
release_smem = stub("release_smem", "")
get_multicast_array = stub("get_multicast_array", "team, array")


def check_flag(flag):
    """flag must be an integer or an IntEnum member (SmemAmount)."""
    if not isinstance(flag, (types.Integer, types.IntEnumMember)):
        raise TypingError(f"ask_smem: flag must be a SmemAmount or an integer, got {flag}")


def check_smem(smem):
    """smem must be a C-contiguous array covering the allocation."""
    require_array("give_smem", "smem", smem)
    if smem.layout != "C":
        raise TypingError(
            f"give_smem: smem must be a C-contiguous array (the whole "
            f"shared-memory allocation), got layout {smem.layout}"
        )


def refuse_multicast(team, array):
    """A TypingError naming get_multicast_array and why it cannot run here."""
    require_array("get_multicast_array", "array", array)
    return TypingError(multicast_unavailable_reason("get_multicast_array"))


@cpu_overload(ask_smem)
def _ask_smem(flag):
    check_flag(flag)
    return lambda flag: SMEM_BYTES  # every amount: nothing is staged (see above)


@cpu_overload(give_smem)
def _give_smem(smem):
    check_smem(smem)
    return lambda smem: None


@cpu_overload(release_smem)
def _release_smem():
    return lambda: None


@cpu_overload(get_multicast_array)
def _get_multicast_array(team, array):
    raise refuse_multicast(team, array)


__all__ = ["SmemAmount", "ask_smem", "give_smem", "release_smem", "get_multicast_array"]
