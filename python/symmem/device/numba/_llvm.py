"""The LLVM-level pieces the device functions are built from (numba
@intrinsic with llvmlite IR): loads and stores at an address, atomics with an
explicit ordering, fences, memmove, an array's data address, and calls
into the C engine through the function addresses the extension exports.

Addresses travel as uint64 and become pointers only here. Orderings are
LLVM's: "acquire", "release", "seq_cst"; each user says which store or load
its ordering pairs with."""

from llvmlite import ir
from numba import types
from numba.core import cgutils, ir_utils
from numba.core.errors import TypingError
from numba.extending import intrinsic

from symmem import _symmem

_FUNCTIONS = _symmem.DEVICE_FUNCTIONS  # name -> address, fixed for the process


def _ptr(builder, addr, llty):
    return builder.inttoptr(addr, llty.as_pointer())


def _as_u64(context, builder, ty, value):
    return context.cast(builder, value, ty, types.uint64)


def _int_twin(context, ty):
    """The integer type of ty's width (cmpxchg and xchg want integers)."""
    return ir.IntType(
        context.get_data_type(ty).width
        if isinstance(ty, types.Integer)
        else 64
        if ty.bitwidth == 64
        else 32
    )


def _pointer_field(field, name, doc):
    """The typing of an intrinsic giving the pointer field of an array's
    struct (numba's: meminfo, parent, nitems, itemsize, data, shape,
    strides) as uint64."""

    def typing(typingctx, arr):
        if not isinstance(arr, types.Array):
            raise TypingError(f"expected an array, got {arr}")

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            return builder.ptrtoint(getattr(ary, field), ir.IntType(64))

        return types.uint64(arr), codegen

    typing.__name__ = typing.__qualname__ = name
    typing.__doc__ = doc
    return typing


data_address_typing = _pointer_field(
    "data",
    "data_address_typing",
    "The address of arr's first element (the intrinsic's "
    "body, which _cuda.py registers for the CUDA target too).",
)
data_address = intrinsic(data_address_typing)


def with_data_typing(typingctx, arr, addr):
    """arr (its shape, strides and owner) over the data at addr instead:
    get_peer_array's view of a peer's copy (the body, for both targets)."""
    if not isinstance(arr, types.Array):
        raise TypingError(f"expected an array, got {arr}")

    def codegen(context, builder, sig, args):
        from numba.core.imputils import impl_ret_borrowed

        ary = context.make_array(sig.args[0])(context, builder, args[0])
        view = context.make_array(sig.return_type)(context, builder)
        for field in ("meminfo", "parent", "nitems", "itemsize", "shape", "strides"):
            setattr(view, field, getattr(ary, field))
        at = context.cast(builder, args[1], sig.args[1], types.uint64)
        view.data = builder.inttoptr(at, ary.data.type)
        return impl_ret_borrowed(context, builder, sig.return_type, view._getvalue())

    return arr(arr, addr), codegen


with_data = intrinsic(with_data_typing)


parent_of = intrinsic(
    _pointer_field(
        "parent",
        "parent_of",
        "The address of the Python object numba unboxed arr from (the "
        "array's parent: the NumPy array the caller passed, which every view numba makes of it "
        "keeps); 0 for an array made inside njit code.",
    )
)


def alias_the_array(registry):
    """Tells numba's dead-code pass (through registry, its ir_utils'
    alias_func_extensions) that get_peer_array's result aliases its
    argument: otherwise a store into a peer's array that nothing reads
    afterwards is dropped as a store into a fresh local array."""

    def first_argument(lhs, args, alias_map, arg_aliases):
        alias_map.setdefault(lhs, set()).add(args[0].name)
        alias_map.setdefault(args[0].name, set()).add(lhs)
        if args[0].name in arg_aliases:
            arg_aliases.add(lhs)

    registry[("with_data_typing", __name__)] = first_argument
    registry[("get_peer_array", "symmem.device.numba._stubs")] = first_argument


alias_the_array(ir_utils.alias_func_extensions)


def _load_intrinsic(ordering):
    @intrinsic
    def load(typingctx, arr, addr):
        """arr.dtype at addr (arr only gives the type)."""
        ty = arr.dtype

        def codegen(context, builder, sig, args):
            llty = context.get_data_type(ty)
            ptr = _ptr(builder, _as_u64(context, builder, sig.args[1], args[1]), llty)
            if ordering is None:
                return builder.load(ptr)
            twin = _int_twin(context, ty)
            raw = builder.load_atomic(
                builder.bitcast(ptr, twin.as_pointer()), ordering, align=twin.width // 8
            )
            return builder.bitcast(raw, llty)

        return ty(arr, addr), codegen

    return load


def _store_intrinsic(ordering):
    @intrinsic
    def store(typingctx, arr, addr, value):
        """value, converted to arr.dtype, stored at addr."""
        ty = arr.dtype

        def codegen(context, builder, sig, args):
            llty = context.get_data_type(ty)
            val = context.cast(builder, args[2], sig.args[2], ty)
            ptr = _ptr(builder, _as_u64(context, builder, sig.args[1], args[1]), llty)
            if ordering is None:
                builder.store(val, ptr)
            else:
                twin = _int_twin(context, ty)
                builder.store_atomic(
                    builder.bitcast(val, twin),
                    builder.bitcast(ptr, twin.as_pointer()),
                    ordering,
                    align=twin.width // 8,
                )
            return context.get_dummy_value()

        return types.none(arr, addr, value), codegen

    return store


load = _load_intrinsic(None)
load_acquire = _load_intrinsic("acquire")
load_seq_cst = _load_intrinsic("seq_cst")
store = _store_intrinsic(None)
store_release = _store_intrinsic("release")
store_seq_cst = _store_intrinsic("seq_cst")


def _plain_load(bits, result_type, doc):
    @intrinsic
    def plain_load(typingctx, addr):
        def codegen(context, builder, sig, args):
            ptr = _ptr(builder, _as_u64(context, builder, sig.args[0], args[0]), ir.IntType(bits))
            return builder.load(ptr)

        return result_type(addr), codegen

    plain_load.__doc__ = doc
    return plain_load


load_u64 = _plain_load(64, types.uint64, "A plain uint64 load (the state block's fields).")
load_i32 = _plain_load(32, types.int32, "A plain int32 load.")


def rmw_intrinsic(op, ordering="seq_cst"):
    """atomicrmw op (add, sub, and, or, xor, xchg; fadd for floats) on arr.dtype
    at addr; returns the old value."""

    @intrinsic
    def rmw(typingctx, arr, addr, value):
        ty = arr.dtype

        def codegen(context, builder, sig, args):
            llty = context.get_data_type(ty)
            val = context.cast(builder, args[2], sig.args[2], ty)
            ptr = _ptr(builder, _as_u64(context, builder, sig.args[1], args[1]), llty)
            if isinstance(ty, types.Float) and op == "xchg":
                twin = _int_twin(context, ty)
                old = builder.atomic_rmw(
                    "xchg",
                    builder.bitcast(ptr, twin.as_pointer()),
                    builder.bitcast(val, twin),
                    ordering,
                )
                return builder.bitcast(old, llty)
            name = "fadd" if isinstance(ty, types.Float) else op
            return builder.atomic_rmw(name, ptr, val, ordering)

        return ty(arr, addr, value), codegen

    return rmw


@intrinsic
def compare_swap(typingctx, arr, addr, cond, value):
    """cmpxchg seq_cst: value where *addr == cond; returns the old value."""
    ty = arr.dtype

    def codegen(context, builder, sig, args):
        llty = context.get_data_type(ty)
        cnd = context.cast(builder, args[2], sig.args[2], ty)
        val = context.cast(builder, args[3], sig.args[3], ty)
        ptr = _ptr(builder, _as_u64(context, builder, sig.args[1], args[1]), llty)
        pair = builder.cmpxchg(ptr, cnd, val, "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)

    return ty(arr, addr, cond, value), codegen


def _fence_intrinsic(ordering):
    @intrinsic
    def fence(typingctx):
        def codegen(context, builder, sig, args):
            builder.fence(ordering)
            return context.get_dummy_value()

        return types.none(), codegen

    return fence


fence_acquire = _fence_intrinsic("acquire")
fence_release = _fence_intrinsic("release")
fence_seq_cst = _fence_intrinsic("seq_cst")


@intrinsic
def memmove(typingctx, dst, src, nbytes):
    """memmove(dst, src, nbytes), addresses as integers (dst and src may be
    one and the same buffer when a PE puts to itself)."""

    def codegen(context, builder, sig, args):
        i8p = ir.IntType(8).as_pointer()
        d = builder.inttoptr(_as_u64(context, builder, sig.args[0], args[0]), i8p)
        s = builder.inttoptr(_as_u64(context, builder, sig.args[1], args[1]), i8p)
        n = _as_u64(context, builder, sig.args[2], args[2])
        cgutils.raw_memmove(builder, d, s, n, 1)
        return context.get_dummy_value()

    return types.none(dst, src, nbytes), codegen


# The C engine's entry points (src/extension/device.c): name -> (return type,
# argument types). Each returns a status (0: done) except wake and freed.
_C_SIGNATURES = {
    "signal_wait": (types.int32, (types.uint64, types.int32, types.uint64)),
    "wait_until": (types.int32, (types.uint64, types.int32, types.int32, types.int64)),
    "barrier_all": (types.int32, ()),
    "sync_all": (types.int32, ()),
    "wake": (types.none, (types.int32,)),
    "barrier": (types.int32, (types.int32,)),
    "sync": (types.int32, (types.int32,)),
    "reduce": (
        types.int32,
        (types.int32, types.uint64, types.uint64, types.uint64, types.int32, types.int32),
    ),
    "reducescatter": (
        types.int32,
        (types.int32, types.uint64, types.uint64, types.uint64, types.int32, types.int32),
    ),
    "fcollect": (types.int32, (types.int32, types.uint64, types.uint64, types.uint64)),
    "alltoall": (types.int32, (types.int32, types.uint64, types.uint64, types.uint64)),
    "broadcast": (
        types.int32,
        (types.int32, types.uint64, types.uint64, types.uint64, types.int32),
    ),
    "team_my_pe": (types.int32, (types.int32,)),
    "team_n_pes": (types.int32, (types.int32,)),
    "freed": (types.int32, (types.uint64, types.uint64)),  # 0, 1 or 2, not a status
}


def _c_codegen(name):
    restype, argtypes = _C_SIGNATURES[name]
    address = _FUNCTIONS[name]

    def codegen(context, builder, sig, llargs):
        values = [
            context.cast(builder, v, t, want) for v, t, want in zip(llargs, sig.args, argtypes)
        ]
        llret = ir.VoidType() if restype is types.none else context.get_value_type(restype)
        fnty = ir.FunctionType(llret, [context.get_value_type(t) for t in argtypes])
        # A constant address: the extension's function, fixed for the process.
        fn = builder.inttoptr(ir.Constant(ir.IntType(64), address), fnty.as_pointer())
        result = builder.call(fn, values)
        return context.get_dummy_value() if restype is types.none else result

    return restype, codegen


def _c_intrinsic(name):
    """A call of the C engine's name (numba needs a fixed arity per intrinsic)."""
    restype, codegen = _c_codegen(name)
    arity = len(_C_SIGNATURES[name][1])
    if arity == 0:

        def call(typingctx):
            return restype(), codegen
    elif arity == 1:

        def call(typingctx, a):
            return restype(a), codegen
    elif arity == 2:

        def call(typingctx, a, b):
            return restype(a, b), codegen
    elif arity == 3:

        def call(typingctx, a, b, c):
            return restype(a, b, c), codegen
    elif arity == 4:

        def call(typingctx, a, b, c, d):
            return restype(a, b, c, d), codegen
    elif arity == 5:

        def call(typingctx, a, b, c, d, e):
            return restype(a, b, c, d, e), codegen
    else:

        def call(typingctx, a, b, c, d, e, f):
            return restype(a, b, c, d, e, f), codegen

    return intrinsic(call)


c_signal_wait = _c_intrinsic("signal_wait")
c_wait_until = _c_intrinsic("wait_until")
c_barrier_all = _c_intrinsic("barrier_all")
c_sync_all = _c_intrinsic("sync_all")
c_wake = _c_intrinsic("wake")
c_barrier = _c_intrinsic("barrier")
c_sync = _c_intrinsic("sync")
c_reduce = _c_intrinsic("reduce")
c_reducescatter = _c_intrinsic("reducescatter")
c_fcollect = _c_intrinsic("fcollect")
c_alltoall = _c_intrinsic("alltoall")
c_broadcast = _c_intrinsic("broadcast")
c_team_my_pe = _c_intrinsic("team_my_pe")
c_team_n_pes = _c_intrinsic("team_n_pes")
c_freed = _c_intrinsic("freed")
