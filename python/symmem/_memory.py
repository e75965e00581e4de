"""Symmetric memory: Buffers, and NumPy (cpu) or CuPy (gpu) arrays on them. Every allocation and
free is collective over TEAM_WORLD; finalize() frees what was forgotten."""

import itertools
import math
import operator
import warnings

import numpy as np

from symmem import _symmem
from symmem._errors import invalid, require_initialized
from symmem._lifecycle import _finalize_hooks
from symmem._resolver import note, owner_of

Buffer = _symmem.Buffer

# handle -> (sequence number, Buffer, release flag): what finalize() frees.
_live = {}
# handle -> (sequence number, Buffer, the caller's object): external memory
# registered with register_external_*; finalize() unregisters it.
_external = {}
_sequence = itertools.count()


def buffer(size, release=False, except_on_del=True):
    """Allocate size bytes on every PE's symmetric heap: collective.

    Every PE calls it with the same size, in the same order as its other
    allocations. The memory is not initialised. free() releases it.

    Args:
        size: the number of bytes (0 allocates nothing: a Buffer with
            handle 0).
        release: True: a leak of it is freed by finalize() without a
            warning.
        except_on_del: accepted for NVSHMEM4Py; symmem never frees memory
            when its object is garbage-collected (free it explicitly, or
            finalize() does).

    Returns:
        A Buffer: this PE's copy, at the same offset in every PE's heap.

    Raises:
        NvshmemInvalid: size is negative or not an int; release is not a
            bool; the PEs asked for different sizes (the cpu backend
            checks); symmem is not initialised.
        NvshmemError: the symmetric heap has no room for it (its size is
            SYMMEM_SYMMETRIC_SIZE), a PE died, SYMMEM_TIMEOUT seconds passed,
            or the backend failed.

    Example:
        >>> buf = symmem.buffer(64)
        >>> buf.size
        64
        >>> symmem.free(buf)
    """
    return _allocate(size, release, "buffer")


def _allocate(size, release, call, alignment=None):
    """buffer() for the factory named call (which error messages name), at a
    multiple of alignment where one is given."""
    if not isinstance(release, (bool, np.bool_)):  # finalize() reads it as a bool
        raise invalid(f"{call}: release={release!r:.60} is not a bool")
    buf = _symmem.malloc(size, call, alignment)
    if buf.size:  # size 0 allocates nothing (handle 0): nothing to track or free
        _live[buf.handle] = (next(_sequence), buf, release)
        note(buf)  # owner_of may name it by its memory
    return buf


def free(buf):
    """Free a Buffer that buffer() made: collective.

    Every PE frees the same allocation, in the same order. Arrays and
    views over the Buffer become unusable: calls refuse them.

    Args:
        buf: the Buffer buffer() returned (not a peer view of it).

    Raises:
        NvshmemInvalid: buf is not a Buffer, is a peer view, or was freed
            already (or its runtime ended); the PEs freed different
            allocations (the cpu backend checks); symmem is not
            initialised.
        NvshmemError: a PE died, SYMMEM_TIMEOUT seconds passed, or the
            backend failed.

    Example:
        >>> buf = symmem.buffer(16)
        >>> symmem.free(buf)
        >>> buf.freed
        True
    """
    _symmem.free(buf)
    _live.pop(buf.handle, None)


def _free_leaks():
    """Frees every live allocation, in allocation order (the same on every PE).
    One whose free raises (a timeout, say) stays tracked for the next finalize."""
    for handle, (_, buf, release) in sorted(_live.items(), key=lambda item: item[1][0]):
        if not release:
            warnings.warn(
                f"symmem: finalize() freed a leaked {buf!r}; free it with free(), "
                "free_array() or free_tensor()",
                RuntimeWarning,
                stacklevel=3,
            )
        _symmem.free(buf, call="finalize")  # "finalize: freeing the Buffer at ...: timed out"
        del _live[handle]


_finalize_hooks.append(_free_leaks)


def _address_of(obj, call, arg="array"):
    """The start address and byte size of a contiguous array-like (as put and
    get read it: the C module's rule)."""
    return _symmem.extent(obj, call, arg)


def buffer_of(obj, call, arg="array"):
    """(Buffer, byte offset) of the allocation that holds obj."""
    require_initialized(call)
    # An array made over a Buffer is checked through that Buffer: its
    # address may already belong to a newer allocation after a free.
    backing = owner_of(obj)
    if backing is not None and backing.freed:
        raise invalid(f"{call}: {arg} is on a Buffer that was already freed")
    address, nbytes = _address_of(obj, call, arg)
    if backing is not None and backing.size == 0 and backing.pe == _symmem.my_pe():
        return backing, 0
    for table in (_live, _external):
        if backing is not None and table.get(backing.handle, (None, None))[1] is backing:
            return backing, address - backing.handle
    found = _symmem.find_allocation(address)
    record = None if found is None else _live.get(found[0]) or _external.get(found[0])
    if record is None:
        raise invalid(
            f"{call}: {arg} at 0x{address:x} is not on the symmetric heap "
            "(not allocated by symmem, or already freed)"
        )
    return record[1], address - found[0]


def _free_object(obj, call):
    buf, offset = buffer_of(obj, call)
    if offset != 0:
        raise invalid(
            f"{call}: the object starts {offset} bytes inside its allocation; pass "
            "the object that array()/tensor() returned"
        )
    free(buf)


# ---- NumPy arrays ----


def _shape_tuple(shape, call):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:  # ints only: int(1.5) or int("2") would pass for a size
        shape = tuple(operator.index(s) for s in shape)
    except (TypeError, ValueError):
        raise invalid(f"{call}: shape={shape!r} is not an int or a sequence of ints") from None
    if any(s < 0 for s in shape):
        raise invalid(f"{call}: shape={shape} has a negative dimension")
    return shape


def _numpy_dtype(dtype, call):
    if isinstance(dtype, str) and dtype == "bfloat16":
        try:  # NumPy knows bfloat16 through ml_dtypes
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            raise invalid(f"{call}: dtype='bfloat16' needs ml_dtypes installed") from None
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError):
        name = getattr(dtype, "name", None) or str(dtype).replace("torch.", "")
        try:
            return np.dtype(name)
        except (TypeError, ValueError):
            raise invalid(f"{call}: dtype={dtype!r} is not a dtype NumPy knows") from None


def _numeric(dt, call):
    """dt, if symmem can move and combine its elements: numbers (bool, integers,
    floats, complex, bfloat16) in native byte order. Checked before allocating:
    every allocation is collective."""
    if (dt.kind in "biufc" or dt.name in _symmem.DTYPES) and dt.isnative and not dt.fields:
        return dt
    raise invalid(
        f"{call}: dtype={dt!s} is not numbers in native byte order (object, "
        "structured, void, string and datetime dtypes are refused: symmem moves and "
        "combines numbers)"
    )


def _wrap(buf, dt, count, offset=0, shape=None, order="C"):
    """An array of count dt elements over buf (flat, or of shape in order):
    NumPy on host memory, CuPy on device memory. Either keeps buf alive; a
    NumPy array has buf itself as its .base, which the C module reads to
    refuse the array once buf is freed."""
    shape = (count,) if shape is None else shape
    if buf.device_id < 0 and count == 0:  # np.ndarray() would not keep an empty buf
        return np.frombuffer(buf, dtype=dt, count=0).reshape(shape, order=order)
    if buf.device_id < 0:
        return np.ndarray(shape, dtype=dt, buffer=buf, offset=offset, order=order)
    import cupy

    memory = cupy.cuda.UnownedMemory(buf.handle, buf.size, buf, buf.device_id)
    flat = cupy.ndarray((count,), dtype=dt, memptr=cupy.cuda.MemoryPointer(memory, offset))
    return flat.reshape(shape, order=order)


def array(shape, dtype="float32", release=False, morder="C", except_on_del=True):
    """Allocate an array on every PE's symmetric heap: collective.

    NumPy on the cpu backend, CuPy on the gpu backend. Every PE calls it
    with the same shape and dtype; the elements are not initialised. A
    contiguous slice of the array is symmetric too. free_array() releases it.

    Args:
        shape: an int or a sequence of ints.
        dtype: a NumPy dtype or its name (bool, the integer, float and
            complex dtypes; "bfloat16" with ml_dtypes installed).
        release: True: a leak of it is freed by finalize() without a
            warning.
        except_on_del: accepted for NVSHMEM4Py; symmem never frees memory
            when its object is garbage-collected (free it explicitly, or
            finalize() does).
        morder: "C" (row-major) or "F" (column-major).

    Returns:
        A NumPy (cpu) or CuPy (gpu) array over this PE's copy.

    Raises:
        NvshmemInvalid: shape is not an int or a sequence of ints, or has
            a negative dimension; dtype is not a dtype NumPy knows, or not
            numbers in native byte order; morder is not "C" or "F";
            release is not a bool; the PEs asked for different sizes (the
            cpu backend checks); symmem is not initialised.
        NvshmemError: the symmetric heap has no room for it (its size is
            SYMMEM_SYMMETRIC_SIZE), a PE died, SYMMEM_TIMEOUT seconds passed,
            or the backend failed.

    Example:
        >>> a = symmem.array((2, 3), dtype="int64")
        >>> a.shape, a.dtype.name
        ((2, 3), 'int64')
        >>> a[:] = symmem.my_pe()
        >>> symmem.free_array(a)
    """
    shape = _shape_tuple(shape, "array")
    dt = _numeric(_numpy_dtype(dtype, "array"), "array")
    if not isinstance(morder, str) or morder not in ("C", "F"):
        raise invalid(f"array: morder={morder!r:.60} must be 'C' or 'F'")
    count = math.prod(shape)
    buf = _allocate(count * dt.itemsize, release, "array")
    return _wrap(buf, dt, count, shape=shape, order=morder)


def bytearray(shape, dtype="float32", release=False, morder="C", except_on_del=True):
    """Allocate a flat uint8 array of shape x dtype's bytes: collective.

    NVSHMEM4Py's call; as array(), with the bytes of an array of shape
    and dtype as a 1-D uint8 array.

    Args:
        shape: an int or a sequence of ints.
        dtype: the dtype whose size counts (a NumPy dtype or its name).
        release: True: a leak of it is freed by finalize() without a
            warning.
        except_on_del: accepted for NVSHMEM4Py; symmem never frees memory
            when its object is garbage-collected (free it explicitly, or
            finalize() does).
        morder: accepted for NVSHMEM4Py; the result is flat.

    Returns:
        A 1-D uint8 NumPy (cpu) or CuPy (gpu) array.

    Raises:
        NvshmemInvalid: shape or dtype is not valid (as for array());
            release is not a bool; the PEs asked for different sizes (the
            cpu backend checks); symmem is not initialised.
        NvshmemError: the symmetric heap has no room for it (its size is
            SYMMEM_SYMMETRIC_SIZE), a PE died, SYMMEM_TIMEOUT seconds passed,
            or the backend failed.

    Example:
        >>> b = symmem.bytearray((2, 2), dtype="float64")
        >>> b.shape, b.dtype.name
        ((32,), 'uint8')
        >>> symmem.free_array(b)
    """
    shape = _shape_tuple(shape, "bytearray")
    nbytes = math.prod(shape) * _numeric(_numpy_dtype(dtype, "bytearray"), "bytearray").itemsize
    buf = _allocate(nbytes, release, "bytearray")
    return _wrap(buf, np.dtype(np.uint8), nbytes)


def free_array(arr):
    """Free an array that array() or bytearray() made: collective.

    Every PE frees the same array, in the same order; views of it become
    unusable (calls refuse them).

    Args:
        arr: the array array() or bytearray() returned (not a slice that
            starts inside it).

    Raises:
        NvshmemInvalid: arr is not on the symmetric heap, starts inside its
            allocation, or was freed already; the PEs freed different
            arrays (the cpu backend checks); symmem is not initialised.
        NvshmemError: a PE died, SYMMEM_TIMEOUT seconds passed, or the
            backend failed.

    Example:
        >>> a = symmem.array(8)
        >>> symmem.free_array(a)
    """
    _free_object(arr, "free_array")


def array_get_buffer(arr):
    """The Buffer under a symmetric array, with its size and dtype.

    Args:
        arr: an array on the symmetric heap (or a slice of one).

    Returns:
        (Buffer, nbytes, dtype name): the whole allocation holding arr,
        arr's own size in bytes, and its dtype's name ("float32").

    Raises:
        NvshmemInvalid: arr is not memory, not on the symmetric heap, or
            was freed; symmem is not initialised.

    Example:
        >>> a = symmem.array(4, dtype="float32")
        >>> buf, nbytes, dtype = symmem.array_get_buffer(a)
        >>> buf.size, nbytes, dtype
        (16, 16, 'float32')
        >>> symmem.free_array(a)
    """
    buf, _ = buffer_of(arr, "array_get_buffer")
    dtype = getattr(arr, "dtype", None)
    name = str(dtype).replace("torch.", "") if dtype is not None else "uint8"
    return buf, int(getattr(arr, "nbytes", buf.size)), name


def get_peer_buffer(buf, pe):
    """A Buffer over PE pe's copy of buf: loads and stores go straight there.

    On the cpu backend every PE's copy is mapped; on the gpu backend, those
    of PEs in this GPU's NVLink (P2P) domain.

    Args:
        buf: a Buffer on the symmetric heap.
        pe: the PE whose copy to reach, in [0, n_pes()).

    Returns:
        A Buffer (a view: not to be freed) with .pe set to pe.

    Raises:
        NvshmemInvalid: buf is not a Buffer or was freed; pe is outside
            [0, n_pes()); symmem is not initialised.
        NotImplementedError: PE pe's copy cannot be reached with loads and
            stores from this PE (gpu: outside the NVLink domain).

    Example:
        >>> buf = symmem.buffer(8)
        >>> peer = symmem.get_peer_buffer(buf, 0)
        >>> peer.pe, peer.size
        (0, 8)
        >>> del peer
        >>> symmem.free(buf)
    """
    return _symmem.peer_buffer(buf, pe)


def get_peer_array(arr, pe):
    """An array over PE pe's copy of arr: its stores land in PE pe's memory.

    The same shape, dtype and order as arr. On the cpu backend every PE's
    copy is mapped; on the gpu backend, those of PEs in this GPU's NVLink
    (P2P) domain.

    Args:
        arr: a NumPy or CuPy array on the symmetric heap (or a slice).
        pe: the PE whose copy to reach, in [0, n_pes()).

    Returns:
        A NumPy (cpu) or CuPy (gpu) array.

    Raises:
        NvshmemInvalid: arr is not an array on the symmetric heap, or was
            freed; pe is outside [0, n_pes()); symmem is not initialised.
        NotImplementedError: PE pe's copy cannot be reached with loads and
            stores from this PE (gpu: outside the NVLink domain).

    Example:
        >>> a = symmem.array(4, dtype="int32")
        >>> a[:] = 0
        >>> symmem.barrier_all()
        >>> nxt = symmem.get_peer_array(a, (symmem.my_pe() + 1) % symmem.n_pes())
        >>> nxt[0] = 1  # a plain store into the next PE's a
        >>> symmem.barrier_all()
        >>> int(a[0])
        1
        >>> del nxt
        >>> symmem.free_array(a)
    """
    whole, offset = buffer_of(arr, "get_peer_array")
    if not hasattr(arr, "dtype") or not hasattr(arr, "flags"):
        raise invalid(f"get_peer_array: expected a NumPy or CuPy array, got {type(arr).__name__}")
    peer = _symmem.peer_buffer(whole, pe, "get_peer_array")
    order = "F" if arr.flags.f_contiguous and not arr.flags.c_contiguous else "C"
    return _wrap(peer, np.dtype(arr.dtype), arr.size, offset, arr.shape, order)
