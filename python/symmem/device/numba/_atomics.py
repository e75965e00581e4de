"""The 14 atomics in njit code on the cpu backend: LLVM atomics on the
target's first element through the peer mapping. Every one is seq_cst
(stronger than NVSHMEM asks): a compare_swap lock, or a counter read after
atomic adds, works without an extra fence; on x86 they cost the same as
weaker orders. As in the host calls: int32, int64, uint32 and uint64, and
float32 and float64 for fetch, set, swap, add and fetch_add. Every atomic
but fetch rings the target's doorbell (a waiter may watch the element)."""

from numba.core.errors import TypingError
from numba.extending import register_jitable

from .._library_calls import ATOMIC_INTS, ATOMICS_FLOAT
from . import _checks as C
from . import _errors as E
from . import _llvm as L
from ._stubs import cpu_overload, require_array, require_int, stub

_INTS = list(ATOMIC_INTS)
_FLOAT_OK = ATOMICS_FLOAT  # the vocabulary's: which atomics take float32 and float64


def _check(name, dest, pe):
    require_array(name, "dest", dest, writes=name != "atomic_fetch")
    require_int(name, "pe", pe)
    allowed = _INTS + (["float32", "float64"] if name in _FLOAT_OK else [])
    if str(dest.dtype) not in allowed:
        raise TypingError(f"{name}: dest has dtype {dest.dtype}; {name} takes {', '.join(allowed)}")


@register_jitable
def _target(call, dest, pe):
    return C.translate_first(call, 4, dest, pe)


_RMW = {op: L.rmw_intrinsic(op) for op in ("add", "and", "or", "xor", "xchg")}


def _value_atomic(name, op, fetch):
    """name(dest, value, pe): atomicrmw op; returns the old value if fetch."""
    function = stub(name, "dest, value, pe")
    call = E.CALL[name]
    rmw = _RMW[op]

    @cpu_overload(function)
    def typed(dest, value, pe):
        _check(name, dest, pe)

        def impl(dest, value, pe):
            old = rmw(dest, _target(call, dest, pe), value)
            C.wake(pe)
            return old

        def impl_no_fetch(dest, value, pe):
            rmw(dest, _target(call, dest, pe), value)
            C.wake(pe)

        return impl if fetch else impl_no_fetch

    return function


def _inc_atomic(name, fetch):
    function = stub(name, "dest, pe")
    call = E.CALL[name]
    add = _RMW["add"]

    @cpu_overload(function)
    def typed(dest, pe):
        _check(name, dest, pe)

        def impl(dest, pe):
            old = add(dest, _target(call, dest, pe), 1)
            C.wake(pe)
            return old

        def impl_no_fetch(dest, pe):
            add(dest, _target(call, dest, pe), 1)
            C.wake(pe)

        return impl if fetch else impl_no_fetch

    return function


atomic_add = _value_atomic("atomic_add", "add", False)
atomic_fetch_add = _value_atomic("atomic_fetch_add", "add", True)
atomic_and = _value_atomic("atomic_and", "and", False)
atomic_fetch_and = _value_atomic("atomic_fetch_and", "and", True)
atomic_or = _value_atomic("atomic_or", "or", False)
atomic_fetch_or = _value_atomic("atomic_fetch_or", "or", True)
atomic_xor = _value_atomic("atomic_xor", "xor", False)
atomic_fetch_xor = _value_atomic("atomic_fetch_xor", "xor", True)
atomic_swap = _value_atomic("atomic_swap", "xchg", True)
atomic_inc = _inc_atomic("atomic_inc", False)
atomic_fetch_inc = _inc_atomic("atomic_fetch_inc", True)
atomic_fetch = stub("atomic_fetch", "dest, pe")
atomic_set = stub("atomic_set", "dest, value, pe")
atomic_compare_swap = stub("atomic_compare_swap", "dest, cond, value, pe")


@cpu_overload(atomic_fetch)
def _fetch(dest, pe):
    _check("atomic_fetch", dest, pe)
    call = E.CALL["atomic_fetch"]

    def impl(dest, pe):
        return L.load_seq_cst(dest, _target(call, dest, pe))

    return impl


@cpu_overload(atomic_set)
def _set(dest, value, pe):
    _check("atomic_set", dest, pe)
    call = E.CALL["atomic_set"]

    def impl(dest, value, pe):
        L.store_seq_cst(dest, _target(call, dest, pe), value)
        C.wake(pe)

    return impl


@cpu_overload(atomic_compare_swap)
def _compare_swap(dest, cond, value, pe):
    _check("atomic_compare_swap", dest, pe)
    call = E.CALL["atomic_compare_swap"]

    def impl(dest, cond, value, pe):
        old = L.compare_swap(dest, _target(call, dest, pe), cond, value)
        C.wake(pe)
        return old

    return impl
