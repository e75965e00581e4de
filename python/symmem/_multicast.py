"""NVLink multicast and registration of external memory.

Multicast needs the gpu backend on NVLink with multicast (NVLS) enabled;
symmem never enables it itself (a misbehaving multicast program can take a
shared host's GPUs down), so these calls explain why they cannot run."""
import os

from symmem import _symmem
from symmem._errors import NvshmemError, require_initialized


def _multicast_unavailable(call):
    require_initialized(call)
    backend = _symmem.backend_name()
    if backend != "gpu":
        raise NotImplementedError(f"{call}: NVLink multicast needs the gpu backend; the running "
                                  f"backend is {backend}")
    if os.environ.get("NVSHMEM_DISABLE_NVLS", "0") not in ("", "0"):
        raise NvshmemError(f"[pe {_symmem.my_pe()}] {call}: NVLink multicast is disabled in "
                           "this environment (NVSHMEM_DISABLE_NVLS="
                           f"{os.environ['NVSHMEM_DISABLE_NVLS']})")
    raise NotImplementedError(f"{call}: the gpu backend does not map NVLink multicast memory yet")


def get_multicast_buffer(team, buffer):
    _multicast_unavailable("get_multicast_buffer")


def get_multicast_array(team, array):
    _multicast_unavailable("get_multicast_array")


def get_multicast_tensor(team, tensor):
    _multicast_unavailable("get_multicast_tensor")
