"""Reading the device state block from njit code, and the checks every
device call makes against it before it touches memory.

The block's address is a compile-time constant: the block is a static of
the extension (src/core/device_state.c), so it never moves for the life of the
process, across finalize and a later init too; its contents are valid while
its magic is set. A consequence: functions using symmem.device.numba must not
be cached to disk (`cache=True`), since another process has another
address. The checks are a few compares on one cache line: the PE against
n_pes, [addr, addr + nbytes) against this PE's heap; and, for every array
argument, that its allocation was not freed (`live`). An address alone
cannot tell that (free_array(a); b = symmem.array(...) gives b a's
address), so the check follows the array, as the host calls' does
(src/extension/owner.h): numba keeps, in every array it unboxes and every
view it makes of one, the NumPy array the caller passed (its "parent"),
whose .base is the Buffer, which records its allocation's generation. That
common chain is a few loads here; any other goes to the extension's walk
(device_freed in src/extension/device.c), which also follows a view that
left NumPy's chain (as_strided, np.asarray(obj), np.from_dlpack) as the
host calls do (src/extension/owner_search.c), and refuses one it cannot
trace to its Buffer."""

from numba.extending import register_jitable

from symmem import _symmem

from . import _errors as E
from . import _llvm as L
from ._llvm import c_wake, load_i32, load_u64

_LAYOUT = _symmem.DEVICE_STATE_LAYOUT
STATE = _symmem.device_state()
_MAGIC = _LAYOUT["MAGIC"]
_HOST_MAPPED = _LAYOUT["HOST_MAPPED"]
_MAGIC_AT = STATE + _LAYOUT["magic"]
_FLAGS_AT = STATE + _LAYOUT["flags"]
_MY_PE_AT = STATE + _LAYOUT["my_pe"]
_N_PES_AT = STATE + _LAYOUT["n_pes"]
_BASE_AT = STATE + _LAYOUT["heap_base"]
_SIZE_AT = STATE + _LAYOUT["heap_size"]
_PEERS_AT = STATE + _LAYOUT["peer_base"]


@register_jitable
def my_pe():
    return load_i32(_MY_PE_AT)


@register_jitable
def n_pes():
    return load_i32(_N_PES_AT)


@register_jitable
def ready(call):
    """Raises unless symmem is initialised on a backend whose heap we can load."""
    # Plain loads: the block was filled (and published with release) before
    # init returned to this thread, which is the thread that calls init.
    if load_u64(_MAGIC_AT) != _MAGIC:
        raise E.DeviceInvalid(E.NOT_INITIALIZED, call)
    if (load_i32(_FLAGS_AT) & _HOST_MAPPED) == 0:
        raise E.DeviceNotHere(call)


# device_owner_layout(): read once the package has named numpy.ndarray
# (symmem's import), which it has before this module is imported.
_OWNER = _symmem.device_owner_layout()
_NDARRAY_BASE = _OWNER["ndarray_base"]
_OB_TYPE = _OWNER["ob_type"]
_BUFFER_TYPE = _OWNER["buffer_type"]
_BUFFER_BASE = _OWNER["buffer_base"]
_GENERATION = _OWNER["buffer_generation"]
_FIRST_LIVE_AT = _OWNER["first_live"]


@register_jitable
def _freed(parent, addr):
    """Whether the NumPy array at parent (L.parent_of; 0: none), through which
    the call touches addr, was made over a freed allocation: 0 no, 1 yes, 2
    cannot tell (it left NumPy's chain and leads to no Buffer). The common
    cases inline, a few loads: an array of private memory (no .base), an
    array over a Buffer (.base is the Buffer, or the Buffer a peer view
    views, whose generation finalize or free retired: buffer.h's
    symmem__ext_buffer_usable). Any other chain: the extension's full walk
    (device_freed in src/extension/device.c)."""
    if parent == 0:
        return 0
    if _NDARRAY_BASE < 0:
        return L.c_freed(parent, addr)
    base = load_u64(parent + _NDARRAY_BASE)
    if base == 0:
        return 0
    if load_u64(base + _OB_TYPE) != _BUFFER_TYPE:
        return L.c_freed(parent, addr)
    owner = load_u64(base + _BUFFER_BASE)
    if owner == 0:
        owner = base
    return 1 if load_u64(owner + _GENERATION) < load_u64(_FIRST_LIVE_AT) else 0


@register_jitable
def live(call, arg, parent, addr):
    """Raises if the array whose parent is parent (L.parent_of) was made over
    an allocation that was freed, or left NumPy's chain for an object that
    leads to no allocation: its address (addr) may belong to a newer
    allocation now. Integers, not the array: an array passed to a jitted
    function costs two atomic reference counts, more than the check."""
    freed = _freed(parent, addr)
    if freed == 1:
        raise E.DeviceInvalid(E.FREED, call, arg, addr)
    if freed == 2:
        raise E.DeviceInvalid(E.UNTRACED, call, arg, addr)


@register_jitable
def translate(call, arg, addr, parent, nbytes, pe):
    """Where PE pe's copy of the symmetric [addr, addr + nbytes) is mapped
    here; raises on a bad PE, a freed array (parent: L.parent_of of the
    array at addr) or memory off the heap."""
    ready(call)
    if pe < 0 or pe >= load_i32(_N_PES_AT):
        raise E.DeviceInvalid(E.BAD_PE, call, 0, pe)
    live(call, arg, parent, addr)
    base = load_u64(_BASE_AT)
    if addr < base or addr - base + nbytes > load_u64(_SIZE_AT):
        raise E.DeviceInvalid(E.NOT_SYMMETRIC, call, arg, addr)
    peer = load_u64(load_u64(_PEERS_AT) + 8 * pe)
    if peer == 0:  # not mapped here: the mpi backend's PEs on other nodes
        raise E.DeviceUnreachable(call, pe)
    return peer + (addr - base)


@register_jitable
def translate_first(call, arg, arr, pe):
    """translate for the first element of arr, which must have one (p, g,
    the signals and the atomics act on it)."""
    if arr.size == 0:
        raise E.DeviceInvalid(E.EMPTY, call, arg)
    return translate(call, arg, L.data_address(arr), L.parent_of(arr), arr.itemsize, pe)


@register_jitable
def local_first(call, arg, arr):
    """The address of arr's first element, after translate_first's checks,
    for memory this PE waits on."""
    translate_first(call, arg, arr, load_i32(_MY_PE_AT))
    return L.data_address(arr)


@register_jitable
def contiguous(call, arg, arr):
    if not arr.flags.c_contiguous:
        raise E.DeviceInvalid(E.NOT_CONTIGUOUS, call, arg)


@register_jitable
def wake(pe):
    """After a store a waiter on PE pe may watch: ring its doorbell (the C
    engine's waits sleep on it: the backend's device_wake slot)."""
    c_wake(pe)


_INTERRUPTED = _symmem.ERR_INTERRUPTED
_REFUSED = (
    _symmem.ERR_INVALID,
    _symmem.ERR_NOT_SYMMETRIC,
    _symmem.ERR_NOT_INITIALIZED,
    _symmem.ERR_MISMATCH,
)


@register_jitable
def raise_status(status):
    """A C engine status (not 0) as the exception the host call would raise."""
    if status == _INTERRUPTED:
        raise E.DeviceInterrupted()
    if status in _REFUSED:
        raise E.DeviceWaitInvalid()
    raise E.DeviceError()
