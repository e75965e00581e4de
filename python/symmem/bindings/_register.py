"""NVSHMEM's buffer_register_symmetric family: memory the program mapped
itself (CUDA VMM memory, made with cuMemCreate and cuMemMap) made symmetric
by address, as symmem.register_external_buffer makes it from an object; it
is the same registration (on the cpu backend it raises NotImplementedError,
as register_external_buffer does)."""

from symmem._errors import invalid, require_initialized
from symmem._external import _register, _unregister
from symmem._memory import _external
from symmem.bindings._heap import check_sizes


class _Extent:
    """What registration reads of the memory: its address and its bytes."""

    def __init__(self, handle, size):
        self.handle, self.size = handle, size


def _register_at(call, buf_ptr, size, flags, **more):
    check_sizes(call, buf_ptr=buf_ptr, size=size, **more, flags=flags)
    if flags != 0:
        raise invalid(f"{call}: flags={flags} is not 0 (NVSHMEM defines no flags)")
    return _register(_Extent(buf_ptr, size), call).handle


def buffer_register_symmetric(buf_ptr, size, flags):
    """Collective: registers size bytes at buf_ptr; returns their symmetric address."""
    return _register_at("buffer_register_symmetric", buf_ptr, size, flags)


def buffer_register_symmetric_at_preferred_address(buf_ptr, size, preferred_addr, flags):
    """Collective: buffer_register_symmetric; the preferred address is a hint,
    which symmem does not take (NVSHMEM may not either): the address returned
    is the one to use."""
    return _register_at(
        "buffer_register_symmetric_at_preferred_address",
        buf_ptr,
        size,
        flags,
        preferred_addr=preferred_addr,
    )


def buffer_unregister_symmetric(mmap_ptr, size):
    """Collective: ends the registration whose symmetric address is mmap_ptr; 0."""
    call = "buffer_unregister_symmetric"
    require_initialized(call)
    check_sizes(call, mmap_ptr=mmap_ptr, size=size)
    record = _external.get(mmap_ptr)
    if record is None or not isinstance(record[2], _Extent):
        raise invalid(
            f"{call}: mmap_ptr={mmap_ptr:#x} is not an address "
            "buffer_register_symmetric returned (or it was unregistered already)"
        )
    if size != record[1].size:
        raise invalid(
            f"{call}: size={size} is not the {record[1].size} bytes registered at "
            f"mmap_ptr={mmap_ptr:#x}"
        )
    _unregister(record[1], call)
    return 0
