"""symmem.device.numba_cuda_mlir's one-sided calls, queries, waits, syncs
of all PEs and atomics: the stubs kernels call (each with its docstring)
and their numba-cuda-mlir overloads, which call the device library
(_library.py) with the device state block's address first. Names, argument
orders and sizes are NVSHMEM4Py's, as in symmem.device.numba: counts are
min(dst.size, src.size) elements; signals uint64 arrays (first element);
atomics act on dest's first element."""

from numba_cuda_mlir import types
from numba_cuda_mlir.extending import overload, typing_registry
from numba_cuda_mlir.numba_cuda.core.errors import TypingError

from symmem.device import _library_calls as L
from symmem.device._dsl_docs import build

from ._bits import from_bits, to_bits
from ._address import data_address
from ._library import DEVICE, require_array, require_int, require_pair, state_address, width

u64, i32, i64, u32 = types.uint64, types.int32, types.int64, types.uint32
STUBS = {}


def stub(name, params, returns=None, waits=False):
    """The Python function kernels call as name; numba-cuda-mlir replaces
    each call with its overload."""

    def device_function(*args):
        raise TypeError(
            f"{name}: a device call of symmem.device.numba_cuda_mlir, for "
            "numba-cuda-mlir @cuda.jit kernels"
        )

    device_function.__name__ = device_function.__qualname__ = name
    device_function.__doc__ = build("mlir", name, params, returns=returns, waits=waits)
    import inspect

    device_function.__signature__ = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
    )
    STUBS[name] = device_function
    return device_function


def register(name):
    return overload(STUBS[name], inline="always", typing_registry=typing_registry)


def _nbytes(dst, src):
    """min(dst.size, src.size) elements in bytes, in the kernel."""


@overload(_nbytes, inline="always", typing_registry=typing_registry)
def _nbytes_typed(dst, src):
    w = width(dst)

    def impl(dst, src):
        n = u64(dst.size)
        m = u64(src.size)
        if m < n:
            n = m
        return n * u64(w)

    return impl


def _copy(name, device_name):
    stub(name, ["dst", "src", "pe"])
    fn = DEVICE[device_name]

    @register(name)
    def typed(dst, src, pe):
        require_pair(name, dst, src)
        require_int(name, "pe", pe)
        st = state_address(name)

        def impl(dst, src, pe):
            fn(u64(st), data_address(dst), data_address(src), _nbytes(dst, src), i32(pe))

        return impl


def _put_signal(name, device_name):
    stub(name, ["dst", "src", "sig_addr", "signal", "sig_op", "pe"])
    fn = DEVICE[device_name]

    @register(name)
    def typed(dst, src, sig_addr, signal, sig_op, pe):
        require_pair(name, dst, src)
        require_array(name, "sig_addr", sig_addr, ["uint64"])
        require_int(name, "pe", pe)
        st = state_address(name)

        def impl(dst, src, sig_addr, signal, sig_op, pe):
            fn(
                u64(st),
                data_address(dst),
                data_address(src),
                _nbytes(dst, src),
                data_address(sig_addr),
                u64(signal),
                i32(sig_op),
                i32(pe),
            )

        return impl


def _no_args(name, returns=None, waits=False):
    stub(name, [], returns=returns, waits=waits)
    fn = DEVICE[name]

    @register(name)
    def typed():
        st = state_address(name)
        return lambda: fn(u64(st))


for _scope in L.SCOPES:
    for _name in ("put", "put_nbi", "get", "get_nbi"):
        _copy(_name + _scope, _name.replace("_nbi", "") + _scope)
    for _name in ("put_signal", "put_signal_nbi"):
        _put_signal(_name + _scope, "put_signal" + _scope)
    for _name in ("barrier_all", "sync_all"):
        _no_args(_name + _scope, waits=True)
_no_args("quiet")
_no_args("fence")
_no_args("my_pe", returns="int32")
_no_args("n_pes", returns="int32")

stub("p", ["dst", "value", "pe"])
stub("g", ["src", "pe"], returns="the element, of src's dtype.")
stub("signal_op", ["sig_addr", "signal", "sig_op", "pe"])
stub(
    "signal_wait",
    ["sig_addr", "cmp", "cmp_value"],
    returns="the signal's value (uint64).",
    waits=True,
)
stub("wait_until", ["ivar", "cmp", "cmp_value"], waits=True)


@register("p")
def _p(dst, value, pe):
    require_array("p", "dst", dst)
    require_int("p", "pe", pe)
    st, fn, w = state_address("p"), DEVICE["p"], width(dst)

    def impl(dst, value, pe):
        fn(u64(st), data_address(dst), to_bits(dst, value), i32(w), i32(pe))

    return impl


@register("g")
def _g(src, pe):
    require_array("g", "src", src)
    require_int("g", "pe", pe)
    st, fn, w = state_address("g"), DEVICE["g"], width(src)

    def impl(src, pe):
        return from_bits(src, fn(u64(st), data_address(src), i32(w), i32(pe)))

    return impl


@register("signal_op")
def _signal_op(sig_addr, signal, sig_op, pe):
    require_array("signal_op", "sig_addr", sig_addr, ["uint64"])
    require_int("signal_op", "pe", pe)
    st, fn = state_address("signal_op"), DEVICE["signal_op"]

    def impl(sig_addr, signal, sig_op, pe):
        fn(u64(st), data_address(sig_addr), u64(signal), i32(sig_op), i32(pe))

    return impl


@register("signal_wait")
def _signal_wait(sig_addr, cmp, cmp_value):
    require_array("signal_wait", "sig_addr", sig_addr, ["uint64"])
    st, fn = state_address("signal_wait"), DEVICE["signal_wait"]

    def impl(sig_addr, cmp, cmp_value):
        return fn(u64(st), data_address(sig_addr), i32(cmp), u64(cmp_value))

    return impl


_INTS = [n for n in L.DTYPE_CODES if n.startswith(("int", "uint"))]


@register("wait_until")
def _wait_until(ivar, cmp, cmp_value):
    require_array("wait_until", "ivar", ivar, _INTS)
    st, fn = state_address("wait_until"), DEVICE["wait_until"]
    code = L.DTYPE_CODES[str(ivar.dtype)]

    def impl(ivar, cmp, cmp_value):
        fn(u64(st), data_address(ivar), i32(code), i32(cmp), i64(cmp_value))

    return impl


def _atomic(name):
    value_args = L.ATOMIC_ARGS[name]
    returns = name in L.ATOMICS_RETURNING
    stub(name, ["dest", *value_args, "pe"], returns="the element's old value." if returns else None)

    def checked(dest, pe):
        allowed = list(L.ATOMIC_INTS) + (["float32", "float64"] if name in L.ATOMICS_FLOAT else [])
        require_array(name, "dest", dest, allowed)
        require_int(name, "pe", pe)
        op = L.ATOMIC_OPS[name]
        if op == L.ATOMIC_OPS["atomic_add"] and isinstance(dest.dtype, types.Float):
            op = L.FLOAT_ADD
        wide = width(dest) == 8
        return (
            state_address(name),
            DEVICE["atomic64" if wide else "atomic32"],
            op,
            u64 if wide else u32,
        )

    one = 1 if name in ("atomic_inc", "atomic_fetch_inc") else 0
    if value_args == ():

        @register(name)
        def typed(dest, pe):
            st, fn, op, word = checked(dest, pe)

            def impl(dest, pe):
                old = fn(u64(st), data_address(dest), i32(op), word(one), word(0), i32(pe))
                return from_bits(dest, u64(old))

            return impl
    elif value_args == ("value",):

        @register(name)
        def typed(dest, value, pe):
            st, fn, op, word = checked(dest, pe)

            def impl(dest, value, pe):
                old = fn(
                    u64(st),
                    data_address(dest),
                    i32(op),
                    word(to_bits(dest, value)),
                    word(0),
                    i32(pe),
                )
                return from_bits(dest, u64(old))

            return impl
    else:

        @register(name)
        def typed(dest, cond, value, pe):
            st, fn, op, word = checked(dest, pe)

            def impl(dest, cond, value, pe):
                old = fn(
                    u64(st),
                    data_address(dest),
                    i32(op),
                    word(to_bits(dest, value)),
                    word(to_bits(dest, cond)),
                    i32(pe),
                )
                return from_bits(dest, u64(old))

            return impl


for _name in L.ATOMIC_ARGS:
    _atomic(_name)

__all__ = ["STUBS", "TypingError"]
