"""symmem.bindings.device.numba's functions in @numba.cuda.jit kernels: for
every call of the table, a numba-cuda overload that, when a kernel compiles,
checks each argument against the call's parameter (_checks.py) and compiles the
call's recipe (_recipes.py) with these names bound: A, STORE, BITS, FROM
(intrinsics and overloads below), U64 ... I8 (numba's types), ST (the
device state block's address, as symmem.device.numba's calls embed it) and
dev_<name>, the device library's functions declared from
device/_library_calls.py and linked as symmem.device.numba links them
(LTO-IR, _library.py). A call the table refuses fails the compile with a
TypingError naming it and why."""

from llvmlite import ir
from numba import types
from numba.core.errors import TypingError
from numba.cuda import types as cuda_types
from numba.cuda.extending import intrinsic, overload

from symmem.device import _library_calls as L
from symmem.device.numba import _cuda

from ._checks import typing

_I64 = ir.IntType(64)
ELEMENT = {
    "int8": types.int8,
    "int16": types.int16,
    "int32": types.int32,
    "int64": types.int64,
    "uint8": types.uint8,
    "uint16": types.uint16,
    "uint32": types.uint32,
    "uint64": types.uint64,
    "float16": types.float16,
    "bfloat16": cuda_types.bfloat16,
    "float32": types.float32,
    "float64": types.float64,
}
_NAMES = {str(t): name for name, t in ELEMENT.items()}  # bfloat16 is __nv_bfloat16
_LIBRARY_TYPES = {"u64": types.uint64, "i64": types.int64, "i32": types.int32, "u32": types.uint32}
LIBRARY = {
    "dev_" + name: _cuda.declare(name, _LIBRARY_TYPES[ret](*[_LIBRARY_TYPES[p] for p in params]))
    for name, (ret, *params) in L.SIGNATURES.items()
}


# ---- intrinsics: pointers as addresses, and values as their bits ----


@intrinsic
def pointer_address(typingctx, pointer):
    """A pointer's address, as uint64."""

    def codegen(context, builder, sig, args):
        return builder.ptrtoint(args[0], _I64)

    return types.uint64(pointer), codegen


@intrinsic
def store_at(typingctx, address, index, value):
    """value stored at element index of the address (value's type)."""

    def codegen(context, builder, sig, args):
        llty = context.get_value_type(sig.args[2])
        at = context.cast(builder, args[0], sig.args[0], types.uint64)
        pointer = builder.inttoptr(at, llty.as_pointer())
        index = context.cast(builder, args[1], sig.args[1], types.int64)
        builder.store(args[2], builder.gep(pointer, [index]))
        return context.get_dummy_value()

    return types.void(address, index, value), codegen


def _bfloat16_bits(builder, f):
    """The bfloat16 nearest the float32 f (ties to even; NaN stays NaN), as i16."""
    i32 = ir.IntType(32)
    b = builder.bitcast(f, i32)
    odd = builder.and_(builder.lshr(b, ir.Constant(i32, 16)), ir.Constant(i32, 1))
    rounded = builder.add(b, builder.add(ir.Constant(i32, 0x7FFF), odd))
    nan = builder.fcmp_unordered("uno", f, f)
    b = builder.select(nan, builder.or_(b, ir.Constant(i32, 0x400000)), rounded)
    return builder.trunc(builder.lshr(b, ir.Constant(i32, 16)), ir.IntType(16))


def _convert(context, builder, v, fromty, element):
    """v (of type fromty) as element's bits (an int of its width). The 16-bit
    floats go through float32, as numba casts to them only from floats."""
    if fromty == element:
        pass
    elif element == cuda_types.bfloat16:
        return _bfloat16_bits(builder, context.cast(builder, v, fromty, types.float32))
    elif element == types.float16:
        v = context.cast(builder, v, fromty, types.float32)
        v = builder.fptrunc(v, ir.HalfType())
    else:
        v = context.cast(builder, v, fromty, element)
    return v if isinstance(v.type, ir.IntType) else builder.bitcast(v, ir.IntType(element.bitwidth))


def _bits_of(element):
    """An intrinsic: a value converted to element, its bits in a uint64."""

    @intrinsic
    def bits(typingctx, value):
        def codegen(context, builder, sig, args):
            v = _convert(context, builder, args[0], sig.args[0], element)
            return builder.zext(v, _I64) if element.bitwidth < 64 else v

        return types.uint64(value), codegen

    return bits


def _from_bits_of(element):
    """An intrinsic: the element whose bits are the low ones of a word."""

    @intrinsic
    def from_bits(typingctx, word):
        def codegen(context, builder, sig, args):
            v, width = args[0], element.bitwidth
            if v.type.width > width:
                v = builder.trunc(v, ir.IntType(width))
            elif v.type.width < width:
                v = builder.zext(v, ir.IntType(width))
            llty = context.get_value_type(element)
            return v if isinstance(llty, ir.IntType) else builder.bitcast(v, llty)

        return element(word), codegen

    return from_bits


BITS = {dtype: _bits_of(t) for dtype, t in ELEMENT.items()}
FROM = {dtype: _from_bits_of(t) for dtype, t in ELEMENT.items()}


def address(x):
    """The address of a pointer, an array's first element, or an int."""


@overload(address, target="cuda")
def _address(x):
    if isinstance(x, types.Array):
        return lambda x: _cuda.data_address(x)
    if isinstance(x, (types.CPointer, types.RawPointer)):
        return lambda x: pointer_address(x)
    if isinstance(x, types.Integer):
        return lambda x: types.uint64(x)


def store(p, i, v):
    """v into element i of a pointer, an array, or the memory at an address."""


@overload(store, target="cuda")
def _store(p, i, v):
    if isinstance(p, (types.Array, types.CPointer)):

        def impl(p, i, v):
            p[i] = v

        return impl
    if isinstance(p, types.Integer):
        return lambda p, i, v: store_at(p, i, v)


_BASE = {
    "A": address,
    "STORE": store,
    "U64": types.uint64,
    "U32": types.uint32,
    "I64": types.int64,
    "I32": types.int32,
    "I8": types.int8,
    **LIBRARY,
}


# ---- the checks when a kernel compiles ----


def _pointee(arg):
    """What a pointer parameter's argument points to: a dtype name, "void",
    "address" (an int), or None where it is no pointer."""
    if isinstance(arg, (types.Array, types.CPointer)):
        return _NAMES.get(str(arg.dtype), str(arg.dtype))
    if isinstance(arg, types.RawPointer):
        return "void"
    if isinstance(arg, types.Integer):
        return "address"
    return None


def _is_number(arg):
    numbers = (types.Number, types.Boolean, types.IntEnumMember, type(cuda_types.bfloat16))
    return isinstance(arg, numbers)


def _impl(call, dtype):
    """The call's recipe compiled here: impl, a function of its parameters."""
    names = dict(_BASE, ST=_cuda.state_address(call.name))
    if dtype:
        names.update(BITS=BITS[dtype], FROM=FROM[dtype])
    return call.compile(dtype, names)


def register(stubs):
    """Registers every stub's overload for @numba.cuda.jit kernels."""
    for stub in stubs.values():
        overload(stub, target="cuda")(typing(stub, TypingError, _impl, _pointee, _is_number))
