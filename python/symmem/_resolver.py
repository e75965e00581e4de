"""Memory the C module cannot read through the buffer protocol: torch
tensors, __cuda_array_interface__, __array_interface__ and DLPack producers.
resolve(obj) -> (address, nbytes, itemsize, format, readonly, keepalive).
format is the dtype's name ('float32', 'bfloat16'; NumPy's and torch's
names are the library's): the C module maps names to dtypes."""
import numpy as np


def _dense(dims, itemsize):
    """Whether (dim, stride) pairs, fastest-varying first, leave no gaps."""
    expected = itemsize
    for dim, stride in dims:
        if dim > 1 and stride != expected:
            return False
        expected *= dim
    return True


def _from_interface(obj, interface):
    address, readonly = interface["data"]
    shape = interface["shape"]
    dtype = np.dtype(interface["typestr"])
    strides = interface.get("strides")
    count = int(np.prod(shape)) if shape else 1
    if strides is not None:
        dims = list(zip(shape, strides))
        if not (_dense(reversed(dims), dtype.itemsize) or _dense(dims, dtype.itemsize)):
            raise TypeError("not contiguous")  # neither C nor Fortran order
    # bfloat16 (ml_dtypes) has no typestr of its own: its interface says only '<V2'.
    own = getattr(obj, "dtype", None)
    name = own.name if isinstance(own, np.dtype) else dtype.name
    return address, count * dtype.itemsize, dtype.itemsize, name, bool(readonly), obj


def _from_torch(tensor):
    if not tensor.is_contiguous():
        raise TypeError("tensor is not contiguous")
    name = str(tensor.dtype).replace("torch.", "")
    size = tensor.element_size()
    return tensor.data_ptr(), tensor.numel() * size, size, name, False, tensor


def resolve(obj):
    module = type(obj).__module__
    if module.startswith("torch") and hasattr(obj, "data_ptr"):
        return _from_torch(obj)
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is None:
        interface = getattr(obj, "__array_interface__", None)
    if interface is not None:
        return _from_interface(obj, interface)
    if hasattr(obj, "__dlpack__"):
        view = np.from_dlpack(obj)
        if not (view.flags.c_contiguous or view.flags.f_contiguous):
            raise TypeError("not contiguous")
        return (view.__array_interface__["data"][0], view.nbytes, view.itemsize,
                view.dtype.name, not view.flags.writeable, view)
    raise TypeError(f"{type(obj).__name__} is not memory")
