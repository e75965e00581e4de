"""Memory the C module cannot read through the buffer protocol: torch
tensors, __cuda_array_interface__, __array_interface__ and DLPack producers.
resolve(obj) -> (address, nbytes, itemsize, format, readonly, keepalive, order).
format is the dtype's name ('float32', 'bfloat16'; NumPy's and torch's
names are the library's), after '<' or '>' where the byte order is not this
machine's: the C module maps names to dtypes and refuses what is not numbers.
order is "C" or "F" where only that order lays the elements out (an array
of several dimensions), else "A": the C module refuses to copy between a C
and a Fortran array, whose elements would land transposed.
A TypeError means "not memory"; any other exception becomes NvshmemInvalid
naming the call and the argument, with this exception's text.

owner_of(obj) -> the Buffer obj was made over, or None: the C module walks
NumPy's .base chain itself and asks here for the rest (CuPy arrays, torch
tensors), to refuse an object whose allocation was freed."""

import weakref

import numpy as np

from symmem import _symmem

Buffer = _symmem.Buffer
# The attribute interop.torch sets on the tensor it makes over a Buffer (the
# base of every view of it): the Buffer.
TENSOR_BUFFER = "_symmem_buffer"
# Every Buffer of this PE's allocations that is still alive, freed or not
# (_memory notes each): where torch or CuPy made a tensor or array itself
# over a symmetric one, the memory names its Buffer (_covering).
_BUFFERS = weakref.WeakSet()


def note(buf):
    """buf is an allocation's Buffer: owner_of may name it by its memory."""
    _BUFFERS.add(buf)


def _dense(dims, itemsize):
    """Whether (dim, stride) pairs, fastest-varying first, leave no gaps."""
    expected = itemsize
    for dim, stride in dims:
        if dim > 1 and stride != expected:
            return False
        expected *= dim
    return True


def _order(dims, unit):
    """'C', 'F' or 'A' (both, or neither) for (dim, stride) pairs, slowest-varying
    first, with strides in units of unit."""
    c, f = _dense(reversed(dims), unit), _dense(dims, unit)
    return "C" if c and not f else "F" if f and not c else "A"


def _interface_fields(interface):
    """(address, readonly, shape, typestr, strides) of an array interface
    dict, or ValueError saying what is malformed."""
    if not isinstance(interface, dict):
        raise ValueError(f"its array interface is a {type(interface).__name__}, not a dict")
    missing = [key for key in ("data", "shape", "typestr") if key not in interface]
    if missing:
        raise ValueError(f"its array interface lacks {', '.join(map(repr, missing))}")
    data, shape = interface["data"], interface["shape"]
    if not (isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], int)):
        raise ValueError(f"its array interface's data={data!r} is not (address, readonly)")
    if not (isinstance(shape, tuple) and all(isinstance(d, int) and d >= 0 for d in shape)):
        raise ValueError(f"its array interface's shape={shape!r} is not a tuple of sizes")
    strides = interface.get("strides")
    if strides is not None and not (
        isinstance(strides, tuple)
        and len(strides) == len(shape)
        and all(isinstance(s, int) for s in strides)
    ):
        raise ValueError(f"its array interface's strides={strides!r} do not match its shape")
    return data[0], bool(data[1]), shape, interface["typestr"], strides


def _from_interface(obj, interface):
    address, readonly, shape, typestr, strides = _interface_fields(interface)
    try:
        dtype = np.dtype(typestr)
    except (TypeError, ValueError):
        raise ValueError(f"its array interface's typestr={typestr!r} is not a dtype") from None
    count = int(np.prod(shape)) if shape else 1
    if strides is None:  # C order, the interface's default
        strides = tuple(int(np.prod(shape[k + 1 :])) * dtype.itemsize for k in range(len(shape)))
    dims = list(zip(shape, strides))
    if not (_dense(reversed(dims), dtype.itemsize) or _dense(dims, dtype.itemsize)):
        raise ValueError("it is not contiguous (pass a contiguous array or slice)")
    # bfloat16 (ml_dtypes) has no typestr of its own: its interface says only '<V2'.
    own = getattr(obj, "dtype", None)
    name = own.name if isinstance(own, np.dtype) else dtype.name
    if not dtype.isnative:
        name = dtype.byteorder + name  # the C module refuses a swapped byte order
    order = _order(dims, dtype.itemsize)
    return address, count * dtype.itemsize, dtype.itemsize, name, readonly, obj, order


def _from_torch(tensor):
    """A tensor laid out as one block, row-major or (as tensor(..., morder="F")
    makes them) column-major, as NumPy arrays are taken; torch's strides
    count elements."""
    dims = list(zip(tensor.shape, tensor.stride()))
    if not tensor.is_contiguous() and not _dense(dims, 1):
        raise ValueError(
            "it is not contiguous (pass a row-major or column-major tensor, or a contiguous slice)"
        )
    name = str(tensor.dtype).replace("torch.", "")
    size = tensor.element_size()
    order = _order(dims, 1)
    return tensor.data_ptr(), tensor.numel() * size, size, name, False, tensor, order


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
            raise ValueError("it is not contiguous (pass a contiguous array or slice)")
        return (
            view.__array_interface__["data"][0],
            view.nbytes,
            view.itemsize,
            view.dtype.name,
            not view.flags.writeable,
            view,
            _order(list(zip(view.shape, view.strides)), view.itemsize),
        )
    raise TypeError(f"{type(obj).__name__} is not memory")


def owner_of(obj):
    """The Buffer obj was made over, or None: NumPy arrays reach it through
    .base (and np.frombuffer's memoryview), CuPy arrays through the memory
    _memory._wrap gave them, torch tensors through their base tensor, which
    interop.torch marks; arrays and tensors that CuPy or torch made
    themselves over a symmetric one by their memory (_covering)."""
    module = type(obj).__module__
    if module.startswith("torch"):
        found = getattr(obj, TENSOR_BUFFER, None)
        if found is None:
            found = getattr(obj._base, TENSOR_BUFFER, None)
        if found is not None:
            return found
        return _covering(obj.data_ptr(), obj.numel() * obj.element_size(), "torch", "tensor")
    if not isinstance(obj, np.ndarray):  # NumPy's .data is a memoryview
        memory = getattr(getattr(obj, "data", None), "mem", None)
        owner = getattr(memory, "_owner", None)
        if isinstance(owner, Buffer):
            return owner
        if module.startswith("cupy") and memory is not None:
            return _covering(obj.data.ptr, obj.nbytes, "CuPy", "array")
    for _ in range(64):
        if isinstance(obj, Buffer):
            return obj
        if isinstance(obj, memoryview):
            obj = obj.obj
        elif isinstance(obj, np.ndarray):
            obj = obj.base
        else:
            return None
    return None


def _covering(start, nbytes, library, kind):
    """The Buffer under an array or tensor that library made itself over a
    symmetric one (torch.from_numpy, as_tensor, from_dlpack; CuPy's
    from_dlpack): the library keeps that array where Python cannot see it
    (a DLPack capsule's context), but alive. So where the Buffer of a freed
    allocation at this memory is alive, the object may be over it, and a
    newer allocation may have its address: refused (ValueError, which the C
    module reports naming the call). Else the live Buffer there; None where
    none covers it (private memory)."""
    end = start + nbytes
    if not _symmem._on_heap(start, nbytes):
        return None  # private memory (the common case: no scan)
    live = None
    for buf in list(_BUFFERS):
        if buf.ptr <= start and end <= buf.ptr + buf.size:
            if buf.freed:
                raise ValueError(
                    f"{library} made this {kind} itself over symmetric memory at {start:#x}, "
                    f"and the Buffer of a freed allocation there ({buf.ptr:#x}, {buf.size} "
                    f"bytes) is still alive, so the {kind} may be over freed memory that a newer "
                    "allocation now has; drop what holds the freed array or Buffer (del), or "
                    "make symmetric arrays with symmem.array() or symmem.tensor()"
                )
            live = buf
    return live


def install():
    """Hands the C module resolve, owner_of and NumPy's array type."""
    _symmem._set_resolver(resolve, owner_of, np.ndarray)
