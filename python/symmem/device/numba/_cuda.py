"""The device names inside @numba.cuda.jit kernels on the gpu backend: each
is an overload (numba-cuda's CUDA target) that calls a function of
symmem's device library (include/symmem/device.cuh, as the package's
one-file copy), declared with cuda.declare_device and linked into every
kernel that uses one (NVRTC
compiles the library into LTO-IR once per process, _library.py; no nvcc, no
install step). Teams and collectives are in _cuda_collectives.py.

Every call passes the device state block's address first: a compile-time
constant, read when the kernel is compiled, which must be after
symmem.init() on the gpu backend. The block never moves for the life of the
process, so a kernel compiled once runs after a finalize and a later init
too; but it must not be cached to disk (cache=True), since another process
has another address.

Scopes: put_warp / put_block (and get, put_signal, barrier_all, sync_all)
are called by every thread of the warp or block with the same arguments,
as in NVSHMEM4Py."""

from numba import cuda, types
from numba.core.errors import TypingError
from numba.cuda.core import ir_utils as cuda_ir_utils
from numba.cuda.extending import intrinsic, overload

from symmem import _symmem

from .. import _library_calls as L
from . import _atomics, _collectives, _rma, _sync  # noqa: F401  (_collectives registers)
from . import _scoped as S
from ._library import LIBRARY
from ._llvm import alias_the_array, data_address_typing, with_data_typing
from ._stubs import require_array, require_int

u64, i32, i64, u32 = types.uint64, types.int32, types.int64, types.uint32
_COPY = i32(u64, u64, u64, u64, i32)
_PUT_SIGNAL = i32(u64, u64, u64, u64, u64, u64, i32, i32)
_NO_ARGS = i32(u64)
_SIGNATURES = {
    "p": i32(u64, u64, u64, i32, i32),
    "g": u64(u64, u64, i32, i32),
    "quiet": _NO_ARGS,
    "fence": _NO_ARGS,
    "my_pe": _NO_ARGS,
    "n_pes": _NO_ARGS,
    "signal_op": i32(u64, u64, u64, i32, i32),
    "signal_wait": u64(u64, u64, i32, u64),
    "wait_until": i32(u64, u64, i32, i32, i64),
    "atomic64": u64(u64, u64, i32, u64, u64, i32),
    "atomic32": u32(u64, u64, i32, u32, u32, i32),
    "not_contiguous": i32(u64, i32, u64),
    "empty": i32(u64, i32, u64),
    "ptr": u64(u64, u64, u64, i32),
}
for _scope in ("", "_warp", "_block"):
    _SIGNATURES["put" + _scope] = _SIGNATURES["get" + _scope] = _COPY
    _SIGNATURES["put_signal" + _scope] = _PUT_SIGNAL
    _SIGNATURES["barrier_all" + _scope] = _SIGNATURES["sync_all" + _scope] = _NO_ARGS


def declare(name, signature):
    """The library's symmem_dev_<name>, callable from kernels."""
    return cuda.declare_device("symmem_dev_" + name, signature, link=[LIBRARY], abi="c")


DEVICE = {name: declare(name, sig) for name, sig in _SIGNATURES.items()}


def state_address(call):
    """The device state block's address, for a kernel compiled now."""
    address = _symmem.device_state_gpu()
    if address == 0:
        raise TypingError(
            f"{call}: kernels using symmem.device.numba compile after "
            f"symmem.init() on the gpu backend (this process has none running)"
        )
    return address


data_address = intrinsic(data_address_typing)  # _llvm's, for the CUDA target
with_data = intrinsic(with_data_typing)
alias_the_array(cuda_ir_utils.alias_func_extensions)


@intrinsic
def to_bits(typingctx, value):
    """value's bits in a uint64 (floats bit for bit, integers widened)."""
    from llvmlite import ir

    def codegen(context, builder, sig, args):
        ty = sig.args[0]
        v = args[0]
        if isinstance(ty, types.Float):
            v = builder.bitcast(v, ir.IntType(ty.bitwidth))
        elif isinstance(ty, types.Boolean):
            v = builder.zext(v, ir.IntType(8))
        width = v.type.width
        return builder.zext(v, ir.IntType(64)) if width < 64 else v

    return types.uint64(value), codegen


@intrinsic
def from_bits(typingctx, arr, bits):
    """The arr.dtype value whose bits are the low ones of bits."""
    from llvmlite import ir

    ty = arr.dtype

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(ty)
        width = ty.bitwidth
        v = builder.trunc(args[1], ir.IntType(width)) if width < 64 else args[1]
        return builder.bitcast(v, llty) if isinstance(ty, types.Float) else v

    return ty(arr, bits), codegen


def _contiguous(call, what, arr):
    require_array(call, what, arr)
    if arr.layout not in ("C", "F") and arr.ndim != 1:
        raise TypingError(f"{call}: {what} must be contiguous (layout {arr.layout})")


def _may_be_strided(arr):
    """Whether a 1-D view's contiguity is known only at run time."""
    return arr.layout not in ("C", "F")


def _pair(call, dst, src):
    _contiguous(call, "dst", dst)
    _contiguous(call, "src", src)
    if dst.dtype != src.dtype:
        raise TypingError(f"{call}: dst has dtype {dst.dtype} but src has {src.dtype}")


def views_contiguous(st, dst, src, first):
    """Fails the kernel where dst (argument number first) or src (first + 1),
    1-D views whose contiguity is known only at run time, are strided."""


@overload(views_contiguous, target="cuda")
def _views_contiguous(st, dst, src, first):
    strided_dst, strided_src = _may_be_strided(dst), _may_be_strided(src)
    fail = DEVICE["not_contiguous"]

    def impl(st, dst, src, first):
        if strided_dst and dst.strides[0] != dst.itemsize:
            fail(st, types.int32(first), types.uint64(dst.strides[0]))
        if strided_src and src.strides[0] != src.itemsize:
            fail(st, types.int32(first + 1), types.uint64(src.strides[0]))

    return impl


def first_address(st, arr, arg):
    """The address of arr's first element, which a call acts on; fails the
    kernel where arr (argument number arg) is empty and so has none."""


@overload(first_address, target="cuda")
def _first_address(st, arr, arg):
    fail = DEVICE["empty"]

    def impl(st, arr, arg):
        if arr.size == 0:
            fail(st, types.int32(arg), types.uint64(arr.itemsize))
        return data_address(arr)

    return impl


def _copy(stub, name, device_name):
    fn = DEVICE[device_name]

    @overload(stub, target="cuda")
    def typed(dst, src, pe):
        _pair(name, dst, src)
        require_int(name, "pe", pe)
        st = state_address(name)

        def impl(dst, src, pe):
            views_contiguous(st, dst, src, 0)
            n = min(dst.size, src.size) * dst.itemsize
            fn(st, data_address(dst), data_address(src), n, pe)

        return impl


def _put_signal(stub, name, device_name):
    fn = DEVICE[device_name]

    @overload(stub, target="cuda")
    def typed(dst, src, sig_addr, signal, sig_op, pe):
        _pair(name, dst, src)
        require_array(name, "sig_addr", sig_addr, ["uint64"])
        require_int(name, "pe", pe)
        st = state_address(name)

        def impl(dst, src, sig_addr, signal, sig_op, pe):
            views_contiguous(st, dst, src, 0)
            n = min(dst.size, src.size) * dst.itemsize
            fn(
                st,
                data_address(dst),
                data_address(src),
                n,
                first_address(st, sig_addr, 2),
                types.uint64(signal),
                sig_op,
                pe,
            )

        return impl


def _no_args(stub, name):
    fn = DEVICE[name]

    @overload(stub, target="cuda")
    def typed():
        st = state_address(name)
        return lambda: fn(st)


for _scope in ("", "_warp", "_block"):
    for _name in ("put", "put_nbi", "get", "get_nbi"):
        _copy(S.STUBS[_name + _scope], _name + _scope, _name.replace("_nbi", "") + _scope)
    for _name in ("put_signal", "put_signal_nbi"):
        _put_signal(S.STUBS[_name + _scope], _name + _scope, "put_signal" + _scope)
    for _name in ("barrier_all", "sync_all"):
        _no_args(S.STUBS[_name + _scope], _name + _scope)
_no_args(_rma.quiet, "quiet")
_no_args(_rma.fence, "fence")
_no_args(_sync.my_pe, "my_pe")
_no_args(_sync.n_pes, "n_pes")


@overload(_rma.p, target="cuda")
def _p(dst, value, pe):
    require_array("p", "dst", dst)
    require_int("p", "pe", pe)
    st, fn, width = state_address("p"), DEVICE["p"], dst.dtype.bitwidth // 8
    elem = dst.dtype

    def impl(dst, value, pe):
        fn(st, first_address(st, dst, 0), to_bits(elem(value)), width, pe)

    return impl


@overload(_rma.g, target="cuda")
def _g(src, pe):
    require_array("g", "src", src)
    require_int("g", "pe", pe)
    st, fn, width = state_address("g"), DEVICE["g"], src.dtype.bitwidth // 8

    def impl(src, pe):
        return from_bits(src, fn(st, first_address(st, src, 0), width, pe))

    return impl


@overload(_rma.signal_op, target="cuda")
def _signal_op(sig_addr, signal, sig_op, pe):
    require_array("signal_op", "sig_addr", sig_addr, ["uint64"])
    require_int("signal_op", "pe", pe)
    st, fn = state_address("signal_op"), DEVICE["signal_op"]

    def impl(sig_addr, signal, sig_op, pe):
        fn(st, first_address(st, sig_addr, 0), types.uint64(signal), sig_op, pe)

    return impl


@overload(_rma.signal_wait, target="cuda")
def _signal_wait(sig_addr, cmp, cmp_value):
    require_array("signal_wait", "sig_addr", sig_addr, ["uint64"])
    st, fn = state_address("signal_wait"), DEVICE["signal_wait"]

    def impl(sig_addr, cmp, cmp_value):
        return fn(st, first_address(st, sig_addr, 0), cmp, types.uint64(cmp_value))

    return impl


@overload(_rma.wait_until, target="cuda")
def _wait_until(ivar, cmp, cmp_value):
    require_array("wait_until", "ivar", ivar, list(_rma._INT_CODES))
    st, fn = state_address("wait_until"), DEVICE["wait_until"]
    code = _rma._INT_CODES[str(ivar.dtype)]

    def impl(ivar, cmp, cmp_value):
        fn(st, first_address(st, ivar, 0), code, cmp, types.int64(cmp_value))

    return impl


# ---- atomics: one device function per width; the op by number ----

# the library's op for each atomic and for a float's add, what fetches and what
# takes floats: the vocabulary's (_library_calls, from _symmem's tables)
_OPS, _FLOAT_ADD = L.ATOMIC_OPS, L.FLOAT_ADD
_RETURNS, _FLOAT_OK = L.ATOMICS_RETURNING, L.ATOMICS_FLOAT


def _atomic_device(name, dest, pe):
    allowed = _atomics._INTS + (["float32", "float64"] if name in _FLOAT_OK else [])
    require_array(name, "dest", dest, allowed)
    require_int(name, "pe", pe)
    width = dest.dtype.bitwidth // 8
    return DEVICE["atomic64" if width == 8 else "atomic32"], (u64 if width == 8 else u32)


def _value_atomic(name):
    fetch = name in _RETURNS

    @overload(getattr(_atomics, name), target="cuda")
    def typed(dest, value, pe):
        fn, word = _atomic_device(name, dest, pe)
        st, elem = state_address(name), dest.dtype
        op = _OPS[name]
        if op == _OPS["atomic_add"] and isinstance(elem, types.Float):
            op = _FLOAT_ADD

        def impl(dest, value, pe):
            old = fn(st, first_address(st, dest, 0), op, word(to_bits(elem(value))), word(0), pe)
            return from_bits(dest, types.uint64(old))

        def impl_no_fetch(dest, value, pe):
            fn(st, first_address(st, dest, 0), op, word(to_bits(elem(value))), word(0), pe)

        return impl if fetch else impl_no_fetch


def _pe_only_atomic(name):
    op, fetch = _OPS[name], name in _RETURNS
    one = 0 if name == "atomic_fetch" else 1  # inc adds 1

    @overload(getattr(_atomics, name), target="cuda")
    def typed(dest, pe):
        fn, word = _atomic_device(name, dest, pe)
        st = state_address(name)

        def impl(dest, pe):
            old = fn(st, first_address(st, dest, 0), op, word(one), word(0), pe)
            return from_bits(dest, types.uint64(old))

        def impl_no_fetch(dest, pe):
            fn(st, first_address(st, dest, 0), op, word(one), word(0), pe)

        return impl if fetch else impl_no_fetch


@overload(_atomics.atomic_compare_swap, target="cuda")
def _compare_swap(dest, cond, value, pe):
    fn, word = _atomic_device("atomic_compare_swap", dest, pe)
    st, elem = state_address("atomic_compare_swap"), dest.dtype
    op = _OPS["atomic_compare_swap"]

    def impl(dest, cond, value, pe):
        old = fn(
            st,
            first_address(st, dest, 0),
            op,
            word(to_bits(elem(value))),
            word(to_bits(elem(cond))),
            pe,
        )
        return from_bits(dest, types.uint64(old))

    return impl


for _name, _operands in _symmem.ATOMIC_OPS:  # compare_swap (cond, value): above
    if _operands == ("value",):
        _value_atomic(_name)
    elif not _operands:
        _pe_only_atomic(_name)


@overload(_rma.get_peer_array, target="cuda", inline="always")
def _get_peer_array(array, pe):
    _contiguous("get_peer_array", "array", array)
    require_int("get_peer_array", "pe", pe)
    st, fn = state_address("get_peer_array"), DEVICE["ptr"]

    def impl(array, pe):
        at = fn(st, data_address(array), types.uint64(array.size * array.itemsize), pe)
        return with_data(array, at)

    return impl
