"""Device-side programming: code that moves data itself, outside symmem's calls.

`symmem.device.numba` (import it explicitly; it needs numba) gives
NVSHMEM4Py's device names for `@numba.njit` functions on the cpu backend and
`@numba.cuda.jit` kernels; `symmem.device.triton`, `symmem.device.cute` (CuTe
DSL) and `symmem.device.numba_cuda_mlir` give them to those kernel languages,
each importable only where its DSL is installed.
The C side is the device state block (`src/core/device_state.h`), whose address
`symmem._symmem.device_state()` gives on the host; `state_address()` gives
the GPU's copy, which CUDA C kernels calling device.cuh take first. See
docs/architecture.md and docs/device.md."""

from symmem import _symmem
from symmem._errors import invalid


def state_address():
    """The GPU address of this process's device state block.

    CUDA C kernels that call symmem's device library (``device.cuh``, found
    by ``symmem.find_device_library()``) take it as their first argument.
    It does not move while the process stays initialised.

    Returns:
        int: the address, valid in kernels on this PE's GPU.

    Raises:
        NvshmemInvalid: symmem is not initialised on the gpu backend in this
            process (the cpu backend has no GPU copy).

    Example:
        >>> st = symmem.device.state_address()  # doctest: +SKIP
        >>> kernel((1,), (32,), (st, dst.data.ptr, src.data.ptr, n, peer))  # doctest: +SKIP
    """
    address = _symmem.device_state_gpu()
    if address == 0:
        # initialised, the message starts "[pe N] " (invalid adds it)
        who = "this PE" if _symmem.my_pe() >= 0 else "this process (not initialised)"
        raise invalid(
            f"state_address: {who} has no device state on a GPU: call "
            "symmem.init() on the gpu backend first (the cpu backend has none)"
        )
    return address
