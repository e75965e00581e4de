"""symmem.bindings.device.numba_cuda_mlir's functions in numba-cuda-mlir
kernels: for every call of the table, an overload that checks the arguments
when a kernel compiles (_checks.py) and compiles the call's recipe
(_recipes.py) with numba-cuda-mlir's names bound: A (an array's address by
symmem.device.numba_cuda_mlir's lowering, a pointer's by the one below),
STORE, BITS and FROM (a value's bits through a one-element local array, as
that module's p and g move them), the integer types, ST, and dev_<name>,
the device library's functions as symmem.device.numba_cuda_mlir declares
and links them. A call the table refuses fails the compile with a
TypingError naming it and why."""

from numba_cuda_mlir import cuda, types
from numba_cuda_mlir._mlir.dialects import llvm
from numba_cuda_mlir._mlir.extras import types as T
from numba_cuda_mlir.extending import (
    lower_builtin,
    overload,
    refresh_registries,
    type_callable,
    typing_registry,
)
from numba_cuda_mlir.numba_cuda.core.errors import TypingError
from numba_cuda_mlir.numba_cuda.types import bfloat16

from symmem.device.numba_cuda_mlir import _library
from symmem.device.numba_cuda_mlir._address import data_address

from ._checks import typing

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
    "bfloat16": bfloat16,
    "float32": types.float32,
    "float64": types.float64,
}
_NAMES = {str(t): name for name, t in ELEMENT.items()}
_UNSIGNED = {8: types.uint8, 16: types.uint16, 32: types.uint32, 64: types.uint64}


# ---- a pointer's address and an address as a pointer: lowerings ----


def pointer_address(pointer):
    """A pointer's address (uint64), in kernels."""
    raise TypeError("pointer_address: for numba-cuda-mlir kernels")


@type_callable(pointer_address)
def _pointer_address_typer(context):
    def typer(pointer):
        return types.uint64 if isinstance(pointer, types.CPointer) else None

    return typer


@lower_builtin(pointer_address, types.CPointer)
def _pointer_address(builder, target, args, kwargs):
    (pointer,) = builder.load_vars(args)
    builder.store_var(target, llvm.ptrtoint(res=T.i64(), arg=pointer))


def as_pointer(address, like):
    """The address as a pointer of like's type (a pointer; an array's: to its
    element), in kernels."""
    raise TypeError("as_pointer: for numba-cuda-mlir kernels")


@type_callable(as_pointer)
def _as_pointer_typer(context):
    def typer(address, like):
        if isinstance(like, types.Array):
            return types.CPointer(like.dtype)
        return like if isinstance(like, types.CPointer) else None

    return typer


@lower_builtin(as_pointer, types.Integer, types.CPointer)
@lower_builtin(as_pointer, types.Integer, types.Array)
def _as_pointer(builder, target, args, kwargs):
    address, _ = builder.load_vars(args)
    builder.store_var(target, llvm.inttoptr(res=llvm.PointerType.get(), arg=address))


refresh_registries()


def address(x):
    """The address of a pointer, an array's first element, or an int."""


@overload(address, inline="always", typing_registry=typing_registry)
def _address(x):
    if isinstance(x, types.Array):
        return lambda x: data_address(x)
    if isinstance(x, types.CPointer):
        return lambda x: pointer_address(x)
    if isinstance(x, types.Integer):
        return lambda x: types.uint64(x)


def store(p, i, v):
    """v into element i of a pointer or an array."""


@overload(store, inline="always", typing_registry=typing_registry)
def _store(p, i, v):
    if isinstance(p, (types.Array, types.CPointer)):

        def impl(p, i, v):
            p[i] = v

        return impl
    raise TypingError(f"an output argument must be a pointer or an array, got {p}")


def pointer_like(address, like):
    """address as a pointer of like's type: like's for a pointer, to the
    element for an array, the int itself for an int."""


@overload(pointer_like, inline="always", typing_registry=typing_registry)
def _pointer_like(address, like):
    if isinstance(like, (types.CPointer, types.Array)):
        return lambda address, like: as_pointer(address, like)
    if isinstance(like, types.Integer):
        return lambda address, like: address
    raise TypingError(f"ptr: pass a pointer or an address (an int), got {like}")


def _bits_of(element):
    unsigned = _UNSIGNED[element.bitwidth]

    def bits(value):
        """value as element, its bits in a uint64."""

    @overload(bits, inline="always", typing_registry=typing_registry)
    def _bits(value):
        def impl(value):
            tmp = cuda.local.array(1, element)
            tmp[0] = value
            return types.uint64(tmp.view(unsigned)[0])

        return impl

    return bits


def _from_bits_of(element):
    unsigned = _UNSIGNED[element.bitwidth]

    def from_bits(word):
        """The element whose bits are the low ones of word."""

    @overload(from_bits, inline="always", typing_registry=typing_registry)
    def _from_bits(word):
        def impl(word):
            tmp = cuda.local.array(1, unsigned)
            tmp[0] = unsigned(word)
            return tmp.view(element)[0]

        return impl

    return from_bits


BITS = {dtype: _bits_of(t) for dtype, t in ELEMENT.items()}
FROM = {dtype: _from_bits_of(t) for dtype, t in ELEMENT.items()}
_BASE = {
    "A": address,
    "STORE": store,
    "PTR": pointer_like,
    "U64": types.uint64,
    "U32": types.uint32,
    "I64": types.int64,
    "I32": types.int32,
    "I8": types.int8,
    **{"dev_" + name: fn for name, fn in _library.DEVICE.items()},
}


def _pointee(arg):
    if isinstance(arg, (types.Array, types.CPointer)):
        return _NAMES.get(str(arg.dtype), str(arg.dtype))
    if isinstance(arg, types.Integer):
        return "address"
    return None


def _is_number(arg):
    numbers = (types.Number, types.Boolean, types.IntEnumMember, type(bfloat16))
    return isinstance(arg, numbers)


def _impl(call, dtype):
    """The call's recipe compiled here: impl, a function of its parameters."""
    names = dict(_BASE, ST=_library.state_address(call.name))
    if dtype:
        names.update(BITS=BITS[dtype], FROM=FROM[dtype])
    return call.compile(dtype, names)


def register(stubs):
    """Registers every stub's overload for numba-cuda-mlir kernels."""
    for stub in stubs.values():
        overload(stub, inline="always", typing_registry=typing_registry)(
            typing(stub, TypingError, _impl, _pointee, _is_number)
        )
