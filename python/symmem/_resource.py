"""NvshmemResource: NVSHMEM4Py's memory resource (a cuda.core
MemoryResource there) over symmem's symmetric heap, and BufferTypes, the
kinds of Buffer it tells apart. Duck-typed: it does not need cuda.core."""
from enum import IntEnum

from symmem import _memory, _symmem
from symmem._errors import invalid, require_initialized


class BufferTypes(IntEnum):
    NORMAL = 0     # on the symmetric heap (buffer(), array(), tensor())
    PEER = 1       # a view of another PE's copy (get_peer_buffer)
    MULTIMEM = 2   # a multicast view (get_multicast_buffer)
    EXTERNAL = 3   # memory registered with register_external_buffer


class NvshmemResource:
    """allocate / deallocate on the symmetric heap (both collective over
    TEAM_WORLD, as buffer() and free() are) for a device: a cuda.core
    Device, an ordinal, or None (the cpu backend has none)."""

    def __init__(self, device=None):
        ordinal = getattr(device, "device_id", device)
        if ordinal is not None and (not isinstance(ordinal, int) or isinstance(ordinal, bool)
                                    or ordinal < 0):
            raise invalid(f"NvshmemResource: device={device!r} is not a Device, an ordinal or "
                          "None")
        self.device = device
        self._ordinal = -1 if ordinal is None else ordinal

    def allocate(self, size, stream=None, release=False, except_on_del=True):
        """A Buffer of size bytes (stream is not used: the allocation is collective)."""
        return _memory.buffer(size, release=release, except_on_del=except_on_del)

    def deallocate(self, ptr, size, stream=None):
        """Frees the Buffer that allocate() made at address ptr (size is not
        used: the allocation knows its own); any other address raises."""
        require_initialized("NvshmemResource.deallocate")
        record = _memory._live.get(ptr)
        if record is None:
            raise invalid(f"NvshmemResource.deallocate: ptr={ptr!r} is not the address of a live "
                          "allocation of the symmetric heap")
        _memory.free(record[1])

    def get_peer_buffer(self, buffer, pe):
        return _memory.get_peer_buffer(buffer, pe)

    @property
    def is_device_accessible(self):
        return _symmem.backend_name() == "gpu"

    @property
    def is_host_accessible(self):
        return _symmem.backend_name() != "gpu"

    @property
    def device_id(self):
        return self._ordinal

    def __repr__(self):
        return f"<NvshmemResource device={self.device}>"


__all__ = ["BufferTypes", "NvshmemResource"]
