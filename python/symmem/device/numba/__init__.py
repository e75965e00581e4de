"""NVSHMEM4Py's device API (`nvshmem.core.device.numba`) for `@numba.njit`
functions on the cpu backend; also importable as `symmem.core.device.numba`::

    import numba, symmem
    import symmem.device.numba as dev

    @numba.njit
    def ring(dst, src, sig, rounds):
        me, n = dev.my_pe(), dev.n_pes()
        for r in range(1, rounds + 1):
            dev.put_signal(dst, src, sig, r, dev.SIGNAL_SET, (me + 1) % n)
            dev.signal_wait(sig, dev.CMP_GE, r)

Arguments are symmetric NumPy arrays (symmem.array) or contiguous slices of
them; a private array is fine as put's src and get's dst. Counts are
min(dst.size, src.size) elements of one dtype. Signals are uint64 arrays
(the first element). signal_op and cmp are SignalOp / ComparisonType members
or ints. Device signal_wait is (sig, cmp, value): NVSHMEM4Py's device order.

Team barriers and collectives take NVSHMEM4Py's device argument orders
(reduce(team, dst, src, "sum"), broadcast(team, dst, src, root), ...) and
run in njit code on the cpu backend, through the C engine (_collectives.py).

get_peer_array(array, pe) is the array over PE pe's copy of a symmetric
array, for loads and stores straight through the mapping;
get_multicast_array fails the compile, naming why (NVLink multicast is
never enabled). ask_smem, give_smem and release_smem are NVSHMEM's
shared-memory staging for its TMA copies: symmem stages nothing (_smem.py).

Scopes: the cpu target has one thread per PE, so each `_warp` and `_block`
form runs the thread-scope one. Every name also works in @numba.cuda.jit
kernels on the gpu backend (GPU_UNAVAILABLE says why not, if not; see
_cuda.py and _cuda_collectives.py), where the scoped forms are called by
every thread of the warp or block.

Functions using these must not be cached to disk (cache=True): they embed
the address of this process's device state block."""

from symmem._enums import ComparisonType, SignalOp, Teams

from ._atomics import (
    atomic_add,
    atomic_and,
    atomic_compare_swap,
    atomic_fetch,
    atomic_fetch_add,
    atomic_fetch_and,
    atomic_fetch_inc,
    atomic_fetch_or,
    atomic_fetch_xor,
    atomic_inc,
    atomic_or,
    atomic_set,
    atomic_swap,
    atomic_xor,
)
from ._rma import (
    fence,
    g,
    get,
    get_nbi,
    get_peer_array,
    p,
    put,
    put_nbi,
    put_signal,
    put_signal_nbi,
    quiet,
    signal_op,
    signal_wait,
    wait_until,
)
from ._collectives import (
    alltoall,
    barrier,
    broadcast,
    fcollect,
    reduce,
    reducescatter,
    sync,
    team_my_pe,
    team_n_pes,
)
from ._sync import barrier_all, my_pe, n_pes, sync_all
from ._smem import SmemAmount, ask_smem, get_multicast_array, give_smem, release_smem

SIGNAL_SET, SIGNAL_ADD = int(SignalOp.SIGNAL_SET), int(SignalOp.SIGNAL_ADD)
CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE = (
    int(ComparisonType.CMP_EQ),
    int(ComparisonType.CMP_NE),
    int(ComparisonType.CMP_GT),
    int(ComparisonType.CMP_LE),
    int(ComparisonType.CMP_LT),
    int(ComparisonType.CMP_GE),
)

from ._scoped import STUBS as _SCOPED

# put_warp, put_block, ..., broadcast_block: every `_warp` and `_block` form.
_SCOPED_NAMES = [name for name in _SCOPED if name.endswith(("_warp", "_block"))]
globals().update({name: _SCOPED[name] for name in _SCOPED_NAMES})

# @numba.cuda.jit kernels on the gpu backend, where numba-cuda is installed.
from ._gpu_target import GPU_UNAVAILABLE  # noqa: E402,F401  (a public name)

__all__ = [
    "my_pe",
    "n_pes",
    "p",
    "g",
    "put",
    "get",
    "put_nbi",
    "get_nbi",
    "put_signal",
    "put_signal_nbi",
    "signal_op",
    "signal_wait",
    "wait_until",
    "quiet",
    "fence",
    "barrier_all",
    "sync_all",
    "atomic_fetch",
    "atomic_set",
    "atomic_inc",
    "atomic_fetch_inc",
    "atomic_add",
    "atomic_fetch_add",
    "atomic_and",
    "atomic_fetch_and",
    "atomic_or",
    "atomic_fetch_or",
    "atomic_xor",
    "atomic_fetch_xor",
    "atomic_swap",
    "atomic_compare_swap",
    "barrier",
    "sync",
    "reduce",
    "reducescatter",
    "fcollect",
    "alltoall",
    "broadcast",
    "team_my_pe",
    "team_n_pes",
    "get_peer_array",
    "get_multicast_array",
    "SmemAmount",
    "ask_smem",
    "give_smem",
    "release_smem",
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
] + _SCOPED_NAMES
