"""put, get, p, g (and the nbi forms), quiet, fence, put_signal,
signal_op, signal_wait and wait_until in njit code on the cpu backend.

Memory model (cpu backend; a PE is a process, the heaps are shared memory):
- put/p copy with plain stores, then a release fence: every store of the
  call is ordered before any later store of this thread, so a later signal
  (put_signal, signal_op, p of a flag) cannot overtake the data.
- put_signal copies, then updates the signal with a release store (SET) or
  release atomicrmw add (ADD). signal_wait's acquire load pairs with it: a
  PE that sees the new signal value sees the data. The C engine's waits
  (element_ready in src/backends/cpu/cpu_backend.c) load with acquire too.
- get/g copy with plain loads, then an acquire fence: a later load of this
  thread is not hoisted above them.
- get_peer_array is the array over PE pe's copy, through the mapping: its
  loads and stores are plain ones, ordered by the calls above.
- quiet and fence are seq_cst fences (the copies are complete when a call
  returns: nbi forms are the blocking ones).
- After any store a waiter may watch, the target's doorbell rings
  (checks.wake), so a PE asleep in the C engine's wait wakes at once."""

from numba import types
from numba.extending import register_jitable

from symmem import _symmem

from . import _checks as C
from . import _errors as E
from . import _llvm as L
from ._stubs import cpu_overload, require_array, require_int, require_pair, stub

SIGNAL_SET, SIGNAL_ADD = _symmem.SIGNAL_OPS["SIGNAL_SET"], _symmem.SIGNAL_OPS["SIGNAL_ADD"]
# the comparisons' codes (symmem/vocabulary.h); any other in range is CMP_GE
CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT = (
    _symmem.COMPARISONS[name] for name in ("CMP_EQ", "CMP_NE", "CMP_GT", "CMP_LE", "CMP_LT")
)
CMP_FIRST, CMP_LAST = min(_symmem.COMPARISONS.values()), max(_symmem.COMPARISONS.values())
# the integers' symmem_dtype_t codes (symmem/vocabulary.h)
_INT_CODES = {
    name: _symmem.DTYPE_CODES[name]
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
}


@register_jitable
def _put(call, dst, src, pe):
    C.contiguous(call, 0, dst)
    C.contiguous(call, 1, src)
    nbytes = min(dst.size, src.size) * dst.itemsize
    remote = C.translate(call, 0, L.data_address(dst), L.parent_of(dst), nbytes, pe)
    C.live(call, 1, L.parent_of(src), L.data_address(src))
    L.memmove(remote, L.data_address(src), nbytes)


@register_jitable
def _get(call, dst, src, pe):
    C.contiguous(call, 0, dst)
    C.contiguous(call, 1, src)
    nbytes = min(dst.size, src.size) * dst.itemsize
    remote = C.translate(call, 1, L.data_address(src), L.parent_of(src), nbytes, pe)
    C.live(call, 0, L.parent_of(dst), L.data_address(dst))
    L.memmove(L.data_address(dst), remote, nbytes)
    L.fence_acquire()  # later loads stay after the copy


def _put_overload(name):
    function = stub(name, "dst, src, pe")
    call = E.CALL[name]

    @cpu_overload(function)
    def typed(dst, src, pe):
        require_pair(name, dst, src)
        require_int(name, "pe", pe)

        def impl(dst, src, pe):
            _put(call, dst, src, pe)
            L.fence_release()  # the data before any later store (a signal)
            C.wake(pe)

        return impl

    return function


def _get_overload(name):
    function = stub(name, "dst, src, pe")
    call = E.CALL[name]

    @cpu_overload(function)
    def typed(dst, src, pe):
        require_pair(name, dst, src)
        require_int(name, "pe", pe)

        def impl(dst, src, pe):
            _get(call, dst, src, pe)

        return impl

    return function


put = _put_overload("put")
put_nbi = _put_overload("put_nbi")
get = _get_overload("get")
get_nbi = _get_overload("get_nbi")

p = stub("p", "dst, value, pe")
g = stub("g", "src, pe")


@cpu_overload(p)
def _p(dst, value, pe):
    require_array("p", "dst", dst, writes=True)
    require_int("p", "pe", pe)
    call = E.CALL["p"]

    def impl(dst, value, pe):
        remote = C.translate_first(call, 0, dst, pe)
        L.store(dst, remote, value)
        L.fence_release()
        C.wake(pe)

    return impl


@cpu_overload(g)
def _g(src, pe):
    require_array("g", "src", src)
    require_int("g", "pe", pe)
    call = E.CALL["g"]

    def impl(src, pe):
        remote = C.translate_first(call, 1, src, pe)
        value = L.load(src, remote)
        L.fence_acquire()
        return value

    return impl


quiet = stub("quiet", "")
fence = stub("fence", "")


@cpu_overload(quiet)
def _quiet():
    return lambda: L.fence_seq_cst()


@cpu_overload(fence)
def _fence():
    return lambda: L.fence_seq_cst()


signal_add_release = L.rmw_intrinsic("add", "release")


@register_jitable
def _signal(call, sig, signal, sig_op, pe):
    """The signal update of put_signal and signal_op (sig_op checked first)."""
    remote = C.translate_first(call, 2, sig, pe)
    # release: pairs with the waiter's acquire load of the signal
    # (signal_wait below, or the C engine's element_ready).
    if sig_op == SIGNAL_SET:
        L.store_release(sig, remote, signal)
    else:
        signal_add_release(sig, remote, signal)
    C.wake(pe)


@register_jitable
def _check_op(call, sig_op):
    if sig_op != SIGNAL_SET and sig_op != SIGNAL_ADD:
        raise E.DeviceInvalid(E.BAD_OP, call, 2, sig_op)


def _put_signal_overload(name):
    function = stub(name, "dst, src, sig_addr, signal, sig_op, pe")
    call = E.CALL[name]

    @cpu_overload(function)
    def typed(dst, src, sig_addr, signal, sig_op, pe):
        require_pair(name, dst, src)
        require_array(name, "sig_addr", sig_addr, ["uint64"], writes=True)
        require_int(name, "pe", pe)

        def impl(dst, src, sig_addr, signal, sig_op, pe):
            _check_op(call, sig_op)
            C.translate_first(call, 2, sig_addr, pe)  # before any store
            _put(call, dst, src, pe)
            _signal(call, sig_addr, signal, sig_op, pe)

        return impl

    return function


put_signal = _put_signal_overload("put_signal")
put_signal_nbi = _put_signal_overload("put_signal_nbi")
signal_op = stub("signal_op", "sig_addr, signal, sig_op, pe")


@cpu_overload(signal_op)
def _signal_op(sig_addr, signal, sig_op, pe):
    require_array("signal_op", "sig_addr", sig_addr, ["uint64"], writes=True)
    require_int("signal_op", "pe", pe)
    call = E.CALL["signal_op"]

    def impl(sig_addr, signal, sig_op, pe):
        _check_op(call, sig_op)
        _signal(call, sig_addr, signal, sig_op, pe)

    return impl


@register_jitable
def _holds(value, cmp, target):
    if cmp == CMP_EQ:
        return value == target
    if cmp == CMP_NE:
        return value != target
    if cmp == CMP_GT:
        return value > target
    if cmp == CMP_LE:
        return value <= target
    if cmp == CMP_LT:
        return value < target
    return value >= target


@register_jitable
def _check_cmp(call, cmp):
    if cmp < CMP_FIRST or cmp > CMP_LAST:
        raise E.DeviceInvalid(E.BAD_CMP, call, 2, cmp)


signal_wait = stub("signal_wait", "sig_addr, cmp, cmp_value")


@cpu_overload(signal_wait)
def _signal_wait(sig_addr, cmp, cmp_value):
    require_array("signal_wait", "sig_addr", sig_addr, ["uint64"])
    call = E.CALL["signal_wait"]

    def impl(sig_addr, cmp, cmp_value):
        _check_cmp(call, cmp)
        addr = C.local_first(call, 2, sig_addr)
        target = types.uint64(cmp_value)
        # acquire: pairs with the sender's release store or add of the signal
        # (_signal above; cpu_put_signal in the C engine).
        value = L.load_acquire(sig_addr, addr)
        if _holds(value, cmp, target):
            return value
        status = L.c_signal_wait(addr, cmp, target)  # the C engine's acquire load
        if status != 0:
            C.raise_status(status)
        return L.load_acquire(sig_addr, addr)  # pairs as above; meets cmp still or later

    return impl


wait_until = stub("wait_until", "ivar, cmp, cmp_value")


@cpu_overload(wait_until)
def _wait_until(ivar, cmp, cmp_value):
    require_array("wait_until", "ivar", ivar, list(_INT_CODES))
    call = E.CALL["wait_until"]
    code = _INT_CODES[str(ivar.dtype)]
    elem = ivar.dtype

    def impl(ivar, cmp, cmp_value):
        _check_cmp(call, cmp)
        addr = C.local_first(call, 3, ivar)
        target = elem(cmp_value)
        # acquire: pairs with the release of the store that set ivar (p, put,
        # an atomic: all end with a release fence or are seq_cst).
        if _holds(L.load_acquire(ivar, addr), cmp, target):
            return
        status = L.c_wait_until(addr, code, cmp, types.int64(target))
        if status != 0:
            C.raise_status(status)

    return impl


get_peer_array = stub("get_peer_array", "array, pe")


@cpu_overload(get_peer_array)
def _get_peer_array(array, pe):
    require_array("get_peer_array", "array", array)
    require_int("get_peer_array", "pe", pe)
    call = E.CALL["get_peer_array"]

    def impl(array, pe):
        C.contiguous(call, 5, array)
        at = C.translate(
            call, 5, L.data_address(array), L.parent_of(array), array.size * array.itemsize, pe
        )
        return L.with_data(array, at)

    return impl
