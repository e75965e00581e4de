"""symmem's device library (device.cuh: the package's copy of
include/symmem/device.cuh with its headers inlined, which setup.py makes)
as numba-cuda links it: NVRTC
compiles it once per process and GPU architecture into LTO-IR, so nvJitLink
optimises it together with each kernel (numba-cuda links with LTO by
default): the calls a kernel makes are inlined and the rest is dropped.
A relocatable cubin instead costs every call the ABI's save and restore of
the registers the callee uses: 2 us a put_block of 1024 threads, measured."""

from numba import cuda
from numba.cuda.cudadrv.linkable_code import LTOIR

from symmem import _device_host
from symmem.device._ltoir import LIBRARY_PATH, SOURCE, ltoir  # noqa: F401 (tests read them)


def _loaded(object_code):
    """numba-cuda loaded a module linking the library (as a CUlibrary): it
    gets the constant device state its calls' fast path reads."""
    _device_host.attach_loaded(True, int(object_code.handle))


def _unloading(object_code):
    _device_host.detach_unloaded(True, int(object_code.handle))


class _Library(LTOIR):
    """The library for the current GPU's architecture, compiled when the
    first kernel that calls into it is linked (not at import). A numba-cuda
    without module callbacks runs its kernels on the slow
    path: every call reads the state block through L1."""

    def __init__(self):
        try:
            super().__init__(
                None,
                name="symmem_device.ltoir",
                setup_callback=_loaded,
                teardown_callback=_unloading,
            )
        except TypeError:
            super().__init__(None, name="symmem_device.ltoir")

    @property
    def data(self):
        major, minor = cuda.get_current_device().compute_capability
        return ltoir(f"sm_{major}{minor}")


LIBRARY = _Library()
