"""How symmem.device.cute turns CuTe values into what the device calls take,
while CuTe traces a kernel: a tensor's address and size in bytes, a value's
bits in a 64-bit word and back, element types by name. Plain Python run at
trace time: every value here is either known then (Python ints, a static
size) or an MLIR value of the kernel."""

import cutlass
import cutlass.cute as cute
from cutlass._mlir import ir
from cutlass._mlir.dialects import arith, llvm

# CuTe's element types by NumPy's names (the names _symmem.DTYPES uses)
DTYPES = {
    "int8": cutlass.Int8,
    "int16": cutlass.Int16,
    "int32": cutlass.Int32,
    "int64": cutlass.Int64,
    "uint8": cutlass.Uint8,
    "uint16": cutlass.Uint16,
    "uint32": cutlass.Uint32,
    "uint64": cutlass.Uint64,
    "float16": cutlass.Float16,
    "bfloat16": cutlass.BFloat16,
    "float32": cutlass.Float32,
    "float64": cutlass.Float64,
}
_NAMES = {t: name for name, t in DTYPES.items()}
FLOATS = ("float16", "bfloat16", "float32", "float64")


def dtype_name(call, what, tensor):
    """The NumPy name of tensor's element type; a TypeError names the call
    where symmem has no such dtype."""
    name = _NAMES.get(tensor.element_type)
    if name is None:
        raise TypeError(
            f"{call}: {what} has element type {tensor.element_type}, which "
            f"symmem.device.cute does not take ({', '.join(DTYPES)})"
        )
    return name


def same_dtype(call, dst, src):
    a, b = dtype_name(call, "dst", dst), dtype_name(call, "src", src)
    if a != b:
        raise TypeError(f"{call}: dst has element type {a} but src has {b}")
    return a


def signal_word(call, tensor):
    """A signal is a 64-bit integer word: uint64, or int64, which is what CuTe
    4.8 calls a uint64 tensor's view made by cute.make_tensor (its MLIR
    type has no sign)."""
    name = dtype_name(call, "sig_addr", tensor)
    if name not in ("uint64", "int64"):
        raise TypeError(f"{call}: sig_addr must be a uint64 tensor, not {name}")


def address(tensor):
    """The address of tensor's first element, as Uint64."""
    return cutlass.Uint64(tensor.iterator.toint())


def width(tensor):
    """Bytes per element (a Python int)."""
    return tensor.element_type.width // 8


def count(tensor):
    """tensor's number of elements: a Python int where static, else Uint64."""
    n = cute.size(tensor)
    return n if isinstance(n, int) else cutlass.Uint64(n)


def smaller(a, b):
    """min(a, b) of two counts, static where both are."""
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return cutlass.min(cutlass.Uint64(a), cutlass.Uint64(b))


def u64(value):
    return cutlass.Uint64(value)


def i32(value):
    """A pe, team, root or flag as Int32 (Python ints, enum members, DSL integers)."""
    return cutlass.Int32(int(value) if isinstance(value, int) else value)


def bits(value, dtype):
    """value as dtype, its bits in the low end of a Uint64 (floats bit for bit)."""
    typed = DTYPES[dtype](value)
    if dtype not in FLOATS:
        return cutlass.Uint64(typed)
    w = typed.width
    as_int = llvm.bitcast(ir.IntegerType.get_signless(w), typed.ir_value())
    if w < 64:
        as_int = arith.extui(ir.IntegerType.get_signless(64), as_int)
    return cutlass.Uint64(as_int)


def from_bits(word, dtype):
    """The dtype value whose bits are the low end of word (a Uint64 or Uint32)."""
    t = DTYPES[dtype]
    if dtype not in FLOATS:
        return t(word)
    w = t.width
    v = cutlass.Uint64(word).ir_value()
    if w < 64:
        v = arith.trunci(ir.IntegerType.get_signless(w), v)
    return t(llvm.bitcast(t.mlir_type, v))
