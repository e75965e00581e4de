"""Which engine symmem.device.cute's calls use, fixed for the process when
the first CuTe kernel that calls one is traced (SYMMEM_CUTE_ENGINE=
auto|symmem|nvshmem, as SYMMEM_TRITON_ENGINE is for Triton):

- symmem: symmem's device library (device.cuh) as LLVM bitcode, device.bc
  (tools/device_bitcode.py builds it with clang; the package ships it where
  it was built), linked into each kernel through cute.extern. It needs no
  NVSHMEM device state and reaches the PEs of this NVLink domain; a wait on
  a dead peer ends the kernel with an error naming it.
- nvshmem: NVSHMEM's device bitcode (libnvshmem_device.bc, from
  find_device_bitcode_library()), which also reaches PEs on other nodes;
  its kernels need library_init() (cute_compile_helper does it).
- auto: symmem where every PE's heap is mapped into this GPU and device.bc
  is there, else nvshmem.

Kernels are traced after symmem.init() on the gpu backend: the own engine
compiles the device state block's address into each call."""

import os

from symmem import _device_host, _symmem
from symmem._errors import invalid

ENGINES = ("symmem", "nvshmem")
OWN_BITCODE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "device.bc")
_engine = None


def _choose(call):
    wanted = _symmem.env("SYMMEM_CUTE_ENGINE") or "auto"
    if wanted == "symmem" and not os.path.exists(OWN_BITCODE):
        raise invalid(
            f"{call}: SYMMEM_CUTE_ENGINE=symmem needs {OWN_BITCODE}, the device "
            "library as LLVM bitcode, which this install lacks: build it with "
            "python tools/device_bitcode.py (needs clang), or use "
            "SYMMEM_CUTE_ENGINE=nvshmem"
        )
    if wanted == "nvshmem":
        _device_host._require_nvshmem_engine(call, "SYMMEM_CUTE_ENGINE=nvshmem")
    if wanted in ENGINES:
        return wanted
    # auto. TEAM_SHARED (1) is the team of the PEs this GPU reaches by load and store.
    if os.path.exists(OWN_BITCODE) and _symmem.team_n_pes(1) == _symmem.n_pes():
        return "symmem"
    try:
        _device_host.find_device_bitcode_library()
        return "nvshmem"
    except Exception:
        if os.path.exists(OWN_BITCODE):
            return "symmem"  # its calls to unmapped PEs fail, naming them
        raise invalid(
            f"{call}: no engine for CuTe kernels: symmem's device.bc is missing "
            "(python tools/device_bitcode.py builds it) and so is NVSHMEM's "
            "libnvshmem_device.bc"
        ) from None


def configure(call="symmem.device.cute"):
    """Fixes the engine for this process (once) and returns its name."""
    global _engine
    if _engine is None:
        _device_host._require_gpu(call, "CuTe kernels")
        _engine = _choose(call)
    return _engine


def engine():
    """The engine CuTe kernels use in this process.

    Returns:
        "symmem" or "nvshmem", or None before the first kernel that calls
        symmem.device.cute is traced (SYMMEM_CUTE_ENGINE chooses).

    Example:
        After a kernel compiled::

            assert dev.engine() in ("symmem", "nvshmem")
    """
    return _engine


def state(call):
    """The device state block's address, which the own engine's calls take
    first: a constant of each kernel traced now."""
    address = _symmem.device_state_gpu()
    if address == 0:
        raise invalid(
            f"{call}: kernels using symmem.device.cute are compiled after "
            "symmem.init() on the gpu backend (this process has none running)"
        )
    return address
