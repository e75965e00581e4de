"""symmem's device library as numba-cuda-mlir links it: device.cuh as LTO-IR
(NVRTC, once per process and GPU architecture: device/_ltoir.py), declared
function by function with cuda.declare_device(..., link=[LIBRARY],
abi="c") from the one table of the library's signatures
(device/_library_calls.py). nvJitLink optimises it together with each
kernel, so the calls a kernel makes are inlined. When numba-cuda-mlir
loads a module that links it, the module gets the constant device state
its calls' fast path reads (as symmem.device.numba's do)."""

from numba_cuda_mlir import cuda, types
from numba_cuda_mlir.numba_cuda.core.errors import TypingError
from numba_cuda_mlir.numba_cuda.cudadrv.linkable_code import LTOIR

from symmem import _device_host, _symmem
from symmem.device import _library_calls
from symmem.device._ltoir import ltoir

_TYPES = {"u64": types.uint64, "i64": types.int64, "i32": types.int32, "u32": types.uint32}


def _loaded(object_code):
    _device_host.attach_loaded(True, int(object_code.handle))


def _unloading(object_code):
    _device_host.detach_unloaded(True, int(object_code.handle))


class _Library(LTOIR):
    """device.cuh for the current GPU's architecture, compiled when the first
    kernel that calls into it is linked."""

    def __init__(self):
        super().__init__(
            None, name="symmem_device.ltoir", setup_callback=_loaded, teardown_callback=_unloading
        )

    @property
    def data(self):
        from numba_cuda_mlir.tools import get_gpu_compute_capability

        major, minor = get_gpu_compute_capability(tuple)
        return ltoir(f"sm_{major}{minor}")


LIBRARY = _Library()


def _declare(name):
    ret, *params = _library_calls.SIGNATURES[name]
    signature = _TYPES[ret](*[_TYPES[p] for p in params])
    return cuda.declare_device("symmem_dev_" + name, signature, link=[LIBRARY], abi="c")


DEVICE = {name: _declare(name) for name in _library_calls.SIGNATURES}


def state_address(call):
    """The device state block's address, a constant of each kernel compiled
    now (after symmem.init() on the gpu backend)."""
    address = _symmem.device_state_gpu()
    if address == 0:
        raise TypingError(
            f"{call}: kernels using symmem.device.numba_cuda_mlir compile after "
            f"symmem.init() on the gpu backend (this process has none running)"
        )
    return address


def require_array(call, what, arg, dtypes=None):
    if not isinstance(arg, types.Array):
        raise TypingError(f"{call}: {what} must be an array (symmem.array), got {arg}")
    if dtypes is not None and str(arg.dtype) not in dtypes:
        raise TypingError(f"{call}: {what} has dtype {arg.dtype}; {call} takes {', '.join(dtypes)}")
    if arg.layout not in ("C", "F") and arg.ndim != 1:
        raise TypingError(f"{call}: {what} must be contiguous (layout {arg.layout})")


def require_pair(call, dst, src):
    require_array(call, "dst", dst)
    require_array(call, "src", src)
    if dst.dtype != src.dtype:
        raise TypingError(f"{call}: dst has dtype {dst.dtype} but src has {src.dtype}")


def require_int(call, what, arg):
    if not isinstance(arg, (types.Integer, types.IntEnumMember)):
        raise TypingError(f"{call}: {what} must be an integer, got {arg}")


def width(arr):
    """Bytes per element of an array type (at typing time)."""
    return arr.dtype.bitwidth // 8
