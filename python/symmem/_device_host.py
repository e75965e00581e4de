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
"""

import enum
import operator
import os
import re

from symmem import _symmem
from symmem._errors import exception, invalid, require_initialized
from symmem._lifecycle import _finalize_hooks, _init_hooks

_HERE = os.path.dirname(os.path.abspath(__file__))
_INIT, _FINALIZE, _ATTACH, _DETACH = 1, 2, 3, 4  # _symmem.cuda_module's op (SYMMEM_CUDA_MODULE_*)
_KINDS = {"CUmodule": "module", "CUlibrary": "library"}  # cuda.bindings.driver's types

_initialised = {}  # (kind, handle) -> [inits not yet finalised, forwarded to NVSHMEM, object]


class DeviceLibLanguage(enum.Enum):
    """The forms of NVSHMEM's device library (NVSHMEM4Py's members and values).

    LLVM_BITCODE ("bc"), LTOIR ("ltoir") and STATIC ("a"), for
    find_device_bitcode_library().

    Example:
        >>> symmem.DeviceLibLanguage("bc") is symmem.DeviceLibLanguage.LLVM_BITCODE
        True
    """

    LLVM_BITCODE = "bc"
    LTOIR = "ltoir"
    STATIC = "a"


_LIBRARY_FILES = {
    DeviceLibLanguage.LTOIR: "libnvshmem_device.ltoir.fatbin",
    DeviceLibLanguage.STATIC: "libnvshmem_device.a",
}


# ---- handles ----


def _handle_of(obj, call, what):
    """(handle, kind) of a module or library: kind is "module", "library" or
    None where the object does not say (a plain int)."""
    if isinstance(obj, NvshmemKernelObject):
        return obj.handle, obj.kind
    kind = _KINDS.get(type(obj).__name__)
    if kind:  # cuda.bindings.driver's handle types
        return _address(int(obj), call, what), kind
    index = _index_or_none(obj)
    if index is not None:
        return _address(index, call, what), None
    if type(obj).__name__ == "ObjectCode":  # cuda.core's: .handle, the CUlibrary it loads as
        return _handle_of(obj.handle, call, f"{what}.handle")
    raise invalid(
        f"{call}: {what} of type {type(obj).__name__} ({obj!r:.60}) is not an "
        "NvshmemKernelObject, a cuda.core ObjectCode, a cuda.bindings CUmodule or "
        "CUlibrary, or an int handle"
    )


def _index_or_none(obj):
    """obj as an int where it is one (an int, a NumPy integer); None for a
    bool or anything else (an array of several elements has __index__ too)."""
    if isinstance(obj, bool) or not hasattr(type(obj), "__index__"):
        return None
    try:
        return operator.index(obj)
    except TypeError:
        return None


def _address(value, call, what):
    if not 0 < value < 1 << 64:
        raise invalid(f"{call}: {what}={value} is not a CUDA handle (a nonzero 64-bit address)")
    return value


class NvshmemKernelObject:
    """A loaded CUDA module or library, for module_init() / library_init().

    NVSHMEM4Py's class. Make one with a from_* method: .handle is the
    CUmodule or CUlibrary as an int, .kind "module", "library" or None (not
    known: a plain handle). The object it was made from is kept alive, so
    the module stays loaded while this object lives. A from_* method given
    an object it cannot read raises NvshmemInvalid (from_obj_bytes:
    NvshmemError where cuda.core cannot load the cubin).

    Raises:
        NvshmemInvalid: called directly, NvshmemKernelObject(...).

    Example:
        >>> k = symmem.NvshmemKernelObject.from_handle(0x7F00)
        >>> k.handle, k.kind
        (32512, None)
    """

    __slots__ = ("handle", "kind", "_source")

    def __new__(cls, *args, **kwargs):
        raise invalid(
            "NvshmemKernelObject: make one with NvshmemKernelObject.from_handle, "
            "from_obj, from_obj_bytes, from_triton or from_cuda_bindings"
        )

    @classmethod
    def _make(cls, source, call, what):
        handle, kind = _handle_of(source, call, what)
        self = object.__new__(cls)
        self.handle, self.kind, self._source = handle, kind, source
        return self

    @staticmethod
    def from_handle(handle=None):
        """From a CUmodule or CUlibrary handle (an int, or a cuda.bindings handle)."""
        return NvshmemKernelObject._make(handle, "NvshmemKernelObject.from_handle", "handle")

    @staticmethod
    def from_obj(obj):
        """From a cuda.core ObjectCode (its .handle: the CUlibrary it is loaded as)."""
        return NvshmemKernelObject._make(obj, "NvshmemKernelObject.from_obj", "obj")

    @staticmethod
    def from_obj_bytes(obj_bytes):
        """From the bytes of a cubin, loaded through cuda.core's ObjectCode."""
        call = "NvshmemKernelObject.from_obj_bytes"
        if not isinstance(obj_bytes, (bytes, bytearray, memoryview)):
            raise invalid(f"{call}: obj_bytes of type {type(obj_bytes).__name__} is not bytes")
        if bytes(obj_bytes[:4]) != b"\x7fELF":
            raise invalid(
                f"{call}: obj_bytes ({len(obj_bytes)} bytes, starting "
                f"{bytes(obj_bytes[:4])!r}) is not a cubin: a cubin is an ELF file"
            )
        try:
            from cuda.core import ObjectCode
        except ImportError:
            try:
                from cuda.core.experimental import ObjectCode
            except ImportError:
                raise invalid(
                    f"{call}: loading a cubin needs cuda.core (pip install cuda-core)"
                ) from None
        try:
            obj = ObjectCode.from_cubin(bytes(obj_bytes))
            obj.handle  # noqa: B018  (loads it: no GPU fails here)
        except Exception as error:
            raise exception(
                _symmem.ERR_BACKEND,
                f"{call}: cuda.core could not load the cubin ({type(error).__name__}: {error})",
            ) from error
        return NvshmemKernelObject._make(obj, call, "obj_bytes")

    @staticmethod
    def from_triton(triton_kernel):
        """From a compiled Triton kernel: its .handle, or its .module (a CUmodule)."""
        call = "NvshmemKernelObject.from_triton"
        for name in ("handle", "module"):
            value = getattr(triton_kernel, name, None)
            if value is not None:
                self = NvshmemKernelObject._make(value, call, f"triton_kernel.{name}")
                self.kind = self.kind or "module"  # Triton loads cubins as modules
                self._source = triton_kernel
                return self
        raise invalid(
            f"{call}: triton_kernel of type {type(triton_kernel).__name__} has no "
            ".handle or .module (expected a compiled Triton kernel)"
        )

    @staticmethod
    def from_cuda_bindings(cuda_kernel):
        """From a cuda.bindings.driver.CUmodule or CUlibrary."""
        return NvshmemKernelObject._make(
            cuda_kernel, "NvshmemKernelObject.from_cuda_bindings", "cuda_kernel"
        )

    def __repr__(self):
        return f"NvshmemKernelObject(handle={self.handle:#x}, kind={self.kind})"


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


# ---- the device libraries' files ----


def _language(language, call, choices):
    for member in choices:
        if language is member or language == member.value:
            return member
    raise invalid(
        f"{call}: language={language!r} is not one of {', '.join(str(m) for m in choices)}"
    )


def _arch(arch, call):
    """An SM architecture as NVSHMEM's file names write it: 90 from 90,
    "sm_90", "90a", (9, 0) or anything with .major and .minor."""
    if isinstance(arch, (tuple, list)) and len(arch) == 2:
        arch = f"{arch[0]}{arch[1]}"
    elif hasattr(arch, "major") and hasattr(arch, "minor"):
        arch = f"{arch.major}{arch.minor}"
    match = re.fullmatch(r"(?:sm_|compute_)?(\d+)a?", str(arch).strip().lower())
    if isinstance(arch, bool) or not match:
        raise invalid(f"{call}: arch={arch!r} is not an SM architecture (90, 'sm_90', (9, 0))")
    return match.group(1)


def _nvshmem_lib_dirs():
    """Where NVSHMEM's libraries are: beside the host library the gpu backend
    would load (SYMMEM_NVSHMEM_LIB first, then the nvidia-nvshmem wheel's)."""
    dirs = []
    for name in ("SYMMEM_NVSHMEM_LIB", "SYMMEM_NVSHMEM_WHEEL_LIB"):
        path = _symmem.env(name)
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        if folder and folder not in dirs:
            dirs.append(folder)
    return dirs


def find_device_bitcode_library(*, language=DeviceLibLanguage.LLVM_BITCODE, arch=None):
    """The path of NVSHMEM's device library (NVSHMEM4Py's call).

    Looked for beside the NVSHMEM host library (the nvidia-nvshmem wheel's,
    or the one SYMMEM_NVSHMEM_LIB names). Kernels linked with it run on the
    gpu backend after module_init() / library_init(). symmem's own device
    library is CUDA C: find_device_library().

    Args:
        language: a DeviceLibLanguage (or its value): LLVM_BITCODE for
            libnvshmem_device.bc, LTOIR for libnvshmem_device.ltoir.fatbin,
            STATIC for libnvshmem_device.a.
        arch: with LLVM_BITCODE, an SM architecture (90, "sm_90", (9, 0),
            or anything with .major and .minor) for
            libnvshmem_device_sm_<arch>.bc; None for the generic one.

    Returns:
        The file's path (a str).

    Raises:
        NvshmemInvalid: language is not a DeviceLibLanguage; arch is not an
            SM architecture; the file is not there (or NVSHMEM is not
            installed).

    Example:
        >>> try:
        ...     path = symmem.find_device_bitcode_library()
        ... except symmem.NvshmemInvalid:  # NVSHMEM is not installed here
        ...     path = None
        >>> path is None or path.endswith("libnvshmem_device.bc")
        True
    """
    call = "find_device_bitcode_library"
    language = _language(language, call, list(DeviceLibLanguage))
    if language is DeviceLibLanguage.LLVM_BITCODE:
        name = (
            "libnvshmem_device.bc"
            if arch is None
            else f"libnvshmem_device_sm_{_arch(arch, call)}.bc"
        )
    else:
        name = _LIBRARY_FILES[language]
    dirs = _nvshmem_lib_dirs()
    for folder in dirs:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    where = (
        f"looked in {', '.join(dirs)}"
        if dirs
        else "no NVSHMEM here: the nvidia-nvshmem wheel is not installed and "
        "SYMMEM_NVSHMEM_LIB is not set"
    )
    raise invalid(
        f"{call}: NVSHMEM's device library {name} was not found ({where}); install "
        "the nvidia-nvshmem-cu13 (or -cu12) wheel, or set SYMMEM_NVSHMEM_LIB to a "
        "libnvshmem_host.so.3 whose directory holds it. symmem's own device "
        "library is CUDA C source: symmem.find_device_library()"
    )


def find_device_library(language="cuda"):
    """The path of symmem's device library, device.cuh.

    CUDA C source in one file (include/symmem/device.cuh with the headers
    it includes inlined at build time), compiled by NVRTC with no include
    path together with the kernel that includes it (its only form; there is
    no .bc, LTO-IR or .a of it).

    Args:
        language: "cuda", the only form.

    Returns:
        The file's path (a str).

    Raises:
        NvshmemInvalid: language is not "cuda" (a DeviceLibLanguage names
            a form of NVSHMEM's library: find_device_bitcode_library()).

    Example:
        >>> symmem.find_device_library().endswith("device.cuh")
        True
    """
    call = "find_device_library"
    if isinstance(language, DeviceLibLanguage):
        raise invalid(
            f"{call}: language={language} is a form of NVSHMEM's device library "
            "(find_device_bitcode_library); symmem's is CUDA C source only: "
            "language='cuda'"
        )
    if not isinstance(language, str) or language != "cuda":
        raise invalid(
            f"{call}: language={language!r:.60} is not 'cuda' (symmem's device library "
            "is CUDA C source)"
        )
    return os.path.join(_HERE, "device", "device.cuh")
