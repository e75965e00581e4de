"""What makes Triton kernels that call symmem.device.triton run:

- configure(): before the first such kernel compiles, the engine and the
  device addresses its code embeds are fixed for the process (constexprs
  of _api.py and _own.py, so they are part of each kernel's cache key;
  Triton refuses a kernel whose constexpr globals changed after it
  compiled). It runs at each init of the gpu backend once this module is
  imported, and at the first launch of a requires_symmem kernel.
- The NVSHMEM engine's modules hold NVSHMEM's device state: when Triton
  loads one (its kernel_load_end_hook, a chain, so another library's
  hooks keep working), the gpu backend initialises it
  (nvshmemx_cumodule_init, src/backends/gpu/cuda_module.c), and again
  after each later init.
- requires_symmem(kernel): a kernel that its launches configure, that gets
  NVSHMEM's bitcode in its extern_libs with that engine, and that takes
  CuPy arrays as well as torch tensors."""

import triton.language as tl
from triton import knobs
from triton.runtime.jit import JITFunction, KernelInterface

from symmem import _device_host, _symmem
from symmem._errors import invalid
from symmem._lifecycle import _init_hooks

from . import _api, _bitcode, _own

ENGINES = ("symmem", "nvshmem")
_engine = None  # the engine once configured
_extern_libs = {}  # what a kernel links with it: NVSHMEM's bitcode for its engine
_nvshmem_modules = []  # handles of loaded modules that link NVSHMEM's bitcode


def _choose_engine(call):
    wanted = _symmem.env("SYMMEM_TRITON_ENGINE") or "auto"
    if wanted == "nvshmem":
        _device_host._require_nvshmem_engine(call, "SYMMEM_TRITON_ENGINE=nvshmem")
    if wanted in ENGINES:
        return wanted
    # auto: symmem's own where every PE's heap is mapped here (TEAM_SHARED is
    # NVSHMEM's team of the PEs this GPU reaches by load and store)
    if _symmem.team_n_pes(1) == _symmem.n_pes():
        return "symmem"
    try:
        _device_host.find_device_bitcode_library()
        return "nvshmem"
    except Exception:
        return "symmem"  # its calls to unmapped PEs fail, naming them


def configure(call="symmem.device.triton"):
    """Fixes the engine and the device addresses for this process (once);
    returns the engine's name."""
    global _engine, _extern_libs
    if _engine is not None:
        return _engine
    _device_host._require_gpu(call, "Triton kernels")
    state = _symmem.device_state_gpu()
    engine = _choose_engine(call)
    _own.STATE = tl.constexpr(state)
    _own.CONSTS = tl.constexpr(state + _symmem.DEVICE_STATE_LAYOUT["consts_copy"])
    _api.ENGINE = _api.NVSHMEM if engine == "nvshmem" else _api.OWN
    if engine == "nvshmem":
        _extern_libs = {_bitcode.LIB: _device_host.find_device_bitcode_library()}
    _engine = engine
    return engine


def engine():
    """The engine Triton kernels use in this process ("symmem" or
    "nvshmem"), or None before the first configure."""
    return _engine


def _initialise(handle):
    """NVSHMEM's device state into a module that links its bitcode."""
    if _symmem.cuda_module(False, handle, _device_host._INIT) and handle not in _nvshmem_modules:
        _nvshmem_modules.append(handle)


def _loaded(module, function, name, metadata_group, hash):
    if _engine == "nvshmem" and "device_calls" in _symmem.capabilities():
        _initialise(int(module))


def _after_init():
    if "device_calls" not in _symmem.capabilities():
        return
    configure("init")
    for handle in list(_nvshmem_modules):
        _symmem.cuda_module(False, handle, _device_host._INIT)  # NVSHMEM's finalize dropped it


def _install_hooks():
    chain = knobs.runtime.kernel_load_end_hook
    if hasattr(chain, "add"):
        chain.add(_loaded)
    else:  # a Triton whose hook is one callable: call the one that was there too

        def both(*args, _before=chain):
            if _before is not None:
                _before(*args)
            _loaded(*args)

        knobs.runtime.kernel_load_end_hook = both
    _init_hooks.append(_after_init)
    if "device_calls" in _symmem.capabilities():  # empty before init
        configure("import symmem.device.triton")


# ---- requires_symmem ----

_TL_DTYPES = {
    "bool": tl.int1,
    "int8": tl.int8,
    "int16": tl.int16,
    "int32": tl.int32,
    "int64": tl.int64,
    "uint8": tl.uint8,
    "uint16": tl.uint16,
    "uint32": tl.uint32,
    "uint64": tl.uint64,
    "float16": tl.float16,
    "bfloat16": tl.bfloat16,
    "float32": tl.float32,
    "float64": tl.float64,
}


class _Pointer:
    """A CuPy array (or anything with __cuda_array_interface__ and no
    data_ptr()) as Triton takes a pointer argument."""

    def __init__(self, address, dtype):
        self._address = address
        self.dtype = dtype

    def data_ptr(self):
        return self._address


def _argument(value):
    if hasattr(value, "data_ptr") or not hasattr(value, "__cuda_array_interface__"):
        return value
    face = value.__cuda_array_interface__
    name = str(getattr(value, "dtype", ""))
    if name not in _TL_DTYPES:
        raise invalid(
            f"symmem.device.triton: a kernel argument of dtype {name!r} has no Triton element type"
        )
    return _Pointer(int(face["data"][0]), _TL_DTYPES[name])


class SymmemKernel(KernelInterface):
    """A @triton.jit kernel that calls symmem.device.triton: kernel[grid](...)
    as with the kernel itself."""

    def __init__(self, kernel):
        self.kernel = kernel

    def run(self, *args, **kwargs):
        if configure(f"{self.kernel.fn.__name__}[grid]") == "nvshmem":
            kwargs["extern_libs"] = {**_extern_libs, **(kwargs.get("extern_libs") or {})}
        return self.kernel.run(*map(_argument, args), **kwargs)

    def __getattr__(self, name):  # the kernel's own attributes (fn, cache, warmup, ...)
        return getattr(self.kernel, name)


def requires_symmem(kernel):
    """Decorates a @triton.jit kernel that calls symmem.device.triton (put
    it above @triton.jit). Needed with the NVSHMEM engine (the kernel links
    NVSHMEM's bitcode) and for CuPy arrays as arguments; with symmem's own
    engine a plain @triton.jit kernel works once symmem is initialised."""
    if not isinstance(kernel, JITFunction):
        raise TypeError(
            f"requires_symmem: expected a @triton.jit function, got {type(kernel).__name__}"
        )
    return SymmemKernel(kernel)
