"""symmem's device library (device.cuh: the package's copy of
include/symmem/device.cuh with its headers inlined, which setup.py makes)
as LTO-IR: NVRTC compiles it once per process and GPU architecture, and
nvJitLink optimises it together with each kernel that links it (the calls
a kernel makes are inlined, the rest is dropped). numba-cuda
(symmem.device.numba) and numba-cuda-mlir (symmem.device.numba_cuda_mlir)
link it so. NVRTC needs no GPU: tests compile it for sm_90 anywhere
cuda-core and NVRTC are installed."""

import os

LIBRARY_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "device.cuh")
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
        options = ProgramOptions(
            arch=arch, relocatable_device_code=True, link_time_optimization=True
        )
        _compiled[arch] = bytes(Program(SOURCE, "c++", options=options).compile("ltoir").code)
    return _compiled[arch]
