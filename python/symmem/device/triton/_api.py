"""The functions Triton kernels call: PyTorch's names and argument orders
(torch.distributed._symmetric_memory._nvshmem_triton), NVSHMEM4Py's atomics,
and remote_ptr. Each picks its engine when the kernel compiles: ENGINE is
OWN (_own.py, in Triton) or NVSHMEM (_bitcode.py), fixed for the process
by _runtime.configure() before the first kernel compiles.

Every call is made by all threads of a program (a CUDA block) with the
same arguments. Collectives and team syncs are made by one program at a
time, as NVSHMEM's _block collectives are.

Their docstrings are built in _docs.py from tables (arguments, what traps,
an example); @documented sets each before triton.jit wraps the function.
Every function that reads ENGINE stays in this one module: each reads it
by name, which Triton records in the kernel's cache key and checks for
changes, and configure() sets it here (a module attribute read as
mod.ENGINE would not be recorded). The typed forms that only call these
(put, get and their nbi forms in elements, the atomics by name) are in
_api_typed.py, imported at the end."""

import triton
import triton.language as tl

from . import _bitcode as nv
from . import _own as own
from . import _own_collectives as coll
from ._docs import documented

OWN = tl.constexpr(0)
NVSHMEM = tl.constexpr(1)
ENGINE = tl.constexpr(OWN)  # set by _runtime.configure()


@triton.jit
def _bytes(ptr, nelems):
    return tl.cast(nelems, tl.int64) * (ptr.dtype.element_ty.primitive_bitwidth // 8)


@triton.jit
def _i64(x):
    """A pointer or an integer as int64 (how the bitcode takes addresses)."""
    return tl.cast(own.address(x), tl.int64, bitcast=True)


@triton.jit
def _same_type(dest, source, CALL: tl.constexpr):
    tl.static_assert(
        dest.dtype.element_ty == source.dtype.element_ty,
        CALL + ": dest and source must have the same element type",
    )


# ---- who am I ----


@triton.jit
@documented
def my_pe():
    if ENGINE == NVSHMEM:
        return nv.call_pure("nvshmem_my_pe", tl.int32)
    else:
        return own.my_pe_now()


@triton.jit
@documented
def n_pes():
    if ENGINE == NVSHMEM:
        return nv.call_pure("nvshmem_n_pes", tl.int32)
    else:
        return own.n_pes_now()


@triton.jit
@documented
def team_my_pe(team):
    if ENGINE == NVSHMEM:
        return nv.call("nvshmem_team_my_pe", tl.int32, tl.cast(team, tl.int32))
    else:
        return own.team_rank(team, "team_my_pe")


@triton.jit
@documented
def team_n_pes(team):
    if ENGINE == NVSHMEM:
        return nv.call("nvshmem_team_n_pes", tl.int32, tl.cast(team, tl.int32))
    else:
        return own.team_size(team, "team_n_pes")


# ---- put and get, in bytes ----


@triton.jit
def _copy(dest, source, nbytes, pe, NAME: tl.constexpr, GET: tl.constexpr):
    """NVSHMEM's nvshmemx_<NAME>, or the own engine's put or get (its nbi
    forms are the same stores, complete after quiet alike)."""
    tl.debug_barrier()  # every thread's earlier stores (the data, maybe) before the copy
    if ENGINE == NVSHMEM:
        nv.call(
            "nvshmemx_" + NAME,
            tl.int32,
            _i64(dest),
            _i64(source),
            tl.cast(nbytes, tl.int64),
            tl.cast(pe, tl.int32),
        )
    elif GET:
        own.get(dest, source, nbytes, pe, NAME)
    else:
        own.put(dest, source, nbytes, pe, NAME)


@triton.jit
@documented
def putmem_block(dest, source, nbytes, pe):
    _copy(dest, source, nbytes, pe, "putmem_block", False)


@triton.jit
@documented
def putmem_nbi_block(dest, source, nbytes, pe):
    _copy(dest, source, nbytes, pe, "putmem_nbi_block", False)


@triton.jit
@documented
def getmem_block(dest, source, nbytes, pe):
    _copy(dest, source, nbytes, pe, "getmem_block", True)


@triton.jit
@documented
def getmem_nbi_block(dest, source, nbytes, pe):
    _copy(dest, source, nbytes, pe, "getmem_nbi_block", True)


@triton.jit
@documented
def p(dest, value, pe):
    T: tl.constexpr = dest.dtype.element_ty
    if ENGINE == NVSHMEM:
        U: tl.constexpr = tl.core.get_int_dtype(T.primitive_bitwidth, False)
        bits = tl.cast(tl.cast(value, T), U, bitcast=True)
        if nv.first_thread():
            nv.call(nv.typed("nvshmem", U, "p"), tl.int32, _i64(dest), bits, tl.cast(pe, tl.int32))
    else:
        at = own.remote(own.address(dest), T.primitive_bitwidth // 8, pe, 0, "p")
        tl.store(at.to(dest.dtype), tl.cast(value, T))


@triton.jit
@documented
def g(source, pe):
    T: tl.constexpr = source.dtype.element_ty
    if ENGINE == NVSHMEM:
        U: tl.constexpr = tl.core.get_int_dtype(T.primitive_bitwidth, False)
        bits = tl.cast(0, U)
        if nv.first_thread():
            bits = nv.call(nv.typed("nvshmem", U, "g"), U, _i64(source), tl.cast(pe, tl.int32))
        return tl.cast(nv.from_first_thread(bits), T, bitcast=True)
    else:
        at = own.remote(own.address(source), T.primitive_bitwidth // 8, pe, 0, "g")
        return tl.load(at.to(source.dtype), volatile=True)


@triton.jit
@documented
def remote_ptr(ptr, pe):
    if ENGINE == NVSHMEM:
        at = nv.call("nvshmem_ptr", tl.int64, _i64(ptr), tl.cast(pe, tl.int32))
        return tl.cast(at, tl.uint64, bitcast=True).to(ptr.dtype)
    else:
        size: tl.constexpr = ptr.dtype.element_ty.primitive_bitwidth // 8
        return own.remote(own.address(ptr), size, pe, 0, "remote_ptr").to(ptr.dtype)


# ---- signals and waits ----


@triton.jit
def _put_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe, NAME: tl.constexpr):
    tl.debug_barrier()  # every thread's earlier stores (the data, maybe) before the copy
    if ENGINE == NVSHMEM:
        nv.call(
            "nvshmemx_" + NAME,
            tl.int32,
            _i64(dest),
            _i64(source),
            tl.cast(nbytes, tl.int64),
            _i64(sig_addr),
            tl.cast(signal, tl.uint64),
            nv.signal_op_code(sig_op),
            tl.cast(pe, tl.int32),
        )
    else:
        own.put_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe, NAME)


@triton.jit
@documented
def putmem_signal_block(dest, source, nbytes, sig_addr, signal, sig_op, pe):
    _put_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe, "putmem_signal_block")


@triton.jit
@documented
def putmem_signal_nbi_block(dest, source, nbytes, sig_addr, signal, sig_op, pe):
    _put_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe, "putmem_signal_nbi_block")


@triton.jit
@documented
def signal_op(sig_addr, signal, sig_op, pe):
    if ENGINE == NVSHMEM:
        # a release, as the own engine's: every thread's earlier loads and
        # stores (bar.sync), NVSHMEM's fence, then the update, by thread 0
        tl.debug_barrier()
        if nv.first_thread():
            nv.call("nvshmem_fence", tl.int32)
            nv.call(
                "nvshmemx_signal_op",
                tl.int32,
                _i64(sig_addr),
                tl.cast(signal, tl.uint64),
                nv.signal_op_code(sig_op),
                tl.cast(pe, tl.int32),
            )
    else:
        own.signal_op(sig_addr, signal, sig_op, pe, "signal_op")


@triton.jit
@documented
def signal_wait_until(sig_addr, cmp, cmp_val):
    if ENGINE == NVSHMEM:
        # thread 0 waits: NVSHMEM's acquire, pairing with the sender's fence and
        # signal update (signal_op, putmem_signal); the rest wait at
        # from_first_thread's bar.sync, so their later loads follow it
        value = tl.cast(0, tl.uint64)
        if nv.first_thread():
            value = nv.call(
                "nvshmem_signal_wait_until",
                tl.uint64,
                _i64(sig_addr),
                tl.cast(cmp, tl.int32),
                tl.cast(cmp_val, tl.uint64),
            )
        return nv.from_first_thread(value)
    else:
        return own.wait(own.address(sig_addr), cmp, cmp_val, 64, False, "signal_wait_until")


@triton.jit
@documented
def wait_until(ivar, cmp, cmp_val):
    T: tl.constexpr = ivar.dtype.element_ty
    tl.static_assert(T.is_int(), "wait_until: ivar must point to integers")
    if ENGINE == NVSHMEM:
        nv.call(nv.wait_until(T), tl.int32, _i64(ivar), tl.cast(cmp, tl.int32), tl.cast(cmp_val, T))
    else:
        own.wait(
            own.address(ivar), cmp, cmp_val, T.primitive_bitwidth, T.is_int_signed(), "wait_until"
        )


@triton.jit
@documented
def fence():
    if ENGINE == NVSHMEM:
        nv.call("nvshmem_fence", tl.int32)
    else:
        own.fence_acq_rel_sys()


@triton.jit
@documented
def quiet():
    if ENGINE == NVSHMEM:
        nv.call("nvshmem_quiet", tl.int32)
    else:
        tl.debug_barrier()  # the program's stores before every thread's fence
        own.fence_sc_sys()


# ---- syncs and barriers ----


@triton.jit
@documented
def barrier_all():
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_barrier_all_block", tl.int32)
    else:
        own.barrier(0, "barrier_all")


@triton.jit
@documented
def sync_all():
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_sync_all_block", tl.int32)
    else:
        own.sync(0, "sync_all")


@triton.jit
@documented
def barrier(team):
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_barrier_block", tl.int32, tl.cast(team, tl.int32))
    else:
        own.barrier(team, "barrier")


@triton.jit
@documented
def sync(team):
    if ENGINE == NVSHMEM:
        nv.call("nvshmemx_team_sync_block", tl.int32, tl.cast(team, tl.int32))
    else:
        own.sync(team, "sync")


# ---- collectives ----


@triton.jit
@documented
def alltoall(team, dest, source, nelems_per_pe):
    _same_type(dest, source, "alltoall")
    nbytes = _bytes(dest, nelems_per_pe)
    if ENGINE == NVSHMEM:
        nv.call(
            "nvshmemx_alltoallmem_block",
            tl.int32,
            tl.cast(team, tl.int32),
            _i64(dest),
            _i64(source),
            nbytes,
        )
    else:
        own.sync(team, "alltoall")
        coll.push(team, dest, source, nbytes, True, True, "alltoall")
        own.sync(team, "alltoall")


@triton.jit
@documented
def fcollect(team, dest, source, nelems):
    _same_type(dest, source, "fcollect")
    nbytes = _bytes(dest, nelems)
    if ENGINE == NVSHMEM:
        nv.call(
            "nvshmemx_fcollectmem_block",
            tl.int32,
            tl.cast(team, tl.int32),
            _i64(dest),
            _i64(source),
            nbytes,
        )
    else:
        own.sync(team, "fcollect")
        coll.push(team, dest, source, nbytes, True, False, "fcollect")
        own.sync(team, "fcollect")


@triton.jit
@documented
def broadcast(team, dest, source, nelems, pe_root):
    _same_type(dest, source, "broadcast")
    nbytes = _bytes(dest, nelems)
    if ENGINE == NVSHMEM:
        nv.call(
            "nvshmemx_broadcastmem_block",
            tl.int32,
            tl.cast(team, tl.int32),
            _i64(dest),
            _i64(source),
            nbytes,
            tl.cast(pe_root, tl.int32),
        )
    else:
        own.sync(team, "broadcast")
        n = own.team_size(team, "broadcast")
        if (pe_root < 0) | (pe_root >= n):
            own.fail(own.ERR_BAD_ROOT, own.my_pe_now(), 4, tl.cast(pe_root, tl.int64), "broadcast")
        if own.team_rank(team, "broadcast") == pe_root:
            coll.push(team, dest, source, nbytes, False, False, "broadcast")
        own.sync(team, "broadcast")


@triton.jit
@documented
def reduce(team, dest, source, nreduce, operation: tl.constexpr):
    _same_type(dest, source, "reduce")
    if ENGINE == NVSHMEM:
        nv.call(
            nv.typed("nvshmemx", dest.dtype.element_ty, operation + "_reduce_block"),
            tl.int32,
            tl.cast(team, tl.int32),
            _i64(dest),
            _i64(source),
            tl.cast(nreduce, tl.int64),
        )
    else:
        nreduce = tl.cast(nreduce, tl.int64)
        own.sync(team, "reduce")
        if own.same_address(dest, source):
            coll.reduce_in_place(team, dest, nreduce, operation, "reduce")
        else:
            coll.reduce_range(team, dest, source, 0, nreduce, operation, "reduce")
        own.sync(team, "reduce")


# ---- atomics (NVSHMEM4Py's names), on the element dest points at on PE pe ----


@triton.jit
def _atomic(dest, value, cond, pe, NAME: tl.constexpr):
    """atomic_<NAME> on either engine: relaxed, at system scope. Returns the
    old value where the call has one (0 from NVSHMEM's forms without)."""
    T: tl.constexpr = dest.dtype.element_ty
    KIND: tl.constexpr = nv.atomic_kind(NAME)  # what it does to the word
    value = tl.cast(value, T)
    pe = tl.cast(pe, tl.int32)
    if ENGINE == NVSHMEM:
        RET: tl.constexpr = nv.atomic_result(T, NAME)
        result = tl.cast(0, RET)
        if nv.first_thread():  # once per program, as Triton's own atomics
            if KIND == "compare_swap":
                result = nv.call(nv.atomic(T, NAME), RET, _i64(dest), tl.cast(cond, T), value, pe)
            elif (KIND == "fetch") or (KIND == "inc"):
                result = nv.call(nv.atomic(T, NAME), RET, _i64(dest), pe)
            else:
                result = nv.call(nv.atomic(T, NAME), RET, _i64(dest), value, pe)
        if RET == T:
            old = nv.from_first_thread(result)
        else:
            old = tl.cast(0, T)
    else:
        size: tl.constexpr = T.primitive_bitwidth // 8
        at = own.remote(own.address(dest), size, pe, 0, "atomic_" + NAME).to(dest.dtype)
        if KIND == "fetch":
            old = tl.load(at, volatile=True)
        elif (KIND == "set") or (KIND == "swap"):
            old = tl.atomic_xchg(at, value, sem="relaxed", scope="sys")
        elif KIND == "compare_swap":
            old = tl.atomic_cas(at, tl.cast(cond, T), value, sem="relaxed", scope="sys")
        elif KIND == "add":
            old = tl.atomic_add(at, value, sem="relaxed", scope="sys")
        elif KIND == "inc":
            old = tl.atomic_add(at, tl.cast(1, T), sem="relaxed", scope="sys")
        elif KIND == "and":
            old = tl.atomic_and(at, value, sem="relaxed", scope="sys")
        elif KIND == "or":
            old = tl.atomic_or(at, value, sem="relaxed", scope="sys")
        else:
            old = tl.atomic_xor(at, value, sem="relaxed", scope="sys")
    return old
