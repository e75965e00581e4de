"""The C functions CuTe kernels call, as cute.extern declarations, made
when a kernel first calls them (so the bitcode's path is looked up then,
for the GPU of the process that traces):

- own(name): symmem_dev_<name> of symmem's device library (device.bc), its
  signature from symmem/device/_library_calls.py, the one table the DSLs
  share. Addresses are unsigned 64-bit integers, as the library takes them.
- nvshmem(name, ret, params): one of NVSHMEM's device functions in
  libnvshmem_device.bc. Pointer parameters ("ptr") are generic LLVM
  pointers, made from the 64-bit addresses the calls pass (inttoptr), so
  the declaration matches NVSHMEM's definition."""

import inspect

import cutlass
import cutlass.cute as cute
from cutlass._mlir import ir
from cutlass._mlir.dialects import llvm

from symmem import _device_host
from symmem.device import _library_calls, _nvvm_bitcode

from . import _engine

_TYPES = {
    "u64": cutlass.Uint64,
    "i64": cutlass.Int64,
    "i32": cutlass.Int32,
    "u32": cutlass.Uint32,
    "void": None,
}


class _Bitcode(cute.BitCode):
    """A cute.BitCode whose path is found when CuTe links the kernel."""

    def __init__(self, find):  # noqa: D107 (BitCode is a frozen dataclass: no super().__init__)
        object.__setattr__(self, "_find", find)

    @property
    def path(self):
        return self._find()

    def __hash__(self):
        return hash(self._find)

    def __eq__(self, other):
        return isinstance(other, _Bitcode) and other._find is self._find


def _own_path():
    return _engine.OWN_BITCODE


OWN = _Bitcode(_own_path)
# NVSHMEM's bitcode with its functions' sections dropped, which libNVVM refuses
NVSHMEM = _Bitcode(lambda: _nvvm_bitcode.for_nvvm(_device_host.find_device_bitcode_library()))


class _Pointer:
    """A generic pointer parameter of an NVSHMEM function; the call passes
    the address as a 64-bit integer."""

    def __get_mlir_types__(self):
        return [llvm.PointerType.get()]

    def isinstance(self, value):
        return True


POINTER = _Pointer()


def _to_pointer(values, types):
    """cute.extern's implicit conversion: an i64 address into a pointer."""
    if (
        len(values) == 1
        and len(types) == 1
        and isinstance(types[0], llvm.PointerType)
        and isinstance(values[0].type, ir.IntegerType)
    ):
        return [llvm.inttoptr(types[0], values[0])]
    return values


def _declare(symbol, source, ret, params):
    def stub(*args):
        """An external device function (cute.extern)."""

    stub.__name__ = symbol
    stub.__signature__ = inspect.Signature(
        [
            inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_ONLY, annotation=p)
            for i, p in enumerate(params)
        ],
        return_annotation=ret,
    )
    handler = cute.extern(
        stub, name=symbol, source=source, overloaded=False, implicit_convert=_to_pointer
    )
    if ret is None or ret is POINTER:
        return handler

    def typed(*args):
        """The call's result as ret (the extern gives a bare MLIR value)."""
        return ret(handler(*args))

    return typed


_declared = {}


def own(name):
    """symmem_dev_<name>, callable in a kernel."""
    key = ("own", name)
    if key not in _declared:
        ret, *params = _library_calls.SIGNATURES[name]
        _declared[key] = _declare(
            "symmem_dev_" + name, OWN, _TYPES[ret], [_TYPES[p] for p in params]
        )
    return _declared[key]


def nvshmem(symbol, ret, params):
    """NVSHMEM's device function symbol; ret is a cutlass type, None (void)
    or POINTER, params cutlass types or "ptr"."""
    key = ("nvshmem", symbol)
    if key not in _declared:
        _declared[key] = _declare(
            symbol, NVSHMEM, ret, [POINTER if p == "ptr" else p for p in params]
        )
    return _declared[key]
