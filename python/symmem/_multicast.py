"""NVLink multicast.

Multicast needs the gpu backend on NVLink with multicast (NVLS) enabled;
symmem never enables it itself (a misbehaving multicast program can take a
shared host's GPUs down), so these calls explain why they cannot run."""

from symmem import _symmem
from symmem._errors import exception, require_initialized


def multicast_unavailable_reason(call):
    """Why NVLink multicast cannot run here, as an error message naming call
    (the device calls' compile errors use it too)."""
    backend, can = _symmem.backend_name(), _symmem.capabilities()
    if backend is None:
        return f"{call}: NVLink multicast needs the gpu backend, and symmem is not initialised"
    if "device_memory" not in can:  # no GPU heap: nothing to multicast into
        return f"{call}: NVLink multicast needs the gpu backend; the running backend is {backend}"
    if _symmem.env("NVSHMEM_DISABLE_NVLS"):
        return (
            f"{call}: NVLink multicast is disabled in this environment "
            "(NVSHMEM_DISABLE_NVLS is set)"
        )
    # no backend has the multicast capability yet
    return f"{call}: the {backend} backend does not map NVLink multicast memory yet"


def _multicast_unavailable(call):
    require_initialized(call)
    reason = multicast_unavailable_reason(call)
    status = _symmem.ERR_BACKEND if "NVSHMEM_DISABLE_NVLS" in reason else _symmem.ERR_UNSUPPORTED
    raise exception(status, reason)


def get_multicast_buffer(team, buffer):
    """A Buffer over NVLink multicast: a store reaches every member's copy.

    Needs the gpu backend on NVLink with multicast (NVLS) enabled; symmem
    never enables it itself (a misbehaving multicast program can take a
    shared host's GPUs down), so today this call always raises, saying why.

    Args:
        team: the team whose members' copies the multicast object spans.
        buffer: a Buffer on the symmetric heap.

    Raises:
        NotImplementedError: the backend is not gpu, or the gpu backend
            does not map NVLink multicast memory (yet).
        NvshmemError: NVSHMEM_DISABLE_NVLS disables NVLink multicast here.
        NvshmemInvalid: symmem is not initialised.

    Example:
        >>> buf = symmem.buffer(16)
        >>> try:
        ...     symmem.get_multicast_buffer(symmem.Teams.TEAM_WORLD, buf)
        ... except NotImplementedError as error:
        ...     print("multicast" in str(error))
        True
        >>> symmem.free(buf)
    """
    _multicast_unavailable("get_multicast_buffer")


def get_multicast_array(team, array):
    """An array over NVLink multicast: a store reaches every member's copy.

    Needs the gpu backend on NVLink with multicast (NVLS) enabled; symmem
    never enables it itself (a misbehaving multicast program can take a
    shared host's GPUs down), so today this call always raises, saying why.

    Args:
        team: the team whose members' copies the multicast object spans.
        array: a CuPy array on the symmetric heap.

    Raises:
        NotImplementedError: the backend is not gpu, or the gpu backend
            does not map NVLink multicast memory (yet).
        NvshmemError: NVSHMEM_DISABLE_NVLS disables NVLink multicast here.
        NvshmemInvalid: symmem is not initialised.

    Example:
        >>> a = symmem.array(4)
        >>> try:
        ...     symmem.get_multicast_array(symmem.Teams.TEAM_WORLD, a)
        ... except NotImplementedError as error:
        ...     print("multicast" in str(error))
        True
        >>> symmem.free_array(a)
    """
    _multicast_unavailable("get_multicast_array")


def get_multicast_tensor(team, tensor):
    """A tensor over NVLink multicast: a store reaches every member's copy.

    Needs the gpu backend on NVLink with multicast (NVLS) enabled; symmem
    never enables it itself (a misbehaving multicast program can take a
    shared host's GPUs down), so today this call always raises, saying why.

    Args:
        team: the team whose members' copies the multicast object spans.
        tensor: a torch tensor on the symmetric heap.

    Raises:
        NotImplementedError: the backend is not gpu, or the gpu backend
            does not map NVLink multicast memory (yet).
        NvshmemError: NVSHMEM_DISABLE_NVLS disables NVLink multicast here.
        NvshmemInvalid: symmem is not initialised.

    Example:
        >>> a = symmem.array(4)
        >>> try:
        ...     symmem.get_multicast_tensor(symmem.Teams.TEAM_WORLD, a)
        ... except NotImplementedError as error:
        ...     print("multicast" in str(error))
        True
        >>> symmem.free_array(a)
    """
    _multicast_unavailable("get_multicast_tensor")
