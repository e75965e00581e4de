"""Raw addresses: memory at an address as symmem's calls take it, and
NVSHMEM's heap calls that trade in addresses (malloc, align, calloc, free,
ptr, mc_ptr). malloc's memory is symmem's heap, tracked as buffer()'s is: free()
or finalize() frees it, and every call of symmem accepts arrays over it."""

import numpy as np

from symmem import _memory, _symmem
from symmem._errors import NvshmemError, invalid, require_initialized
from symmem._lifecycle import _finalize_hooks

# (allocation address, pe) -> (its Buffer, the peer Buffer whose address ptr()
# gave out): kept alive while the allocation lives.
_peers: dict = {}
_finalize_hooks.append(_peers.clear)


def _owner_at(address):
    """The Buffer whose memory holds address now (this PE's live allocation,
    or the peer view whose address ptr() gave out), or None. A raw address
    names whatever lives there now, as in C; the C module traces symmetric
    memory an object names to the Buffer the object holds
    (src/extension/owner_search.c), so _Memory holds this one."""
    found = _symmem.find_allocation(address)
    record = found and (_memory._live.get(found[0]) or _memory._external.get(found[0]))
    if record:
        return record[1]
    for _, peer in _peers.values():
        if peer.handle <= address < peer.handle + peer.size:
            return peer
    return None


class _Memory:
    """count elements of dtype at address: the array interface the C module
    reads (__cuda_array_interface__ for the gpu backend's device memory),
    and the Buffer the memory belongs to now (_owner_at).
    The C module checks that the memory is symmetric where a call needs it."""

    def __init__(self, address, count, dtype):
        self.owner = _owner_at(address)
        self.dtype = dtype
        interface = {
            "data": (address, False),
            "shape": (count,),
            "typestr": dtype.str,
            "strides": None,
            "version": 3,
        }
        name = (
            "__cuda_array_interface__"
            if "device_memory" in _symmem.capabilities()
            else "__array_interface__"
        )
        setattr(self, name, interface)


def memory_at(address, count, dtype, call, arg, writable=False):
    """Memory of count dtype elements (a dtype name) at an int address; the
    call writes it where writable (read-only host memory raises: a get's
    local dest; symmetric memory, which calls check themselves, is writable)."""
    require_initialized(call)
    if not isinstance(address, int) or isinstance(address, bool) or address < 0:
        raise invalid(f"{call}: {arg}={address!r} is not an address (an int >= 0)")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise invalid(f"{call}: the size {count!r} of {arg} is not an int >= 0")
    dtype = _memory._numpy_dtype(dtype, call)
    # host memory: unmapped raises, not crashes
    if count and "device_memory" not in _symmem.capabilities():
        _symmem.memory_at(address, count * dtype.itemsize, writable=writable, call=f"{call}: {arg}")
    return _Memory(address, count, dtype)


def _allocation(address, call, arg="dest"):
    """(Buffer, offset) of the live allocation of this PE that holds address."""
    require_initialized(call)
    found = _symmem.find_allocation(address) if isinstance(address, int) else None
    record = found and (_memory._live.get(found[0]) or _memory._external.get(found[0]))
    if not record:
        raise invalid(f"{call}: {arg}={address!r} is not an address on the symmetric heap")
    return record[1], address - found[0]


def malloc(size):
    """Collective: the address of size bytes on the symmetric heap (0 for 0 bytes)."""
    return _memory._allocate(size, False, "malloc").handle


def align(alignment, size):
    """Collective: malloc(size) at an address that is a multiple of alignment, a
    power of two (on the cpu backend at most 2 MiB); 0 for 0 bytes."""
    if not isinstance(alignment, int) or isinstance(alignment, bool):
        raise invalid(f"align: alignment={alignment!r} is not an int")
    return _memory._allocate(size, False, "align", alignment).handle


def check_sizes(call, **values):
    """Each value (an argument of call, by name) must be an int >= 0."""
    for arg, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise invalid(f"{call}: {arg}={value!r} is not an int >= 0")


def calloc(count, size):
    """Collective: malloc(count * size), zeroed on every PE before any PE returns."""
    check_sizes("calloc", count=count, size=size)
    buf = _memory._allocate(count * size, False, "calloc")
    if buf.size:
        _memory._wrap(buf, np.dtype(np.uint8), buf.size)[...] = 0
    _symmem.barrier_all()  # no PE writes into a copy not yet zeroed
    return buf.handle


def free(ptr):
    """Collective: frees what malloc or calloc returned (0 does nothing)."""
    if isinstance(ptr, int) and ptr == 0:  # an array's == would be elementwise
        return
    require_initialized("free")
    record = _memory._live.get(ptr) if isinstance(ptr, int) else None
    if record is None:
        raise invalid(
            f"free: ptr={ptr!r} is not an address malloc or calloc returned (or it "
            "was freed already)"
        )
    _memory.free(record[1])
    for key in [k for k in _peers if k[0] == ptr]:
        del _peers[key]


def ptr(dest, pe):
    """The address through which this PE loads and stores PE pe's copy of the
    symmetric address dest; 0 where that copy cannot be mapped (the gpu
    backend beyond NVLink). dest off the heap raises (NVSHMEM answers 0)."""
    buf, offset = _allocation(dest, "ptr")
    key = (buf.handle, pe)
    known = _peers.get(key)
    if known is None or known[0] is not buf or known[1].freed:
        try:
            known = _peers[key] = (buf, _symmem.peer_buffer(buf, pe, "ptr", "pe"))
        except (NotImplementedError, NvshmemError):
            return 0
    return known[1].handle + offset


def mc_ptr(team, ptr):
    """0: symmem maps no NVLink multicast memory (NVSHMEM's answer where it has none)."""
    _symmem.check_team(team, "mc_ptr")
    _allocation(ptr, "mc_ptr", "ptr")
    return 0
