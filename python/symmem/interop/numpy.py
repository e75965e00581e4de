"""NumPy arrays on the symmetric heap (the cpu backend's arrays)."""

from symmem._memory import array, array_get_buffer, bytearray, free_array, get_peer_array


def empty(shape, dtype="float32", release=False, morder="C"):
    """array(shape, dtype, release, morder): NVSHMEM4Py's interop spelling.

    Example:
        >>> a = symmem.interop.numpy.empty((2, 2), dtype="int64")
        >>> a.shape
        (2, 2)
        >>> symmem.interop.numpy.free_array(a)
    """
    return array(shape, dtype=dtype, release=release, morder=morder)


__all__ = ["empty", "array", "bytearray", "free_array", "array_get_buffer", "get_peer_array"]
