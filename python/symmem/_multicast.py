"""NVLink multicast.

Multicast needs the gpu backend on NVLink with multicast (NVLS) enabled;
symmem never enables it itself (a misbehaving multicast program can take a
shared host's GPUs down), so these calls explain why they cannot run."""
from symmem import _symmem
from symmem._errors import exception, require_initialized


def _multicast_unavailable(call):
    require_initialized(call)
    backend = _symmem.backend_name()
    if backend != "gpu":
        raise exception(_symmem.ERR_UNSUPPORTED, f"{call}: NVLink multicast needs the gpu "
                        f"backend; the running backend is {backend}")
    if _symmem.env("NVSHMEM_DISABLE_NVLS"):
        raise exception(_symmem.ERR_BACKEND, f"{call}: NVLink multicast is disabled in this "
                        "environment (NVSHMEM_DISABLE_NVLS is set)")
    raise exception(_symmem.ERR_UNSUPPORTED,
                    f"{call}: the gpu backend does not map NVLink multicast memory yet")


def get_multicast_buffer(team, buffer):
    _multicast_unavailable("get_multicast_buffer")


def get_multicast_array(team, array):
    _multicast_unavailable("get_multicast_array")


def get_multicast_tensor(team, tensor):
    _multicast_unavailable("get_multicast_tensor")
