"""Types of symmem._symmem, the C core of symmem (src/extension/*.c).

Each signature follows the C parser of its function (the same names, order,
defaults and keyword-only parts as its text signature; put and get also have
NVSHMEM4Py's form as a second overload), and each type what that parser
accepts: tests/package/check_package.sh compares this file with the built
module (mypy's stubtest)."""

import sys
from collections.abc import Callable
from enum import Enum
from typing import Any, Final, TypeAlias, final, overload

# Memory a call reads or writes: anything with the buffer protocol, then
# __dlpack__, then __cuda_array_interface__ (NumPy and CuPy arrays, torch
# tensors, a Buffer, memoryview, ...). Symmetric where the call says so.
_Memory: TypeAlias = object
# A CUDA stream: None (blocking), an object with __cuda_stream__, one with
# .cuda_stream or .ptr (CuPy, torch, cuda.core), or the stream's handle as an int.
_Stream: TypeAlias = object
# A team handle: an int or a Teams member (an IntEnum); bools are refused.
_Team: TypeAlias = int
# A ComparisonType or a SignalOp member, or its int value.
_Code: TypeAlias = int
# One element's value, in the element's dtype: an int (or anything with
# __index__) for the integer dtypes, a float (or anything with __float__) for
# the floating ones, any object for bool (its truth).
_Value: TypeAlias = object
# What an element reads back as: bool, int or float by the dtype.
_Number: TypeAlias = int | float
# A dtype= argument: a name ('int64', 'float' ...: DTYPES and DTYPE_ALIASES),
# a NumPy or torch dtype, or None for the target's own.
_DType: TypeAlias = object

VERSION: Final[str]
OPENSHMEM_SPEC_VERSION: Final[str]
UNIQUE_ID_SIZE: Final[int]

# Status codes (symmem_status_t), as exceptions' .status carries them.
OK: Final[int]
ERR_INVALID: Final[int]
ERR_NOT_INITIALIZED: Final[int]
ERR_NOT_SYMMETRIC: Final[int]
ERR_MISMATCH: Final[int]
ERR_NO_MEMORY: Final[int]
ERR_SYSTEM: Final[int]
ERR_BOOTSTRAP: Final[int]
ERR_PEER_DEAD: Final[int]
ERR_TIMEOUT: Final[int]
ERR_UNSUPPORTED: Final[int]
ERR_BACKEND: Final[int]
ERR_INTERRUPTED: Final[int]
ERR_FORKED: Final[int]

# The C library's tables, from which the package builds its enums (most made
# from include/symmem/vocabulary.h's lists).
TEAMS: Final[dict[str, int]]
SIGNAL_OPS: Final[dict[str, int]]
COMPARISONS: Final[dict[str, int]]
REDUCE_OPS: Final[tuple[str, ...]]
ATOMIC_OPS: Final[tuple[tuple[str, tuple[str, ...]], ...]]  # (name, operands) by op code
# atomic op name -> {"fetches": bool, "floats": bool, "device_op": DEVICE_ATOMICS' code}
ATOMIC_TRAITS: Final[dict[str, dict[str, bool | int]]]
DEVICE_ATOMICS: Final[dict[str, int]]  # the device library's atomic instructions: name -> op
DTYPES: Final[dict[str, int]]  # name -> size in bytes
DTYPE_CODES: Final[dict[str, int]]  # name -> symmem_dtype_t code
DTYPE_NVSHMEM_NAMES: Final[dict[str, str]]  # name -> NVSHMEM's type name ("half", ...)
DTYPE_ALIASES: Final[dict[str, str]]  # NVSHMEM's C names -> DTYPES' names
CALL_KINDS: Final[dict[str, int]]  # the collectives a fingerprint names -> code
CAPABILITIES: Final[dict[str, int]]  # what a backend can do: name -> bit
DEVICE_FUNCTIONS: Final[dict[str, int]]  # name -> address, for the cpu device calls
DEVICE_STATE_LAYOUT: Final[dict[str, int]]  # field -> byte offset, and 'size'
DEVICE_CONSTS_LAYOUT: Final[dict[str, int]]
DEVICE_LAYOUT: Final[dict[str, int]]  # symmem/device_layout.h: team entries, error record, codes

class NvshmemError(RuntimeError):
    """The backend failed (allocation, bootstrap, a dead peer, a timeout)."""

    msg: str
    status: int

class NvshmemInvalid(ValueError):
    """Misuse: not initialised, wrong type, bad PE, dtype, op or memory."""

    msg: str
    status: int

@final
class Buffer:
    """Symmetric memory: .handle, .size, .device; buffer protocol and DLPack.
    Made by symmem.buffer(), never directly."""
    @property
    def handle(self) -> int: ...
    @property
    def ptr(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def device(self) -> str: ...
    @property
    def device_id(self) -> int: ...
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...
    @property
    def pe(self) -> int: ...
    @property
    def freed(self) -> bool: ...
    def __dlpack__(
        self,
        *,
        stream: object = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    if sys.version_info >= (3, 12):
        def __buffer__(self, flags: int, /) -> memoryview: ...

# ---- start-up and the world ----
def init(
    uid: bytes | bytearray | memoryview | None = None,
    rank: int = -1,
    nranks: int = -1,
    backend: str | None = None,
    device: int = -1,
    mpi_comm: int | None = None,
) -> None: ...
def finalize() -> None: ...
def initialized() -> bool: ...
def my_pe() -> int: ...
def n_pes() -> int: ...
def backend_name() -> str | None: ...
def capabilities() -> tuple[str, ...]: ...  # the running backend's; () before init
def library_version() -> str: ...
def engine_name() -> str: ...
def get_unique_id() -> bytes: ...
def launcher(backend: str | None = None) -> dict[str, str | int | tuple[str, ...]]: ...
def env_table() -> list[tuple[str, str, str, str]]: ...
def env(name: str) -> str | int | float | bool | None: ...

# ---- memory ----
def malloc(size: int, call: str = "malloc", alignment: int | None = None) -> Buffer: ...
def free(buffer: Buffer, call: str = "free") -> None: ...
def register_external(address: int, size: int, call: str = "register_external") -> Buffer: ...
def unregister_external(buffer: Buffer, call: str = "unregister_external") -> None: ...
def peer_buffer(
    buffer: Buffer, pe: int, call: str = "get_peer_buffer", arg: str = "pe"
) -> Buffer: ...
def find_allocation(address: int) -> tuple[int, int] | None: ...
def extent(obj: _Memory, call: str, arg: str = "array") -> tuple[int, int]: ...

# ---- one-sided copies: put(dst, src, remote_pe, stream=None), or NVSHMEM4Py's
# put(dst, src, count, pe, stream=None) (count in elements of dst) ----
@overload
def put(
    dst: _Memory,
    src: _Memory,
    remote_pe: int | None = None,
    stream: _Stream = None,
    *,
    count: int | None = None,
    pe: int | None = None,
) -> None: ...
@overload
def put(dst: _Memory, src: _Memory, count: int | None, pe: int, stream: _Stream = None) -> None: ...
@overload
def get(
    dst: _Memory,
    src: _Memory,
    remote_pe: int | None = None,
    stream: _Stream = None,
    *,
    count: int | None = None,
    pe: int | None = None,
) -> None: ...
@overload
def get(dst: _Memory, src: _Memory, count: int | None, pe: int, stream: _Stream = None) -> None: ...
@overload
def put_nbi(
    dst: _Memory,
    src: _Memory,
    remote_pe: int | None = None,
    stream: _Stream = None,
    *,
    count: int | None = None,
    pe: int | None = None,
) -> None: ...
@overload
def put_nbi(
    dst: _Memory, src: _Memory, count: int | None, pe: int, stream: _Stream = None
) -> None: ...
@overload
def get_nbi(
    dst: _Memory,
    src: _Memory,
    remote_pe: int | None = None,
    stream: _Stream = None,
    *,
    count: int | None = None,
    pe: int | None = None,
) -> None: ...
@overload
def get_nbi(
    dst: _Memory, src: _Memory, count: int | None, pe: int, stream: _Stream = None
) -> None: ...
def p(dst: _Memory, value: _Value, pe: int, stream: _Stream = None) -> None: ...
def g(src: _Memory, pe: int, stream: _Stream = None) -> _Number: ...
def quiet(stream: _Stream = None) -> None: ...
def fence(stream: _Stream = None) -> None: ...

# ---- signals and waits ----
def put_signal(
    dst: _Memory,
    src: _Memory,
    signal_var: _Memory,
    signal_val: int,
    signal_op: _Code,
    remote_pe: int,
    stream: _Stream = None,
) -> None: ...
def put_signal_nbi(
    dst: _Memory,
    src: _Memory,
    signal_var: _Memory,
    signal_val: int,
    signal_op: _Code,
    remote_pe: int,
    stream: _Stream = None,
) -> None: ...
def signal_op(
    signal_var: _Memory, signal_val: int, signal_op: _Code, remote_pe: int, stream: _Stream = None
) -> None: ...
def signal_wait(
    signal_var: _Memory,
    signal_val: int,
    signal_op: _Code | None = None,
    stream: _Stream = None,
    *,
    cmp: _Code | None = None,
) -> None: ...
def signal_fetch(signal_var: _Memory, stream: _Stream = None) -> int: ...
def wait_until(ivar: _Memory, cmp: _Code, value: int) -> None: ...
def test(ivar: _Memory, cmp: _Code, value: int) -> bool: ...

# ---- atomics: on element offset of PE remote_pe's target (-1: this PE) ----
def atomic_fetch(
    target: _Memory, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> _Number: ...
def atomic_set(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> None: ...
def atomic_inc(
    target: _Memory, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> None: ...
def atomic_fetch_inc(
    target: _Memory, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> _Number: ...
def atomic_add(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> None: ...
def atomic_fetch_add(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> _Number: ...
def atomic_and(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> None: ...
def atomic_fetch_and(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> _Number: ...
def atomic_or(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> None: ...
def atomic_fetch_or(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> _Number: ...
def atomic_xor(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> None: ...
def atomic_fetch_xor(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> _Number: ...
def atomic_swap(
    target: _Memory, value: _Value, remote_pe: int = -1, *, offset: int = 0, dtype: _DType = None
) -> _Number: ...
def atomic_compare_swap(
    target: _Memory,
    cond: _Value,
    value: _Value,
    remote_pe: int = -1,
    *,
    offset: int = 0,
    dtype: _DType = None,
) -> _Number: ...

# ---- barriers, teams and collectives ----
def barrier_all(stream: _Stream = None) -> None: ...
def sync_all(stream: _Stream = None) -> None: ...
def barrier(team: _Team, stream: _Stream = None) -> None: ...
def sync(team: _Team, stream: _Stream = None) -> None: ...
def team_my_pe(team: _Team) -> int: ...
def team_n_pes(team: _Team) -> int: ...
def team_translate_pe(src_team: _Team, src_pe: int, dest_team: _Team) -> int: ...
def check_team(team: _Team, call: str, arg: str = "team") -> int: ...
def team_split_strided(parent_team: _Team, start: int, stride: int, size: int) -> int: ...
def team_split_2d(parent_team: _Team, xrange: int) -> tuple[int, int]: ...
def team_init(key: int, npes: int, pe_idx_in_team: int) -> int: ...
def team_destroy(team: _Team) -> None: ...
def reduce(
    team: _Team, dst: _Memory, src: _Memory, op: str | Enum, stream: _Stream = None
) -> None: ...
def reducescatter(
    team: _Team, dst: _Memory, src: _Memory, op: str | Enum, stream: _Stream = None
) -> None: ...
def alltoall(team: _Team, dst: _Memory, src: _Memory, stream: _Stream = None) -> None: ...
def fcollect(team: _Team, dst: _Memory, src: _Memory, stream: _Stream = None) -> None: ...
def broadcast(
    team: _Team, dst: _Memory, src: _Memory, root: int = 0, stream: _Stream = None
) -> None: ...
def collective(
    coll: str,
    team: _Team,
    dest: _Memory,
    src: _Memory,
    dtype: _DType = None,
    op: str | Enum | None = None,
    root: int = 0,
    stream: _Stream = None,
) -> None: ...

# ---- errors: exceptions built (not raised) the way the C calls build theirs ----
def exception(status: int, message: str) -> Exception: ...
def invalid(message: str) -> NvshmemInvalid: ...
def require_initialized(call: str) -> None: ...

# ---- the device side: the state block kernels read, CUDA modules ----
def device_state() -> int: ...
def device_state_gpu() -> int: ...
def device_last_error() -> tuple[int, str]: ...
def device_owner_layout() -> dict[str, int]: ...
def cuda_module(library: bool, handle: int, op: int, /) -> bool: ...

# ---- raw addresses (symmem.bindings) and the libraries info reports ----
def memory_at(
    address: int, nbytes: int, writable: bool = False, *, call: str = "memory_at"
) -> memoryview: ...
def cuda_driver_info() -> dict[str, str | int | list[str] | None]: ...
def nvshmem_version(path: str) -> tuple[int, int, int]: ...

# ---- the package's hooks into the C module ----
def _set_dtype_namer(namer: Callable[[object], str]) -> None: ...
def _set_resolver(
    resolver: Callable[[object], tuple[Any, ...]],
    owner_of: Callable[[object], Buffer | None] | None = None,
    ndarray: type | None = None,
) -> None: ...
def _ndarray_fast(enabled: bool | None = None) -> bool: ...
