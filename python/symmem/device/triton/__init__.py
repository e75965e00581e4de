"""symmem from inside Triton kernels (gpu backend): PyTorch's names and
argument orders (torch.distributed._symmetric_memory._nvshmem_triton), the
atomics, and remote_ptr for plain tl.load / tl.store on a peer's memory::

    import triton, triton.language as tl
    import symmem
    import symmem.device.triton as sdt

    @sdt.requires_symmem
    @triton.jit
    def ring(dst, src, sig, n, round):
        me, npes = sdt.my_pe(), sdt.n_pes()
        sdt.putmem_signal_block(dst, src, n * 4, sig, round, sdt.SIGNAL_SET, (me + 1) % npes)
        sdt.signal_wait_until(sig, sdt.CMP_GE, round)

    ring[(1,)](dst, src, sig, n, 1)   # symmetric torch tensors or CuPy arrays

Every call is made by all threads of a program (one CUDA block) with the
same arguments; team syncs and collectives by one program at a time.
Addresses are pointers (tensor arguments) or int64 addresses; the `*mem*`
forms count bytes, put/get and the collectives elements. SIGNAL_* and
CMP_* are NVSHMEM's values (SIGNAL_SET 9, SIGNAL_ADD 10, as SignalOp's
members; 0 and 5, which PyTorch's docstrings give, mean the same).

Two engines behind these names, fixed for the process when the first kernel
compiles (SYMMEM_TRITON_ENGINE=auto|symmem|nvshmem): symmem's own, written
in Triton (_own.py: loads and stores through the peer mappings, release and
acquire at system scope, the device state the Numba API uses, and an error
the host prints, naming the call and the PE, then a trap where NVSHMEM would
hang: a dead peer, a timeout, a bad PE or address); and NVSHMEM's device
bitcode (_bitcode.py), which reaches PEs on other nodes. auto takes symmem's
where every PE's heap is mapped into this GPU."""

from ._api import (
    alltoall,
    barrier,
    barrier_all,
    broadcast,
    fcollect,
    fence,
    g,
    getmem_block,
    getmem_nbi_block,
    my_pe,
    n_pes,
    p,
    putmem_block,
    putmem_nbi_block,
    putmem_signal_block,
    putmem_signal_nbi_block,
    quiet,
    reduce,
    remote_ptr,
    signal_op,
    signal_wait_until,
    sync,
    sync_all,
    team_my_pe,
    team_n_pes,
    wait_until,
)
from ._api_typed import (
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
    get,
    get_nbi,
    put,
    put_nbi,
)
from ._runtime import SymmemKernel, configure, engine, requires_symmem

requires_nvshmem = requires_symmem  # PyTorch's name for the decorator

# NVSHMEM's values (nvshmemx_signal_op_t, ComparisonType)
SIGNAL_SET, SIGNAL_ADD = 9, 10
CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE = 0, 1, 2, 3, 4, 5
TEAM_WORLD = 0

from ._runtime import _install_hooks  # noqa: E402

_install_hooks()

__all__ = [
    "my_pe",
    "n_pes",
    "team_my_pe",
    "team_n_pes",
    "put",
    "get",
    "put_nbi",
    "get_nbi",
    "putmem_block",
    "getmem_block",
    "putmem_nbi_block",
    "getmem_nbi_block",
    "putmem_signal_block",
    "putmem_signal_nbi_block",
    "signal_op",
    "signal_wait_until",
    "wait_until",
    "fence",
    "quiet",
    "barrier_all",
    "sync_all",
    "barrier",
    "sync",
    "alltoall",
    "fcollect",
    "broadcast",
    "reduce",
    "remote_ptr",
    "p",
    "g",
    "atomic_fetch",
    "atomic_set",
    "atomic_swap",
    "atomic_compare_swap",
    "atomic_add",
    "atomic_fetch_add",
    "atomic_inc",
    "atomic_fetch_inc",
    "atomic_and",
    "atomic_fetch_and",
    "atomic_or",
    "atomic_fetch_or",
    "atomic_xor",
    "atomic_fetch_xor",
    "requires_symmem",
    "requires_nvshmem",
    "SymmemKernel",
    "configure",
    "engine",
    "SIGNAL_SET",
    "SIGNAL_ADD",
    "CMP_EQ",
    "CMP_NE",
    "CMP_GT",
    "CMP_LE",
    "CMP_LT",
    "CMP_GE",
    "TEAM_WORLD",
]
