"""The NVSHMEM engine for Triton kernels: calls into NVSHMEM's device
bitcode (libnvshmem_device.bc, linked by Triton through the kernel's
extern_libs, which requires_symmem adds). A module linking it holds
NVSHMEM's device state, which _runtime initialises when Triton loads it.
Addresses travel as int64 and block-scope (`_block`) functions are used
wherever NVSHMEM has them: a Triton program is one CUDA block and every
thread of it makes the call."""
import triton
import triton.language as tl
from triton.language import core

LIB = "libnvshmem_device"

_TYPE_NAMES = {"int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
               "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
               "fp16": "half", "bf16": "bfloat16", "fp32": "float", "fp64": "double"}


@triton.constexpr_function
def type_name(dtype):
    """NVSHMEM's name for a Triton element type ("float" for tl.float32)."""
    name = str(dtype).replace("tl.", "")
    if name not in _TYPE_NAMES:
        raise TypeError(f"symmem.device.triton: NVSHMEM has no device functions for {name}")
    return _TYPE_NAMES[name]


@triton.constexpr_function
def typed(prefix, dtype, suffix):
    """An NVSHMEM function name for an element type: prefix_<type>_suffix."""
    return f"{prefix}_{type_name(dtype)}_{suffix}"


@core.extern
def call(name, ret, *args, _semantic=None):
    """NVSHMEM's device function name(*args) -> ret; the argument types are
    the arguments' own (the caller casts them to what the C signature
    takes: addresses int64, PEs and teams int32)."""
    name = core._unwrap_if_constexpr(name)
    ret = core._unwrap_if_constexpr(ret)
    types = tuple(a.dtype for a in args)
    return core.extern_elementwise(LIB, "", list(args), {types: (name, ret)}, is_pure=False,
                                   _semantic=_semantic)


@core.extern
def call_pure(name, ret, *args, _semantic=None):
    """As call, for a function without side effects (my_pe, n_pes)."""
    name = core._unwrap_if_constexpr(name)
    ret = core._unwrap_if_constexpr(ret)
    types = tuple(a.dtype for a in args)
    return core.extern_elementwise(LIB, "", list(args), {types: (name, ret)}, is_pure=True,
                                   _semantic=_semantic)


@triton.jit
def signal_op_code(op):
    """NVSHMEM's code for a signal op: SET 9, ADD 10 (NVSHMEM's values,
    SignalOp's); 0 and 5, which PyTorch's docstrings give, mean SET and ADD."""
    op = tl.cast(op, tl.int32)
    return tl.where(op == 5, 10, tl.where(op == 0, 9, op))
