"""The NVSHMEM engine for Triton kernels: calls into NVSHMEM's device
bitcode (libnvshmem_device.bc, linked by Triton through the kernel's
extern_libs, which requires_symmem adds). A module linking it holds
NVSHMEM's device state, which _runtime initialises when Triton loads it.
Addresses travel as int64 and block-scope (`_block`) functions are used
wherever NVSHMEM has them: a Triton program is one CUDA block and every
thread of it makes the call. NVSHMEM's thread-scope calls with an effect
(p, signal_op, the atomics) run on the program's first thread only, as
Triton's own scalar stores and atomics do, and what they return reaches
every thread (from_first_thread)."""

import triton
import triton.language as tl
from triton.language import core

LIB = "libnvshmem_device"

_TYPE_NAMES = {
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "fp16": "half",
    "bf16": "bfloat16",
    "fp32": "float",
    "fp64": "double",
}


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


@triton.constexpr_function
def atomic(dtype, op):
    """NVSHMEM's atomic for an element type: nvshmem_<type>_atomic_<op>
    (its bitcode has no int64 form of the adds; long is the same type here)."""
    name = type_name(dtype)
    if name == "int64" and op in ("add", "fetch_add", "inc", "fetch_inc"):
        name = "long"
    return f"nvshmem_{name}_atomic_{op}"


@triton.constexpr_function
def atomic_kind(name):
    """What atomic_<name> does to the word: its name less "fetch_"."""
    return name[len("fetch_") :] if name.startswith("fetch_") else name


@triton.constexpr_function
def atomic_result(dtype, name):
    """The type NVSHMEM's atomic_<name> returns: dtype where it returns the
    old value, else int32 (declared for its void functions)."""
    returns = name.startswith("fetch") or name in ("swap", "compare_swap")
    return dtype if returns else tl.int32


@triton.constexpr_function
def wait_until(dtype):
    """NVSHMEM's wait_until for an integer type (16-bit ones by their C
    names; it has none for 8-bit integers)."""
    name = {"int16": "short", "uint16": "ushort"}.get(type_name(dtype), type_name(dtype))
    if name in ("int8", "uint8"):
        raise TypeError(
            "symmem.device.triton: NVSHMEM has no wait_until for 8-bit integers "
            "(symmem's engine has)"
        )
    return f"nvshmem_{name}_wait_until"


def _extern(name, ret, args, pure, _semantic):
    types = tuple(a.dtype for a in args)
    return core.extern_elementwise(
        LIB,
        "",
        list(args),
        {types: (core._unwrap_if_constexpr(name), core._unwrap_if_constexpr(ret))},
        is_pure=pure,
        _semantic=_semantic,
    )


@core.extern
def call(name, ret, *args, _semantic=None):
    """NVSHMEM's device function name(*args) -> ret; the argument types are
    the arguments' own (the caller casts them to what the C signature
    takes: addresses int64, PEs and teams int32)."""
    return _extern(name, ret, args, False, _semantic)


@core.extern
def call_pure(name, ret, *args, _semantic=None):
    """As call, for a function without side effects (my_pe, n_pes)."""
    return _extern(name, ret, args, True, _semantic)


@triton.jit
def signal_op_code(op):
    """NVSHMEM's code for a signal op: SET 9, ADD 10 (NVSHMEM's values,
    SignalOp's); 0 and 5, which PyTorch's docstrings give, mean SET and ADD."""
    op = tl.cast(op, tl.int32)
    return tl.where(op == 5, 10, tl.where(op == 0, 9, op))


@triton.jit
def first_thread():
    """True on the program's thread 0 alone (Triton has no thread index)."""
    tid = tl.inline_asm_elementwise(
        "mov.u32 $0, %tid.x;", "=r", [], dtype=tl.int32, is_pure=True, pack=1
    )
    return tid == 0


@triton.jit
def from_first_thread(value):
    """value as the program's thread 0 holds it, on every thread: element 0
    of a tensor of one element per thread (thread 0's in Triton's layouts,
    and no other thread holds a copy of it) carries it, the
    rest are 0, and the sum reaches every thread (through shared memory,
    with a bar.sync). The explicit bar.sync first holds every thread until
    thread 0's call returned even where the value is unused (then the sum
    is dropped): after a wait, no thread reads before thread 0's acquire."""
    tl.debug_barrier()
    THREADS: tl.constexpr = tl.extra.cuda.num_threads()
    lanes = tl.arange(0, THREADS)
    spread = tl.where(lanes == 0, value, tl.zeros((THREADS,), value.dtype))
    return tl.sum(spread, 0).to(value.dtype)
