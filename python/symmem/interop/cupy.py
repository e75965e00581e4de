"""CuPy arrays on the symmetric heap: they need GPU memory, so the gpu backend."""
from symmem import _symmem
from symmem._memory import free_array, array_get_buffer  # noqa: F401


def _require_gpu(call):
    backend = _symmem.backend_name()
    if backend != "gpu":
        raise NotImplementedError(
            f"{call}: CuPy arrays need the gpu backend, but the running backend is "
            f"{backend or 'none (not initialized)'}; use symmem.interop.numpy on cpu")


def empty(shape, dtype="float32", release=False):
    _require_gpu("interop.cupy.empty")


def array(shape, dtype="float32", release=False, morder="C"):
    _require_gpu("interop.cupy.array")


def bytearray(shape, dtype="float32", release=False):
    _require_gpu("interop.cupy.bytearray")


def get_peer_array(arr, peer_pe):
    _require_gpu("interop.cupy.get_peer_array")
