"""NvshmemKernelObject (NVSHMEM4Py's class), and how module_init and
library_init read the module or library they are given: an
NvshmemKernelObject, a cuda.core ObjectCode, a cuda.bindings CUmodule or
CUlibrary, or a handle as an int."""

import operator

from symmem import _symmem
from symmem._errors import exception, invalid

_KINDS = {"CUmodule": "module", "CUlibrary": "library"}  # cuda.bindings.driver's types


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
