"""CuPy arrays on the symmetric heap: device memory, so the gpu backend."""
import numpy as np

from symmem import _memory, _symmem
from symmem._errors import exception


def _require_gpu(call):
    backend = _symmem.backend_name()
    if backend != "gpu":
        raise exception(_symmem.ERR_UNSUPPORTED,
                        f"{call}: CuPy arrays need the gpu backend, but the running backend is "
                        f"{backend or 'none (not initialized)'}; use symmem.interop.numpy on cpu")


def array(shape, dtype="float32", release=False, morder="C"):
    """A CuPy array on the symmetric heap (collective)."""
    _require_gpu("interop.cupy.array")
    return _memory.array(shape, dtype=dtype, release=release, morder=morder)


def empty(shape, dtype="float32", release=False):
    """An uninitialised CuPy array on the symmetric heap (collective)."""
    _require_gpu("interop.cupy.empty")
    return _memory.array(shape, dtype=dtype, release=release)


def bytearray(shape, dtype="float32", release=False, device_id=None):
    """A uint8 CuPy array big enough for shape x dtype (collective)."""
    _require_gpu("interop.cupy.bytearray")
    return _memory.bytearray(shape, dtype=np.dtype(dtype) if dtype else "float32",
                             release=release)


def free_array(arr):
    _memory.free_array(arr)


def array_get_buffer(arr):
    return _memory.array_get_buffer(arr)


def get_peer_array(arr, peer_pe=None):
    """A CuPy array over PE peer_pe's copy of arr (within the NVLink domain)."""
    _require_gpu("interop.cupy.get_peer_array")
    return _memory.get_peer_array(arr, peer_pe)


__all__ = ["empty", "array", "bytearray", "free_array", "array_get_buffer", "get_peer_array"]
