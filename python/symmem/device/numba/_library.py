"""symmem's device library (device.cuh) as numba-cuda links it: compiled
once per GPU architecture into a relocatable cubin and kept in the user's
cache directory under the source's hash, so a kernel's link adds a finished
object. Linking the CUDA source itself would run NVRTC and ptxas over the
whole library (about 3 s) for every kernel that uses one device call."""
import hashlib
import os
import tempfile

from numba import cuda
from numba.cuda.cudadrv.linkable_code import Cubin

LIBRARY_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "device.cuh")
with open(LIBRARY_PATH) as _f:
    SOURCE = _f.read()

_compiled = {}  # arch -> cubin bytes, for this process


def _program():
    try:
        from cuda.core import Program, ProgramOptions
    except ImportError:  # cuda-core before 0.4
        from cuda.core.experimental import Program, ProgramOptions
    return Program, ProgramOptions


def _nvrtc_version():
    try:
        from cuda.bindings import nvrtc
        return "%d.%d" % tuple(nvrtc.nvrtcVersion()[1:3])
    except Exception:  # an unknown NVRTC only keys the cache less finely
        return "unknown"


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "symmem")


# A kernel's registers are at least those of every function it calls: at 64
# or fewer, a caller of 1024 threads a block still launches (65,536 a block).
MAX_REGISTERS = 64


def compile_library(arch):
    """device.cuh compiled by NVRTC for arch ("sm_90"): relocatable cubin bytes."""
    Program, ProgramOptions = _program()
    options = ProgramOptions(arch=arch, relocatable_device_code=True,
                             max_register_count=MAX_REGISTERS)
    return bytes(Program(SOURCE, "c++", options=options).compile("cubin").code)


def cubin(arch):
    """The library for arch: from this process, the disk cache, or NVRTC."""
    if arch in _compiled:
        return _compiled[arch]
    key = f"{SOURCE}\0{arch}\0{_nvrtc_version()}\0{MAX_REGISTERS}"
    key = hashlib.sha256(key.encode()).hexdigest()[:20]
    path = os.path.join(_cache_dir(), f"device-{arch}-{key}.cubin")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        data = compile_library(arch)
        try:  # written whole under a temporary name: a reader never sees half
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".part")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            pass  # no writable cache: every process compiles it once
    _compiled[arch] = data
    return data


class _Library(Cubin):
    """The library for the current GPU's architecture, compiled when the
    first kernel that calls into it is linked (not at import)."""

    def __init__(self):
        super().__init__(None, name="symmem_device.cubin")

    @property
    def data(self):
        major, minor = cuda.get_current_device().compute_capability
        return cubin(f"sm_{major}{minor}")


LIBRARY = _Library()
