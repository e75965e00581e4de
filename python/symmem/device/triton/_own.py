"""symmem's own engine for Triton kernels, written in Triton: the same
memory model as device.cuh (its head comment), over the same state.

A Triton program is one CUDA block and every call is made by all of its
threads, so every call here has block scope. Triton runs scalar stores
and atomics on one thread of the program (and broadcasts an atomic's
result), loads and inline asm on every thread.

Where things are: CONSTS is the device address of the gpu backend's copy
of symmem_device_consts_t in device memory, STATE that of the device state
block; both are fixed for the process, written into this module by
_runtime.configure() before the first kernel compiles (they are
constexprs, so they are part of each kernel's cache key). The constant
copy is read as read-only memory (_const_u64). Every offset and code of
that layout (include/symmem/device_layout.h) comes from the extension's
tables (DEVICE_STATE_LAYOUT, DEVICE_CONSTS_LAYOUT, DEVICE_LAYOUT), never a
number written here.
Memory model, per call:
- put/get copy through the peer's mapping with plain loads and stores;
  quiet (fence.sc.sys) or a barrier completes them.
- put_signal: the copy, a bar.sync (every thread's stores before thread
  0's release), then one release atomic at system scope on the signal:
  a release pattern over the whole copy.
- signal_op: the same release atomic.
- waits spin on ld.acquire.sys: each acquire pairs with the release
  atomic (put_signal, signal_op) or the fence before the store it reads.
- sync: bar.sync, fence.acq_rel.sys, a relaxed system-scope store of this
  PE's epoch into every member's arrival slot (the same sync area and
  epochs as device.cuh's, so Numba and Triton kernels sync together), then
  ld.acquire.sys spins on every slot here (each pairs with that member's
  fence before its arrival store).
Every failure writes the error record the gpu backend prints (naming the
call and the PE) and traps; waits look at the abort word and the timeout
every 1024 spins.
The primitives that read no device address (loads, fences, the clock,
pointers as addresses) are _own_primitives.py's, imported here; the
collectives' pieces are _own_collectives.py's."""

import triton
import triton.language as tl

from symmem import _symmem

from .. import _error_record
from ._copy import copy
from ._own_primitives import (  # noqa: F401 (same_address: _api.py calls own.same_address)
    _globaltimer,
    _i32,
    _ld_volatile_u32,
    _u64,
    address,
    fence_acq_rel_sys,
    fence_sc_sys,
    ld_acquire,
    same_address,
)

CONSTS = tl.constexpr(0)  # set by _runtime.configure()
STATE = tl.constexpr(0)

_C = _symmem.DEVICE_CONSTS_LAYOUT
_S = _symmem.DEVICE_STATE_LAYOUT
_L = _symmem.DEVICE_LAYOUT
C_MAGIC = tl.constexpr(_C["magic"])
C_MY_PE = tl.constexpr(_C["my_pe"])
C_N_PES = tl.constexpr(_C["n_pes"])
C_HEAP_BASE = tl.constexpr(_C["heap_base"])
C_HEAP_END = tl.constexpr(_C["heap_end"])
C_SYNC_BASE = tl.constexpr(_C["sync_base"])
C_PEERS = tl.constexpr(_C["peers"])
C_DELTA = tl.constexpr(_C["delta"])
CONST_PEERS = tl.constexpr(_C["PEERS"])
S_MAGIC = tl.constexpr(_S["magic"])
S_MY_PE = tl.constexpr(_S["my_pe"])
S_N_PES = tl.constexpr(_S["n_pes"])
S_HEAP_BASE = tl.constexpr(_S["heap_base"])
S_HEAP_SIZE = tl.constexpr(_S["heap_size"])
S_PEER_BASE = tl.constexpr(_S["peer_base"])
S_ABORT_WORD = tl.constexpr(_S["abort_word"])
S_SYNC_BASE = tl.constexpr(_S["sync_base"])
S_TIMEOUT = tl.constexpr(_S["timeout_ns"])
S_ERROR = tl.constexpr(_S["error"])
S_TEAMS = tl.constexpr(_S["teams"])
MAGIC = tl.constexpr(_S["MAGIC"])
MAX_TEAMS = tl.constexpr(_L["max_teams"])
SPINS = tl.constexpr(_L["spins"])
# an entry of the team table: {n, me, members}
TEAM_ENTRY = tl.constexpr(_L["team_size"])
TEAM_N = tl.constexpr(_L["team_n"])
TEAM_ME = tl.constexpr(_L["team_me"])
TEAM_MEMBERS = tl.constexpr(_L["team_members"])
SYNC_WORD = tl.constexpr(_L["sync_word"])  # a word of a team's part of the sync area
# the comparisons' codes (symmem/vocabulary.h)
CMP_EQ = tl.constexpr(_symmem.COMPARISONS["CMP_EQ"])
CMP_NE = tl.constexpr(_symmem.COMPARISONS["CMP_NE"])
CMP_GT = tl.constexpr(_symmem.COMPARISONS["CMP_GT"])
CMP_LE = tl.constexpr(_symmem.COMPARISONS["CMP_LE"])
CMP_LT = tl.constexpr(_symmem.COMPARISONS["CMP_LT"])

# SYMMEM_DEV_ERR_*
ERR_BAD_PE = tl.constexpr(_L["ERR_BAD_PE"])
ERR_NOT_SYMMETRIC = tl.constexpr(_L["ERR_NOT_SYMMETRIC"])
ERR_PEER_DEAD = tl.constexpr(_L["ERR_PEER_DEAD"])
ERR_TIMEOUT = tl.constexpr(_L["ERR_TIMEOUT"])
ERR_NOT_INITIALIZED = tl.constexpr(_L["ERR_NOT_INITIALIZED"])
ERR_BAD_TEAM = tl.constexpr(_L["ERR_BAD_TEAM"])
ERR_BAD_ROOT = tl.constexpr(_L["ERR_BAD_ROOT"])
ERR_UNREACHABLE = tl.constexpr(_L["ERR_UNREACHABLE"])

# fail()'s PTX and the call's name as its words: the device library's record
# and steps (symmem.device._error_record, checked against device_layout.h and
# symmem__fail_at by tests/python/test_device_layout.py)
assert _error_record.CALL_WORDS == 4, "fail() passes the call's name in four words"
_FAIL_PTX = tl.constexpr(_error_record.FAIL_PTX)
_FAIL_CONSTRAINTS = tl.constexpr(_error_record.CONSTRAINTS)


_call_words = triton.constexpr_function(_error_record.call_words)


@triton.constexpr_function
def _name_word(name, i):
    """Word i of the record's call field for the call's name (NUL-padded, at
    most 31 characters)."""
    return _call_words(name)[i]


# ---- the constant copy ----


@triton.jit
def _const_u64(field):
    """A 64-bit field of the constant copy (CONSTS + field). The host writes
    the copy at init, at each malloc (fields that only grow, for memory no
    running kernel was given) and at finalize, so a kernel reads it as
    read-only memory (ld.global.nc). Not is_pure: the compiler would hoist
    the table out of a caller's loop and keep it in registers, which took
    a 1024-thread copy kernel past 32 registers a thread, the most at which
    two such programs fit on one SM."""
    return tl.inline_asm_elementwise(
        "ld.global.nc.u64 $0, [$1];",
        "=l,l",
        [tl.cast(CONSTS + field, tl.uint64)],
        dtype=tl.uint64,
        is_pure=False,
        pack=1,
    )


@triton.jit
def _const_i32(field):
    """A 32-bit field of the constant copy, as _const_u64."""
    return tl.inline_asm_elementwise(
        "ld.global.nc.s32 $0, [$1];",
        "=r,l",
        [tl.cast(CONSTS + field, tl.uint64)],
        dtype=tl.int32,
        is_pure=False,
        pack=1,
    )


# ---- failing loudly ----


@triton.jit
def fail(what, pe, arg, value, CALL: tl.constexpr):
    """Leaves the error record (device_layout.h's symmem_device_error: set,
    what, pe, arg, value, call[32]) for the host and traps: the device
    library's steps (symmem__fail_at). Inline asm, so no barrier: any thread
    that fails may run it; the first to claim the record fills it."""
    record = _u64(STATE + S_ERROR)
    tl.inline_asm_elementwise(
        _FAIL_PTX,
        _FAIL_CONSTRAINTS,
        [
            record,
            tl.cast(what, tl.int32),
            tl.cast(pe, tl.int32),
            tl.cast(arg, tl.int32),
            tl.cast(value, tl.uint64),
            tl.full((), _name_word(CALL, 0), tl.int64),
            tl.full((), _name_word(CALL, 1), tl.int64),
            tl.full((), _name_word(CALL, 2), tl.int64),
            tl.full((), _name_word(CALL, 3), tl.int64),
        ],
        dtype=tl.int32,
        is_pure=False,
        pack=1,
    )


# ---- where a PE's copy is ----


@triton.jit
def _current_i32(C_AT: tl.constexpr, S_AT: tl.constexpr):
    """An int32 field of the copy of the constant state, or of the state
    block where the copy is not current."""
    value = _const_i32(C_AT)
    if _const_u64(C_MAGIC) != MAGIC:
        value = _i32(STATE + S_AT)
    return value


@triton.jit
def my_pe_now():
    return _current_i32(C_MY_PE, S_MY_PE)


@triton.jit
def n_pes_now():
    return _current_i32(C_N_PES, S_N_PES)


@triton.jit
def _check_pe(pe, CALL: tl.constexpr):
    if _u64(STATE + S_MAGIC) != MAGIC:
        fail(ERR_NOT_INITIALIZED, -1, -1, 0, CALL)
    if (pe < 0) | (pe >= _i32(STATE + S_N_PES)):
        fail(ERR_BAD_PE, pe, -1, tl.cast(pe, tl.int64), CALL)


@triton.jit
def _peer_base(pe, CALL: tl.constexpr):
    """Where PE pe's heap is mapped here (checked); 0 fails as unreachable."""
    base = _u64(_u64(STATE + S_PEER_BASE) + tl.cast(pe, tl.uint64) * 8)
    if base == 0:
        fail(ERR_UNREACHABLE, pe, -1, 0, CALL)
    return base


@triton.jit
def _remote_slow(addr, nbytes, pe, ARG: tl.constexpr, CALL: tl.constexpr):
    """remote()'s checks one by one through the state block: each failure
    named, and PEs past the copy's delta table."""
    _check_pe(pe, CALL)
    base = _u64(STATE + S_HEAP_BASE)
    size = _u64(STATE + S_HEAP_SIZE)
    offset = addr - base
    if (addr < base) | (offset > size) | (nbytes > size - offset):
        fail(ERR_NOT_SYMMETRIC, pe, ARG, addr, CALL)
    return _peer_base(pe, CALL) + offset


@triton.jit
def remote(addr, nbytes, pe, ARG: tl.constexpr, CALL: tl.constexpr):
    """Where PE pe's copy of the symmetric [addr, addr + nbytes) is mapped
    here (addr, nbytes: uint64; pe: int32). One round trip: every field
    read lies in the copy's first lines, loaded together."""
    pe = tl.cast(pe, tl.int32)
    rank = pe.to(tl.uint32)  # a negative pe is past every bound
    slot = tl.where(rank < CONST_PEERS, rank, 0).to(tl.uint64)
    delta = _const_u64(C_DELTA + slot * 8)
    end = _const_u64(C_HEAP_END)
    ok = (
        (_const_u64(C_MAGIC) == MAGIC)
        & (rank < _const_i32(C_PEERS).to(tl.uint32))
        & (addr >= _const_u64(C_HEAP_BASE))
        & (addr <= end)
        & (nbytes <= end - addr)
        & ((delta & 1) == 0)
    )
    at = addr + delta
    if not ok:
        at = _remote_slow(addr, nbytes, pe, ARG, CALL)
    return at


# ---- put, get, signals ----


@triton.jit
def put(dst, src, nbytes, pe, CALL: tl.constexpr):
    dst = address(dst)
    nbytes = tl.cast(nbytes, tl.uint64)
    copy(remote(dst, nbytes, pe, 0, CALL), address(src), nbytes, False)


@triton.jit
def get(dst, src, nbytes, pe, CALL: tl.constexpr):
    src = address(src)
    nbytes = tl.cast(nbytes, tl.uint64)
    copy(address(dst), remote(src, nbytes, pe, 1, CALL), nbytes, True)
    tl.debug_barrier()  # every thread's loads done: dst is complete for the program


@triton.jit
def signal_update(at, value, op):
    """The release signal_wait's acquire pairs with: a release atomic at
    system scope (fence.acq_rel.sys + a relaxed update), run by thread 0
    after the caller's bar.sync, so it orders every thread's stores.
    op: SIGNAL_ADD (10; or 5, PyTorch's docstrings' value) adds, else sets."""
    sig = tl.cast(at, tl.pointer_type(tl.uint64))
    value = tl.cast(value, tl.uint64)
    if (op == 5) | (op == 10):
        tl.atomic_add(sig, value, sem="release", scope="sys")
    else:
        tl.atomic_xchg(sig, value, sem="release", scope="sys")


@triton.jit
def put_signal(dst, src, nbytes, sig, value, op, pe, CALL: tl.constexpr):
    dst = address(dst)
    sig = address(sig)
    nbytes = tl.cast(nbytes, tl.uint64)
    remote_dst = remote(dst, nbytes, pe, 0, CALL)
    remote_sig = remote(sig, tl.cast(8, tl.uint64), pe, 3, CALL)
    copy(remote_dst, address(src), nbytes, False)
    tl.debug_barrier()  # every thread's copy before thread 0's release
    signal_update(remote_sig, value, op)


@triton.jit
def signal_op(sig, value, op, pe, CALL: tl.constexpr):
    sig = address(sig)
    tl.debug_barrier()  # the program's earlier stores before the release
    signal_update(remote(sig, tl.cast(8, tl.uint64), pe, 0, CALL), value, op)


@triton.jit
def still_waiting(t0, CALL: tl.constexpr):
    """Every SPINS spins of a wait: a dead peer or the timeout ends it."""
    word = _u64(STATE + S_ABORT_WORD)
    if word != 0:
        if _ld_volatile_u32(word) != 0:
            fail(ERR_PEER_DEAD, _ld_volatile_u32(word + 4).to(tl.int32), -1, 0, CALL)
    timeout = _u64(STATE + S_TIMEOUT)
    if timeout != 0:
        if _globaltimer() - t0 > timeout:
            fail(ERR_TIMEOUT, _i32(STATE + S_MY_PE), -1, timeout, CALL)


@triton.jit
def compare(v, cmp, x):
    """NVSHMEM's comparisons (ComparisonType; GE for any other code)."""
    return tl.where(
        cmp == CMP_EQ,
        v == x,
        tl.where(
            cmp == CMP_NE,
            v != x,
            tl.where(
                cmp == CMP_GT,
                v > x,
                tl.where(cmp == CMP_LE, v <= x, tl.where(cmp == CMP_LT, v < x, v >= x)),
            ),
        ),
    )


@triton.jit
def wait(addr, cmp, value, BITS: tl.constexpr, SIGNED: tl.constexpr, CALL: tl.constexpr):
    """Spins until the BITS-wide integer at addr compares true with value;
    returns it (widened to 64 bits). Every thread spins on its own
    acquire, so no barrier is needed after."""
    if SIGNED:
        value = tl.cast(value, tl.int64)
    else:
        value = tl.cast(value, tl.uint64)
    t0 = _globaltimer()
    v = ld_acquire(addr, BITS, SIGNED)
    spins = 1
    while not compare(v, cmp, value):
        if spins % SPINS == 0:
            still_waiting(t0, CALL)
        v = ld_acquire(addr, BITS, SIGNED)
        spins += 1
    return v


# ---- teams: sync, barrier ----


@triton.jit
def _team_entry(team, CALL: tl.constexpr):
    """Team team's entry in the device team table ({n, me, members}); a
    handle that is no team of this PE fails."""
    _check_pe(_i32(STATE + S_MY_PE), CALL)
    teams = _u64(STATE + S_TEAMS)
    index = tl.where((team >= 0) & (team < MAX_TEAMS), team, 0).to(tl.uint64)
    entry = teams + index * TEAM_ENTRY
    if (team < 0) | (team >= MAX_TEAMS) | (teams == 0):
        fail(ERR_BAD_TEAM, _i32(STATE + S_MY_PE), 0, tl.cast(team, tl.int64), CALL)
    if (_i32(entry + TEAM_N) <= 0) | (_i32(entry + TEAM_ME) < 0):
        fail(ERR_BAD_TEAM, _i32(STATE + S_MY_PE), 0, tl.cast(team, tl.int64), CALL)
    return entry


@triton.jit
def _is_world(team):
    """TEAM_WORLD with the whole delta table in the copy: the fast path."""
    return (
        (team == 0) & (_const_u64(C_MAGIC) == MAGIC) & (_const_i32(C_PEERS) == _const_i32(C_N_PES))
    )


@triton.jit
def team_size(team, CALL: tl.constexpr):
    team = tl.cast(team, tl.int32)
    n = _const_i32(C_N_PES)
    if not _is_world(team):
        n = _i32(_team_entry(team, CALL) + TEAM_N)
    return n


@triton.jit
def team_rank(team, CALL: tl.constexpr):
    team = tl.cast(team, tl.int32)
    me = _const_i32(C_MY_PE)
    if not _is_world(team):
        me = _i32(_team_entry(team, CALL) + TEAM_ME)
    return me


@triton.jit
def team_member(team, i, CALL: tl.constexpr):
    """The world PE of team PE i."""
    team = tl.cast(team, tl.int32)
    pe = tl.cast(i, tl.int32)
    if not _is_world(team):
        pe = _i32(_u64(_team_entry(team, CALL) + TEAM_MEMBERS) + tl.cast(i, tl.uint64) * 4)
    return pe


@triton.jit
def _sync_area(team, CALL: tl.constexpr):
    """Team team's part of the sync area (symmetric): word 0 counts this
    PE's syncs on the team, word 1 + i is the last epoch team PE i
    announced here."""
    team = tl.cast(team, tl.int32)
    area = _const_u64(C_SYNC_BASE)
    if not _is_world(team):
        _team_entry(team, CALL)
        area = _u64(STATE + S_SYNC_BASE) + SYNC_WORD * (_i32(STATE + S_N_PES) + 1).to(
            tl.uint64
        ) * tl.cast(team, tl.uint64)
    return area


@triton.jit
def sync(team, CALL: tl.constexpr):
    """device.cuh's team sync, by one program (a block) at a time."""
    team = tl.cast(team, tl.int32)
    tl.debug_barrier()  # every thread's earlier stores before the fence below
    area = _sync_area(team, CALL)
    n = team_size(team, CALL)
    me = team_rank(team, CALL)
    # thread 0 counts; every thread gets its epoch (Triton broadcasts it)
    epoch = (
        tl.atomic_add(tl.cast(area, tl.pointer_type(tl.uint64)), 1, sem="relaxed", scope="gpu") + 1
    )
    fence_acq_rel_sys()  # this PE's earlier stores before its arrival
    slot = area + SYNC_WORD * (1 + me).to(tl.uint64)
    for i in range(0, n):
        to = remote(slot, tl.cast(SYNC_WORD, tl.uint64), team_member(team, i, CALL), -1, CALL)
        tl.atomic_xchg(tl.cast(to, tl.pointer_type(tl.uint64)), epoch, sem="relaxed", scope="sys")
    for i in range(0, n):
        # acquire: pairs with team PE i's fence before its arrival store
        wait(area + SYNC_WORD * (1 + i), 5, epoch, 64, False, CALL)


@triton.jit
def barrier(team, CALL: tl.constexpr):
    """quiet, then sync."""
    tl.debug_barrier()
    fence_sc_sys()
    sync(team, CALL)
