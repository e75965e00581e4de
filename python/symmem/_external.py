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
from symmem._memory import (Buffer, _address_of, _external, _numpy_dtype, _sequence, _wrap,
                            buffer_of)


def _extent(obj, call):
    """(address, size) of the memory to register: a cuda.core Buffer
    (.handle, .size in bytes), or any array or tensor symmem can read."""
    if isinstance(obj, Buffer):
        raise invalid(f"{call}: this Buffer is already symmetric memory; register only "
                      "memory allocated outside symmem")
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
        raise invalid(f"{call}: expected the object register_external_* returned, got "
                      f"{type(buf).__name__}")
    _symmem.unregister_external(buf)
    del _external[buf.handle]


def register_external_buffer(buffer):
    """A symmem Buffer over external memory (a cuda.core Buffer, or any
    object with a device address and a size), symmetric on every PE."""
    return _register(buffer, "register_external_buffer")


def register_external_array(array):
    """A CuPy array of array's shape and dtype over its registered memory."""
    buf = _register(array, "register_external_array")
    order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
    flat = _wrap(buf, _numpy_dtype(array.dtype, "register_external_array"), array.size)
    return flat.reshape(array.shape, order=order)


def register_external_tensor(tensor):
    """A torch tensor of tensor's shape and dtype over its registered memory."""
    import torch
    buf = _register(tensor, "register_external_tensor")
    return torch.from_dlpack(buf).view(tensor.dtype).reshape(tensor.shape)


def unregister_external_buffer(buffer):
    _unregister(buffer, "unregister_external_buffer")


def unregister_external_array(array):
    buf, offset = buffer_of(array, "unregister_external_array")
    if offset:
        raise invalid(f"unregister_external_array: the array starts {offset} bytes inside the "
                      "registered memory; pass the array register_external_array returned")
    _unregister(buf, "unregister_external_array")


def unregister_external_tensor(tensor):
    buf, offset = buffer_of(tensor, "unregister_external_tensor", "tensor")
    if offset:
        raise invalid(f"unregister_external_tensor: the tensor starts {offset} bytes inside "
                      "the registered memory; pass the tensor register_external_tensor returned")
    _unregister(buf, "unregister_external_tensor")


def _unregister_leftovers():
    """Unregisters what the program left registered, in registration order
    (the same on every PE), before the heap goes away."""
    leftovers = sorted(_external.values(), key=lambda record: record[0])
    _external.clear()
    for _, buf, _ in leftovers:
        warnings.warn(f"symmem: finalize() unregistered {buf!r}; unregister it with "
                      "unregister_external_*", RuntimeWarning, stacklevel=3)
        _symmem.unregister_external(buf)


_finalize_hooks.insert(0, _unregister_leftovers)

__all__ = ["register_external_buffer", "register_external_array", "register_external_tensor",
           "unregister_external_buffer", "unregister_external_array",
           "unregister_external_tensor"]
