"""symmem's device library (device.cuh) as numba-cuda links it: NVRTC
compiles it once per process and GPU architecture into LTO-IR, so nvJitLink
optimises it together with each kernel (numba-cuda links with LTO by
default): the calls a kernel makes are inlined and the rest is dropped.
A relocatable cubin instead costs every call the ABI's save and restore of
the registers the callee uses: 2 us a put_block of 1024 threads, measured."""
import os

from numba import cuda
from numba.cuda.cudadrv.linkable_code import LTOIR

LIBRARY_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "device.cuh")
with open(LIBRARY_PATH) as _f:
    SOURCE = _f.read()

_compiled = {}  # arch -> LTO-IR bytes


def _program():
    try:
        from cuda.core import Program, ProgramOptions
    except ImportError:  # cuda-core before 0.4
        from cuda.core.experimental import Program, ProgramOptions
    return Program, ProgramOptions


def ltoir(arch):
    """device.cuh as LTO-IR for arch ("sm_90"), compiled once (0.2 s)."""
    if arch not in _compiled:
        Program, ProgramOptions = _program()
        options = ProgramOptions(arch=arch, relocatable_device_code=True,
                                 link_time_optimization=True)
        _compiled[arch] = bytes(Program(SOURCE, "c++", options=options).compile("ltoir").code)
    return _compiled[arch]


class _Library(LTOIR):
    """The library for the current GPU's architecture, compiled when the
    first kernel that calls into it is linked (not at import)."""

    def __init__(self):
        super().__init__(None, name="symmem_device.ltoir")

    @property
    def data(self):
        major, minor = cuda.get_current_device().compute_capability
        return ltoir(f"sm_{major}{minor}")


LIBRARY = _Library()
