"""symmem.bindings.device.cute's functions: plain Python that CuTe runs while
it traces a kernel, each emitting the call on the engine symmem.device.cute
chose for the process (its _engine.py: SYMMEM_CUTE_ENGINE):

- symmem: the call's recipe (_recipes.py), compiled once per call and
  dtype with CuTe's values bound: A (a pointer's, a tensor's or an int's
  address as Uint64), BITS and FROM (symmem.device.cute's _values.py), the
  integer types, ST, and dev_<name>, the device library's functions as
  cute.extern declarations of device.bc (symmem.device.cute's _externs.py).
- nvshmem: NVSHMEM's own function (the table's symbol) in its device
  bitcode, its pointers passed as addresses; a function the bitcode lacks
  fails the trace naming it.

Arguments are checked first (_checks.py): a cute Pointer (a tensor's
.iterator), a cute.Tensor (its first element) or an address where a
pointer goes, numbers where values go. What the table refuses fails with a
TypeError naming the call and why (on symmem's engine, what only it
cannot serve; on both, multicast)."""

import cutlass
import cutlass.cute as cute
from cutlass._mlir import ir
from cutlass._mlir.dialects import llvm
from cutlass.cute.typing import Numeric, Pointer

from symmem._errors import invalid
from symmem.device import _library_calls as L
from symmem.device import _nvvm_bitcode
from symmem.device.cute import _engine as E
from symmem.device.cute import _externs as X
from symmem.device.cute import _values as V

from . import _stubs, _table, _types
from ._checks import check

_NAMES = {t: name for name, t in V.DTYPES.items()}
_TYPES = {
    **V.DTYPES,
    "enum": cutlass.Int32,
    "bool": cutlass.Boolean,
}


def _element_name(element_type):
    return _NAMES.get(element_type, str(element_type))


def _pointee(arg):
    if isinstance(arg, Pointer):  # CuTe 4.8's pointer of a uint64 tensor says Int64
        name = _element_name(arg.dtype)
        return f"{name}|u{name}" if name.startswith("int") else name
    if isinstance(arg, cute.Tensor):
        return _element_name(arg.element_type)
    if isinstance(arg, (int, cutlass.Integer)) and not isinstance(arg, bool):
        return "address"
    return None


def _is_number(arg):
    return isinstance(arg, (int, float, Numeric))


def address(x):
    """x's address as Uint64: a pointer's, a tensor's first element's, an int."""
    if isinstance(x, Pointer):
        return cutlass.Uint64(x.toint())
    if isinstance(x, cute.Tensor):
        return V.address(x)
    return cutlass.Uint64(x)


def _integer(kind):
    def convert(value):
        return kind(int(value) if isinstance(value, int) else value)

    return convert


def store(p, i, v):
    """v into element i of a pointer or tensor (an output argument)."""
    if isinstance(p, Pointer):
        p = cute.make_tensor(p, cute.make_layout(i + 1))
    if not isinstance(p, cute.Tensor):
        raise TypeError(f"an output argument must be a cute pointer or tensor, got {p!r}")
    p[i] = p.element_type(v)


def pointer_like(at, like):
    """The address at as a pointer of like's element type (a tensor's or a
    pointer's); at itself where like is an address."""
    if isinstance(like, Pointer):
        return cute.make_ptr(like.dtype, at, like.memspace)
    if isinstance(like, cute.Tensor):
        return cute.make_ptr(like.element_type, at, like.iterator.memspace)
    return at


def _library_function(name):
    return lambda *args: X.own(name)(*args)


_BASE = {
    "A": address,
    "STORE": store,
    "PTR": pointer_like,
    "U64": _integer(cutlass.Uint64),
    "U32": _integer(cutlass.Uint32),
    "I64": _integer(cutlass.Int64),
    "I32": _integer(cutlass.Int32),
    "I8": _integer(cutlass.Int8),
    **{"dev_" + name: _library_function(name) for name in L.SIGNATURES},
}
_compiled = {}  # (name, dtype) -> the recipe's impl


def _own(call, dtype):
    """The call's recipe with CuTe's values bound (once per call and dtype)."""
    key = (call.name, dtype)
    if key not in _compiled:
        names = dict(_BASE, ST=E.state(call.name))
        if dtype:
            names.update(
                BITS=lambda value, d=dtype: V.bits(value, d),
                FROM=lambda word, d=dtype: V.from_bits(word, d),
            )
        _compiled[key] = call.compile(dtype, names)
    return _compiled[key]


# ---- NVSHMEM's engine ----

_defined = None


def _nvshmem_function(call, dtype):
    """The typed call NVSHMEM has for call (a generic form's for dtype)."""
    if not call.generic:
        return call
    prefix = "qp_" if call.family.startswith("qp_") else ""
    nv = _types.nv_name(dtype, call.types)
    return _table.CALLS[f"{prefix}{nv}_{call.family[len(prefix) :]}"]


def _nvshmem(call, dtype, args):
    global _defined
    typed = _nvshmem_function(call, dtype)
    path = X.NVSHMEM.path
    if _defined is None:
        _defined = _nvvm_bitcode.defined_functions(path)
    if typed.symbol not in _defined:
        raise TypeError(
            f"{call.name}: NVSHMEM's device bitcode ({path}) has no {typed.symbol}; "
            "SYMMEM_CUTE_ENGINE=symmem serves it"
        )
    kinds = ["ptr" if kind.startswith("*") else _TYPES[kind] for _, kind in typed.params]
    if typed.returns == "void":
        returns = None
    elif typed.returns.startswith("*"):
        returns = X.POINTER
    else:
        returns = _TYPES[typed.returns]
    values = [address(arg) if kind == "ptr" else kind(arg) for kind, arg in zip(kinds, args)]
    result = X.nvshmem(typed.symbol, returns, kinds)(*values)
    if returns is X.POINTER:  # ptr: the address, as a pointer like its argument
        word = cutlass.Uint64(llvm.ptrtoint(ir.IntegerType.get_signless(64), result))
        return pointer_like(word, args[0])
    return result


def function(call):
    """The Python function CuTe runs for call while it traces a kernel."""
    shown = _stubs.signature(call)

    def run(*args, **kwargs):
        try:
            bound = shown.bind(*args, **kwargs)
        except TypeError as problem:
            raise TypeError(f"{call.name}{shown}: {problem}") from None
        engine = E.configure(call.name)
        why = call.why_not(engine)
        if why:
            raise TypeError(why)
        dtype = check(call, bound.args, _pointee, _is_number, TypeError)
        if engine == "nvshmem":
            return _nvshmem(call, dtype, bound.args)
        return _own(call, dtype)(*bound.args)

    return _stubs.dress(run, "cute", call)


def functions():
    """{name: its function} for every call of symmem.bindings.device.cute."""
    if not hasattr(cute, "extern"):
        raise invalid(
            "symmem.bindings.device.cute needs a CuTe DSL with cute.extern "
            "(nvidia-cutlass-dsl 4.5.2 or later)"
        )
    return {name: function(call) for name, call in _table.for_module("cute").items()}
