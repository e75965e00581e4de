"""External memory made symmetric: register_external_* maps memory the
program allocated itself (on the gpu backend: CUDA VMM memory, made with
cuMemCreate and cuMemMap) into every PE's symmetric address space. The calls
are collective; the result is a new object over the symmetric address, which
is what symmem calls take. The caller's memory stays its own: it must outlive
the registration, and unregister_external_* ends it."""

import warnings

from symmem import _symmem
from symmem._errors import invalid, require_initialized
from symmem._lifecycle import _finalize_hooks
from symmem._memory import Buffer, _address_of, _external, _numpy_dtype, _sequence, _wrap, buffer_of
from symmem.interop.torch import _torch, _typed


def _extent(obj, call):
    """(address, size) of the memory to register: a cuda.core Buffer
    (.handle, .size in bytes), or any array or tensor symmem can read."""
    if isinstance(obj, Buffer):
        raise invalid(
            f"{call}: this Buffer is already symmetric memory; register only "
            "memory allocated outside symmem"
        )
    if hasattr(obj, "handle") and hasattr(obj, "size") and not hasattr(obj, "shape"):
        return int(obj.handle), int(obj.size)
    return _address_of(obj, call, "obj")


def _register(obj, call):
    require_initialized(call)
    address, size = _extent(obj, call)
    buf = _symmem.register_external(address, size, call)
    _external[buf.handle] = (next(_sequence), buf, obj)  # keeps obj alive while registered
    return buf


def _unregister(buf, call):
    require_initialized(call)
    if not isinstance(buf, Buffer) or _external.get(buf.handle, (None, None))[1] is not buf:
        raise invalid(
            f"{call}: expected the object register_external_* returned, got {type(buf).__name__}"
        )
    _symmem.unregister_external(buf)
    del _external[buf.handle]


def register_external_buffer(buffer):
    """Register external memory as symmetric, returning a Buffer over it.

    Collective: every PE registers memory of the same size, in the same order. The
    memory stays the caller's: it must outlive the registration, which
    unregister_external_buffer() (or finalize()) ends.

    Args:
        buffer: a cuda.core Buffer (or any object with .handle, an address,
            and .size in bytes), or any array or tensor symmem can read.

    Returns:
        A symmem Buffer over the registered memory.

    Raises:
        NvshmemInvalid: buffer is already symmetric memory, is not memory
            symmem can read, or has no bytes; symmem is not initialised.
        NotImplementedError: the backend is not gpu (the cpu backend has
            only its own heap).
        NvshmemError: the gpu backend could not map the memory (it is not
            CUDA VMM memory), a PE died, or a timeout passed.

    Example:
        >>> try:  # the cpu backend
        ...     symmem.register_external_buffer(np.zeros(4))
        ... except NotImplementedError as error:
        ...     print("gpu backend" in str(error))
        True

        On the gpu backend, with memory mapped by cuMemCreate and cuMemMap::

            sym = symmem.register_external_buffer(buffer)
            symmem.put(sym, src, peer)          # sym is symmetric memory
            symmem.barrier_all()
            symmem.unregister_external_buffer(sym)
    """
    return _register(buffer, "register_external_buffer")


def register_external_array(array):
    """Register external memory as symmetric, returning an array over it.

    Collective: every PE registers memory of the same size, in the same order. The
    memory stays the caller's: it must outlive the registration, which
    unregister_external_array() (or finalize()) ends.

    Args:
        array: a contiguous CuPy array (any array symmem can read).

    Returns:
        An array of array's shape, dtype and order over the registered
        memory.

    Raises:
        NvshmemInvalid: array is already symmetric memory, is not memory
            symmem can read, or has no bytes; symmem is not initialised.
        NotImplementedError: the backend is not gpu (the cpu backend has
            only its own heap).
        NvshmemError: the gpu backend could not map the memory (it is not
            CUDA VMM memory), a PE died, or a timeout passed.

    Example:
        >>> try:  # the cpu backend
        ...     symmem.register_external_array(np.zeros(4))
        ... except NotImplementedError as error:
        ...     print("gpu backend" in str(error))
        True

        On the gpu backend, with memory mapped by cuMemCreate and cuMemMap::

            sym = symmem.register_external_array(array)
            symmem.put(sym, src, peer)          # sym is symmetric memory
            symmem.barrier_all()
            symmem.unregister_external_array(sym)
    """
    buf = _register(array, "register_external_array")
    order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
    flat = _wrap(buf, _numpy_dtype(array.dtype, "register_external_array"), array.size)
    return flat.reshape(array.shape, order=order)


def register_external_tensor(tensor):
    """Register external memory as symmetric, returning a tensor over it.

    Collective: every PE registers memory of the same size, in the same order. The
    memory stays the caller's: it must outlive the registration, which
    unregister_external_tensor() (or finalize()) ends.

    Args:
        tensor: a contiguous torch CUDA tensor.

    Returns:
        A torch tensor of tensor's shape and dtype over the registered
        memory.

    Raises:
        ModuleNotFoundError: torch is not installed.
        NvshmemInvalid: tensor is already symmetric memory, is not memory
            symmem can read, or has no bytes; symmem is not initialised.
        NotImplementedError: the backend is not gpu (the cpu backend has
            only its own heap).
        NvshmemError: the gpu backend could not map the memory (it is not
            CUDA VMM memory), a PE died, or a timeout passed.

    Example:
        >>> import torch
        >>> try:  # the cpu backend
        ...     symmem.register_external_tensor(torch.zeros(4))
        ... except NotImplementedError as error:
        ...     print("gpu backend" in str(error))
        True

        On the gpu backend, with memory mapped by cuMemCreate and cuMemMap::

            sym = symmem.register_external_tensor(tensor)
            symmem.put(sym, src, peer)          # sym is symmetric memory
            symmem.barrier_all()
            symmem.unregister_external_tensor(sym)
    """
    torch = _torch("register_external_tensor")
    buf = _register(tensor, "register_external_tensor")
    return _typed(torch.from_dlpack(buf), tensor.dtype, buf).reshape(tensor.shape)


def unregister_external_buffer(buffer):
    """End a registration that register_external_buffer() made (collective).

    Args:
        buffer: the object register_external_buffer() returned.

    Raises:
        NvshmemInvalid: buffer is not what register_external_buffer() returned (or starts inside
            it), or was unregistered already; symmem is not initialised.
        NvshmemError: the backend failed, a PE died, or a timeout passed.

    Example:
        >>> try:
        ...     symmem.unregister_external_buffer(np.zeros(4))
        ... except symmem.NvshmemInvalid as error:
        ...     print("not on the symmetric heap" in str(error) or "expected" in str(error))
        True

        On the gpu backend, with memory mapped by cuMemCreate and cuMemMap::

            sym = symmem.register_external_buffer(buffer)
            symmem.put(sym, src, peer)          # sym is symmetric memory
            symmem.barrier_all()
            symmem.unregister_external_buffer(sym)
    """
    _unregister(buffer, "unregister_external_buffer")


def unregister_external_array(array):
    """End a registration that register_external_array() made (collective).

    Args:
        array: the object register_external_array() returned.

    Raises:
        NvshmemInvalid: array is not what register_external_array() returned (or starts inside
            it), or was unregistered already; symmem is not initialised.
        NvshmemError: the backend failed, a PE died, or a timeout passed.

    Example:
        >>> try:
        ...     symmem.unregister_external_array(np.zeros(4))
        ... except symmem.NvshmemInvalid as error:
        ...     print("not on the symmetric heap" in str(error) or "expected" in str(error))
        True

        On the gpu backend, with memory mapped by cuMemCreate and cuMemMap::

            sym = symmem.register_external_array(array)
            symmem.put(sym, src, peer)          # sym is symmetric memory
            symmem.barrier_all()
            symmem.unregister_external_array(sym)
    """
    buf, offset = buffer_of(array, "unregister_external_array")
    if offset:
        raise invalid(
            f"unregister_external_array: the array starts {offset} bytes inside the "
            "registered memory; pass the array register_external_array returned"
        )
    _unregister(buf, "unregister_external_array")


def unregister_external_tensor(tensor):
    """End a registration that register_external_tensor() made (collective).

    Args:
        tensor: the object register_external_tensor() returned.

    Raises:
        NvshmemInvalid: tensor is not what register_external_tensor() returned (or starts inside
            it), or was unregistered already; symmem is not initialised.
        NvshmemError: the backend failed, a PE died, or a timeout passed.

    Example:
        >>> import torch
        >>> try:
        ...     symmem.unregister_external_tensor(torch.zeros(4))
        ... except symmem.NvshmemInvalid as error:
        ...     print("not on the symmetric heap" in str(error) or "expected" in str(error))
        True

        On the gpu backend, with memory mapped by cuMemCreate and cuMemMap::

            sym = symmem.register_external_tensor(tensor)
            symmem.put(sym, src, peer)          # sym is symmetric memory
            symmem.barrier_all()
            symmem.unregister_external_tensor(sym)
    """
    buf, offset = buffer_of(tensor, "unregister_external_tensor", "tensor")
    if offset:
        raise invalid(
            f"unregister_external_tensor: the tensor starts {offset} bytes inside "
            "the registered memory; pass the tensor register_external_tensor returned"
        )
    _unregister(buf, "unregister_external_tensor")


def _unregister_leftovers():
    """Unregisters what the program left registered, in registration order
    (the same on every PE), before the heap goes away."""
    leftovers = sorted(_external.values(), key=lambda record: record[0])
    _external.clear()
    for _, buf, _ in leftovers:
        warnings.warn(
            f"symmem: finalize() unregistered {buf!r}; unregister it with unregister_external_*",
            RuntimeWarning,
            stacklevel=3,
        )
        _symmem.unregister_external(buf, call="finalize")


_finalize_hooks.insert(0, _unregister_leftovers)

__all__ = [
    "register_external_buffer",
    "register_external_array",
    "register_external_tensor",
    "unregister_external_buffer",
    "unregister_external_array",
    "unregister_external_tensor",
]
