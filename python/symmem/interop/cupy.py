"""CuPy arrays on the symmetric heap: device memory, so the gpu backend.

The signatures are NVSHMEM4Py's (nvshmem.core.interop.cupy). CuPy is imported
only when an array is made, so this module imports, and its signatures can be
read, where CuPy is not installed."""

from symmem import _memory, _symmem
from symmem._errors import exception, invalid


def _require_gpu(call):
    backend = _symmem.backend_name()
    if "device_memory" not in _symmem.capabilities():
        raise exception(
            _symmem.ERR_UNSUPPORTED,
            f"{call}: CuPy arrays need the gpu backend, but the running backend is "
            f"{backend or 'none (not initialized)'}; use symmem.interop.numpy on cpu",
        )


def array(shape, dtype="float32", release=False, morder="C", except_on_del=True):
    """A CuPy array on the symmetric heap of every PE (collective over TEAM_WORLD).

    Args:
        shape: an int or a sequence of ints.
        dtype: a NumPy or CuPy dtype, or its name ("float32", "bfloat16", ...):
            numbers in native byte order.
        release: True: finalize() frees the array without a warning if it is
            still live; False warns (free it with free_array()).
        morder: "C" (row-major) or "F" (column-major, Fortran order).
        except_on_del: accepted for NVSHMEM4Py's signature; symmem frees
            only on free_array() or finalize(), never when the array is
            collected, so there is nothing to raise on.

    Returns:
        A cupy.ndarray over the allocation, on this PE's GPU.

    Raises:
        NotImplementedError: the running backend is not the gpu backend
            (use symmem.interop.numpy on cpu).
        NvshmemInvalid: shape, dtype or morder is not one symmem takes, or
            symmem is not initialized.
        NvshmemError: the symmetric heap has no room for it.

    Example:
        On each PE, after nvshmem.init() on the gpu backend::

            import symmem.interop.cupy as scp
            a = scp.array((2, 3), dtype="float32", morder="F")
            assert a.flags.f_contiguous
            scp.free_array(a)
    """
    _require_gpu("interop.cupy.array")
    return _memory.array(
        shape, dtype=dtype, release=release, morder=morder, except_on_del=except_on_del
    )


def empty(shape, dtype="float32", release=False, morder="C"):
    """An uninitialised CuPy array on the symmetric heap: array() without
    except_on_del, as symmem.interop.numpy.empty is (collective).

    Args:
        shape: an int or a sequence of ints.
        dtype: a NumPy or CuPy dtype, or its name.
        release: as for array().
        morder: "C" (row-major) or "F" (column-major).

    Returns:
        A cupy.ndarray over the allocation; its contents are undefined.

    Raises:
        NotImplementedError: the running backend is not the gpu backend.
        NvshmemInvalid: shape, dtype or morder is not one symmem takes.
        NvshmemError: the symmetric heap has no room for it.

    Example:
        On each PE, after nvshmem.init() on the gpu backend::

            a = scp.empty(8, dtype="int64")
            a.fill(0)
    """
    _require_gpu("interop.cupy.empty")
    return _memory.array(shape, dtype=dtype, release=release, morder=morder)


def bytearray(
    shape, dtype="float32", release=False, device_id=None, morder="C", except_on_del=True
):
    """A flat uint8 CuPy array of the bytes of shape x dtype, on the symmetric
    heap (collective over TEAM_WORLD).

    Args:
        shape: an int or a sequence of ints.
        dtype: the dtype whose size, times the number of elements of shape,
            gives the number of bytes (default "float32"; None means it too).
        release: as for array().
        device_id: accepted for NVSHMEM4Py's signature; the array is on the
            GPU this PE was started on.
        morder: "C" or "F", checked; the array is flat, so it changes nothing.
        except_on_del: as for array().

    Returns:
        A one-dimensional cupy.ndarray of uint8 over the allocation.

    Raises:
        NotImplementedError: the running backend is not the gpu backend.
        NvshmemInvalid: shape, dtype or morder is not one symmem takes.
        NvshmemError: the symmetric heap has no room for it.

    Example:
        On each PE, after nvshmem.init() on the gpu backend::

            raw = scp.bytearray((4, 4), dtype="float64")
            assert raw.shape == (128,) and raw.dtype == "uint8"
            doubles = raw.view("float64").reshape(4, 4)  # the same memory
    """
    _require_gpu("interop.cupy.bytearray")
    if not isinstance(morder, str) or morder not in ("C", "F"):
        raise invalid(f"interop.cupy.bytearray: morder={morder!r:.60} must be 'C' or 'F'")
    return _memory.bytearray(
        shape,
        dtype="float32" if dtype is None else dtype,
        release=release,
        morder=morder,
        except_on_del=except_on_del,
    )


def free_array(arr):
    """Free an array that array(), empty() or bytearray() made (collective
    over TEAM_WORLD: every PE frees its copy).

    Args:
        arr: the array those calls returned (not a slice that starts inside it).

    Returns:
        None.

    Raises:
        NvshmemInvalid: arr is not on the symmetric heap, was already freed,
            or starts inside its allocation.

    Example:
        On every PE, in the same order as the allocations::

            a = scp.array(16)
            ...
            scp.free_array(a)
    """
    _memory.free_array(arr)


def array_get_buffer(arr):
    """The allocation an array on the symmetric heap is over.

    Args:
        arr: an array on the symmetric heap, or a slice of one.

    Returns:
        (Buffer, nbytes, dtype name): the Buffer of the whole allocation,
        arr's size in bytes, and its dtype's name ("float32").

    Raises:
        NvshmemInvalid: arr is not on the symmetric heap, or was freed.

    Example:
        ::

            a = scp.array((4, 4), dtype="float64")
            buf, nbytes, dtype = scp.array_get_buffer(a[1:])  # nbytes 96, "float64"
    """
    return _memory.array_get_buffer(arr)


def get_peer_array(arr, peer_pe=None):
    """A CuPy array over PE peer_pe's copy of arr: loads and stores reach its
    memory directly (PEs within one NVLink domain).

    Args:
        arr: an array on the symmetric heap.
        peer_pe: the PE (an int); the default None, NVSHMEM4Py's, is refused.

    Returns:
        A cupy.ndarray of arr's shape, dtype and memory order over peer_pe's
        memory.

    Raises:
        NotImplementedError: the running backend is not the gpu backend.
        NvshmemInvalid: arr is not on the symmetric heap, or peer_pe is not
            a PE whose memory this PE can reach.

    Example:
        Store into the next PE's copy of a, then let it read it::

            peer = scp.get_peer_array(a, (nvshmem.my_pe() + 1) % nvshmem.n_pes())
            peer[:] = 1
            nvshmem.barrier_all()
    """
    _require_gpu("interop.cupy.get_peer_array")
    return _memory.get_peer_array(arr, peer_pe)


__all__ = ["empty", "array", "bytearray", "free_array", "array_get_buffer", "get_peer_array"]
