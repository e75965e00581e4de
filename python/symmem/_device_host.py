"""NVSHMEM4Py's host helpers for device code: module_init, module_finalize,
library_init, library_finalize, NvshmemKernelObject, DeviceLibLanguage and
find_device_bitcode_library, with NVSHMEM4Py's names and argument orders.

What module_init / library_init mean here (gpu backend only):
- A module built with symmem's device library (device.cuh) gets the
  constant copy of the device state that its calls' fast path reads, kept
  current until module_finalize (src/backends/gpu/module_consts.c). Without
  it the calls still work, slower: they find the device state block at an
  address fixed when they were compiled. symmem.device.numba's kernels are
  attached by themselves when numba-cuda loads them (attach_loaded).
- A module linked with NVSHMEM's own device library (the .bc that
  find_device_bitcode_library names; it holds `nvshmemi_device_state_d`)
  needs NVSHMEM's device state copied in, as with NVSHMEM4Py: the gpu
  backend (src/backends/gpu/cuda_module.c) finds that out and calls
  nvshmemx_cumodule_init / nvshmemx_culibrary_init of the NVSHMEM host
  library it runs on.
Both are counted: every init needs one finalize of the same handle, and a
finalize of a handle with no init left raises. symmem.finalize() forgets
them all. On the cpu backend there are no CUDA modules: NotImplementedError.

NvshmemKernelObject, and how a module or library argument is read, are in
_kernel_object.py; DeviceLibLanguage and the find_* calls in
_device_library_files.py (imported here, as before).
"""

from symmem import _symmem
from symmem._errors import exception, invalid, require_initialized
from symmem._lifecycle import _finalize_hooks, _init_hooks

# NVSHMEM4Py's names of this module that live in their own files; the package
# and the device APIs import them from here (cute_compile.py patches one here)
from symmem._device_library_files import (  # noqa: F401
    DeviceLibLanguage,
    find_device_bitcode_library,
    find_device_library,
)
from symmem._kernel_object import NvshmemKernelObject, _handle_of  # noqa: F401

_INIT, _FINALIZE, _ATTACH, _DETACH = 1, 2, 3, 4  # _symmem.cuda_module's op (SYMMEM_CUDA_MODULE_*)

_initialised = {}  # (kind, handle) -> [inits not yet finalised, forwarded to NVSHMEM, object]


# ---- module_init and friends ----


def _require_gpu(call, what="CUDA modules and libraries"):
    """Initialised on the gpu backend, where what (device code) runs."""
    require_initialized(call)
    backend = _symmem.backend_name()
    if "device_calls" not in _symmem.capabilities():
        raise exception(
            _symmem.ERR_UNSUPPORTED,
            f"{call}: {what} need the gpu backend; the "
            f"running backend is {backend} (device code runs there as "
            "@numba.njit functions: symmem.device.numba)",
        )


def _require_nvshmem_engine(call, what):
    """what (NVSHMEM's device library) needs NVSHMEM running: the gpu
    backend's nvshmem engine."""
    if _symmem.engine_name() == "symmem":
        raise exception(
            _symmem.ERR_UNSUPPORTED,
            f"{call}: {what} needs NVSHMEM's device state, which only NVSHMEM fills, and this "
            "job runs on the gpu backend's symmem engine: start it with "
            "SYMMEM_GPU_ENGINE=nvshmem (a GPU a PE), or use symmem's own engine",
        )


def _check(call, what, obj, kind):
    handle, known = _handle_of(obj, call, what)
    if known is not None and known != kind:
        raise invalid(
            f"{call}: {what}={handle:#x} is a CU{known}, not a CU{kind}; call "
            f"{known}_{call.split('_', 1)[1]}"
        )
    _require_gpu(call)
    return handle


def _init(call, what, obj, kind):
    handle = _check(call, what, obj, kind)
    # The backend looks for NVSHMEM's device state in it, and runs NVSHMEM's
    # init where it is there (src/backends/gpu/cuda_module.c).
    nvshmem = _symmem.cuda_module(kind == "library", handle, _INIT)
    _symmem.cuda_module(kind == "library", handle, _ATTACH)  # where it links device.cuh
    entry = _initialised.setdefault((kind, handle), [0, nvshmem, obj])
    entry[0] += 1


def _finalize(call, what, obj, kind):
    handle = _check(call, what, obj, kind)
    entry = _initialised.get((kind, handle))
    if entry is None:
        raise invalid(
            f"{call}: {what}={handle:#x} is not initialised: {kind}_init was not "
            f"called on it, or {call} already was as often"
        )
    if entry[1]:
        _symmem.cuda_module(kind == "library", handle, _FINALIZE)
    entry[0] -= 1
    if entry[0] == 0:
        del _initialised[(kind, handle)]
        if handle not in _loaded:  # else it stays attached until it unloads
            _symmem.cuda_module(kind == "library", handle, _DETACH)


def module_init(mod):
    """Make a loaded CUmodule's kernels ready to call symmem or NVSHMEM.

    Only the gpu backend runs CUDA modules. A module built with symmem's
    device library (device.cuh) gets the constant copy of the device state
    that its calls' fast path reads; one linked with NVSHMEM's device
    library gets NVSHMEM's state (nvshmemx_cumodule_init). Calls are
    counted: each needs one module_finalize() of the same module.

    Args:
        mod: the loaded CUmodule: an NvshmemKernelObject, a cuda.core
            ObjectCode, a cuda.bindings CUmodule, or its handle as an int.

    Raises:
        NvshmemInvalid: mod is none of those, or not a CUDA handle; it is
            a CUlibrary (call library_init()); symmem is not
            initialised.
        NotImplementedError: the backend is not gpu (the cpu backend runs
            no CUDA modules: device code runs there in @numba.njit
            functions).
        NvshmemError: the gpu backend or NVSHMEM failed.

    Example:
        >>> k = symmem.NvshmemKernelObject.from_handle(0x7F00)
        >>> try:  # the cpu backend
        ...     symmem.module_init(k)
        ... except NotImplementedError as error:
        ...     print("gpu backend" in str(error))
        True

        On the gpu backend, around the kernels of a loaded module::

            symmem.module_init(mod)
            ...                              # launch its kernels
            symmem.module_finalize(mod)
    """
    _init("module_init", "mod", mod, "module")


def module_finalize(mod):
    """Undo one module_init() of the same module.


    Args:
        mod: the loaded CUmodule: an NvshmemKernelObject, a cuda.core
            ObjectCode, a cuda.bindings CUmodule, or its handle as an int.

    Raises:
        NvshmemInvalid: mod is none of those, or not a CUDA handle; it is
            a CUlibrary (call library_finalize()); mod has no
            module_init() left to undo; symmem is not initialised.
        NotImplementedError: the backend is not gpu (the cpu backend runs
            no CUDA modules: device code runs there in @numba.njit
            functions).
        NvshmemError: the gpu backend or NVSHMEM failed.

    Example:
        >>> k = symmem.NvshmemKernelObject.from_handle(0x7F00)
        >>> try:  # the cpu backend
        ...     symmem.module_finalize(k)
        ... except NotImplementedError as error:
        ...     print("gpu backend" in str(error))
        True

        On the gpu backend, around the kernels of a loaded module::

            symmem.module_init(mod)
            ...                              # launch its kernels
            symmem.module_finalize(mod)
    """
    _finalize("module_finalize", "mod", mod, "module")


def library_init(lib):
    """module_init() for a CUlibrary (a cuda.core ObjectCode loads as one).

    Only the gpu backend runs CUDA modules. Calls are counted: each needs
    one library_finalize() of the same library.

    Args:
        lib: the loaded CUlibrary: an NvshmemKernelObject, a cuda.core
            ObjectCode, a cuda.bindings CUlibrary, or its handle as an int.

    Raises:
        NvshmemInvalid: lib is none of those, or not a CUDA handle; it is
            a CUmodule (call module_init()); symmem is not
            initialised.
        NotImplementedError: the backend is not gpu (the cpu backend runs
            no CUDA modules: device code runs there in @numba.njit
            functions).
        NvshmemError: the gpu backend or NVSHMEM failed.

    Example:
        >>> k = symmem.NvshmemKernelObject.from_handle(0x7F00)
        >>> try:  # the cpu backend
        ...     symmem.library_init(k)
        ... except NotImplementedError as error:
        ...     print("gpu backend" in str(error))
        True

        On the gpu backend, around the kernels of a loaded library::

            symmem.library_init(lib)
            ...                              # launch its kernels
            symmem.library_finalize(lib)
    """
    _init("library_init", "lib", lib, "library")


def library_finalize(lib):
    """Undo one library_init() of the same library.


    Args:
        lib: the loaded CUlibrary: an NvshmemKernelObject, a cuda.core
            ObjectCode, a cuda.bindings CUlibrary, or its handle as an int.

    Raises:
        NvshmemInvalid: lib is none of those, or not a CUDA handle; it is
            a CUmodule (call module_finalize()); lib has no
            library_init() left to undo; symmem is not initialised.
        NotImplementedError: the backend is not gpu (the cpu backend runs
            no CUDA modules: device code runs there in @numba.njit
            functions).
        NvshmemError: the gpu backend or NVSHMEM failed.

    Example:
        >>> k = symmem.NvshmemKernelObject.from_handle(0x7F00)
        >>> try:  # the cpu backend
        ...     symmem.library_finalize(k)
        ... except NotImplementedError as error:
        ...     print("gpu backend" in str(error))
        True

        On the gpu backend, around the kernels of a loaded library::

            symmem.library_init(lib)
            ...                              # launch its kernels
            symmem.library_finalize(lib)
    """
    _finalize("library_finalize", "lib", lib, "library")


_finalize_hooks.append(_initialised.clear)  # NVSHMEM's finalize drops them too


# ---- modules that attach themselves (symmem.device.numba's) ----

_loaded = {}  # handle -> library (bool), of each loaded module of ours until it unloads


def _gpu_running():
    """A backend runs whose device code links device.cuh (the gpu one)."""
    return "device_calls" in _symmem.capabilities()  # empty before init


def attach_loaded(library, handle):
    """A module linking device.cuh was loaded: it gets the constant device
    state now if the gpu backend runs, else at the next init."""
    _loaded[handle] = library
    if _gpu_running():
        _symmem.cuda_module(library, handle, _ATTACH)


def detach_unloaded(library, handle):
    """The module is about to be unloaded: no more writes into it."""
    _loaded.pop(handle, None)
    try:
        if _gpu_running():
            _symmem.cuda_module(library, handle, _DETACH)
    except Exception:  # numba-cuda unloads modules at exit, after symmem may be gone
        pass


def _attach_all_loaded():
    if "device_calls" not in _symmem.capabilities():
        return
    for handle, library in list(_loaded.items()):
        try:
            _symmem.cuda_module(library, handle, _ATTACH)
        except (_symmem.NvshmemError, _symmem.NvshmemInvalid):
            _loaded.pop(handle, None)  # unloaded behind numba-cuda's back: its kernels too


_init_hooks.append(_attach_all_loaded)
