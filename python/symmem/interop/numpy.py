"""NumPy arrays on the symmetric heap (the cpu backend's arrays)."""
from symmem._memory import array, array_get_buffer, bytearray, free_array, get_peer_array


def empty(shape, dtype="float32", release=False, morder="C"):
    """An uninitialised NumPy array on the symmetric heap (collective)."""
    return array(shape, dtype=dtype, release=release, morder=morder)


__all__ = ["empty", "array", "bytearray", "free_array", "array_get_buffer", "get_peer_array"]
