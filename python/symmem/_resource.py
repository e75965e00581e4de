"""NvshmemResource: NVSHMEM4Py's memory resource (a cuda.core
MemoryResource there) over symmem's symmetric heap, and BufferTypes, the
kinds of Buffer it tells apart. Duck-typed: it does not need cuda.core."""

from enum import IntEnum

from symmem import _memory, _symmem
from symmem._errors import invalid, require_initialized


class BufferTypes(IntEnum):
    """The kinds of Buffer NVSHMEM4Py's memory resource tells apart.

    NORMAL: on the symmetric heap (buffer(), array(), tensor()); PEER: a
    view of another PE's copy (get_peer_buffer()); MULTIMEM: a multicast
    view (get_multicast_buffer()); EXTERNAL: memory registered with
    register_external_buffer().

    Example:
        >>> symmem.BufferTypes.PEER.value
        1
    """

    NORMAL = 0  # on the symmetric heap (buffer(), array(), tensor())
    PEER = 1  # a view of another PE's copy (get_peer_buffer)
    MULTIMEM = 2  # a multicast view (get_multicast_buffer)
    EXTERNAL = 3  # memory registered with register_external_buffer


class NvshmemResource:
    """NVSHMEM4Py's memory resource over the symmetric heap.

    allocate() and deallocate() are buffer() and free(): collective over
    TEAM_WORLD. Duck-typed after cuda.core's MemoryResource, without
    needing cuda.core.

    Args:
        device: a cuda.core Device, an ordinal, or None (the cpu backend
            has none).

    Raises:
        NvshmemInvalid: device is not a Device, a non-negative ordinal or
            None.

    Example:
        >>> mr = symmem.NvshmemResource()
        >>> buf = mr.allocate(32)
        >>> mr.deallocate(buf.handle, 32)
        >>> buf.freed
        True
    """

    def __init__(self, device=None):
        ordinal = getattr(device, "device_id", device)
        if ordinal is not None and (
            not isinstance(ordinal, int) or isinstance(ordinal, bool) or ordinal < 0
        ):
            raise invalid(f"NvshmemResource: device={device!r} is not a Device, an ordinal or None")
        self.device = device
        self._ordinal = -1 if ordinal is None else ordinal

    def allocate(self, size, stream=None, release=False, except_on_del=True):
        """A Buffer of size bytes: buffer(size, release, except_on_del).

        stream is not used: the allocation is collective and complete when
        it returns. Raises what buffer() raises.
        """
        return _memory.buffer(size, release=release, except_on_del=except_on_del)

    def deallocate(self, ptr, size, stream=None):
        """Free the Buffer that allocate() made at address ptr: free(buffer).

        size and stream are not used (the allocation knows its own size).
        Raises NvshmemInvalid where ptr is not the address of a live
        allocation of the symmetric heap, and what free() raises.
        """
        require_initialized("NvshmemResource.deallocate")
        record = _memory._live.get(ptr)
        if record is None:
            raise invalid(
                f"NvshmemResource.deallocate: ptr={ptr!r} is not the address of a live "
                "allocation of the symmetric heap"
            )
        _memory.free(record[1])

    def get_peer_buffer(self, buffer, pe):
        """get_peer_buffer(buffer, pe)."""
        return _memory.get_peer_buffer(buffer, pe)

    @property
    def is_device_accessible(self):
        """Whether kernels can reach the memory: True on the gpu backend."""
        return "device_memory" in _symmem.capabilities()

    @property
    def is_host_accessible(self):
        """Whether the CPU can reach the memory: True on the cpu backend."""
        return "device_memory" not in _symmem.capabilities()

    @property
    def device_id(self):
        """The device's ordinal, -1 for none."""
        return self._ordinal

    def __repr__(self):
        return f"<NvshmemResource device={self.device}>"


__all__ = ["BufferTypes", "NvshmemResource"]
