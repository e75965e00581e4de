"""CuTe DSL tensors on the symmetric heap: NVSHMEM4Py's interop names
(nvshmem.core.interop.cute) for kernels of NVIDIA's CuTe DSL, on the gpu
backend. A tensor here is a cute.Tensor made from the symmetric CuPy array
symmem.array allocates (through DLPack); this module keeps the array until
free_tensor, so every host call that takes arrays works on it too
(tensor_get_buffer gives its Buffer). CuTe and CuPy are imported when a
tensor is made: the module imports, and its signatures read, anywhere
(symmem.device.cute, which kernels use, needs the CuTe DSL at import)."""

from symmem import _device_host, _memory, _multicast, _symmem
from symmem._errors import exception, invalid
from symmem.device import _nvvm_bitcode

_arrays = {}  # id(tensor) -> (tensor, the symmetric array under it)
_NAMES = None


def _cute():
    try:
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack
    except ImportError as error:
        raise ImportError(
            "symmem.interop.cute needs NVIDIA's CuTe DSL, which is not "
            "installed: pip install 'symmem[cute]'"
        ) from error
    return cutlass, cute, from_dlpack


def _dtype_name(dtype):
    """A NumPy dtype name for a CuTe element type (Float32, ...) or a name."""
    global _NAMES
    if isinstance(dtype, str) or hasattr(dtype, "itemsize"):
        return str(getattr(dtype, "name", dtype))
    if _NAMES is None:
        cutlass = _cute()[0]
        _NAMES = {
            cutlass.Int8: "int8",
            cutlass.Int16: "int16",
            cutlass.Int32: "int32",
            cutlass.Int64: "int64",
            cutlass.Uint8: "uint8",
            cutlass.Uint16: "uint16",
            cutlass.Uint32: "uint32",
            cutlass.Uint64: "uint64",
            cutlass.Float16: "float16",
            cutlass.BFloat16: "bfloat16",
            cutlass.Float32: "float32",
            cutlass.Float64: "float64",
        }
    if dtype not in _NAMES:
        raise invalid(
            f"interop.cute: dtype {dtype} is not one symmem allocates "
            f"({', '.join(sorted(_NAMES.values()))})"
        )
    return _NAMES[dtype]


def _wrap(array):
    from_dlpack = _cute()[2]
    t = from_dlpack(array, assumed_align=16)
    _arrays[id(t)] = (t, array)
    return t


def _array_of(call, tensor):
    entry = _arrays.get(id(tensor))
    if entry is None or entry[0] is not tensor:
        raise invalid(
            f"{call}: tensor is not one symmem.interop.cute made (tensor() or "
            "bytetensor()), or it was freed"
        )
    return entry[1]


def tensor(shape, dtype="float32", release=False, morder="C", except_on_del=True):
    """A cute.Tensor on the symmetric heap of every PE (collective over TEAM_WORLD).

    Args:
        shape: an int or a sequence of ints.
        dtype: a CuTe element type (cutlass.Float32, cutlass.BFloat16, ...) or
            a NumPy dtype or its name.
        release: True: finalize() frees it without a warning if still live.
        morder: "C" (row-major) or "F" (column-major).
        except_on_del: accepted for NVSHMEM4Py's signature (symmem frees
            only on free_tensor() or finalize()).

    Returns:
        A cute.Tensor over the allocation, on this PE's GPU.

    Raises:
        ImportError: the CuTe DSL is not installed (pip install 'symmem[cute]').
        NotImplementedError: the running backend is not the gpu backend.
        NvshmemInvalid: shape, dtype or morder is not one symmem takes, or
            symmem is not initialised.
        NvshmemError: the symmetric heap has no room for it.

    Example:
        On each PE, after symmem.init() on the gpu backend::

            import cutlass
            import symmem.interop.cute as scute
            t = scute.tensor((1024,), dtype=cutlass.Float32)
            scute.free_tensor(t)
    """
    _cute()
    if "device_memory" not in _symmem.capabilities():
        raise exception(
            _symmem.ERR_UNSUPPORTED,
            "interop.cute.tensor: CuTe tensors need the "
            f"gpu backend; the running backend is {_symmem.backend_name()}",
        )
    array = _memory.array(
        shape, dtype=_dtype_name(dtype), release=release, morder=morder, except_on_del=except_on_del
    )
    return _wrap(array)


def bytetensor(shape, dtype="float32", release=False, morder="C", except_on_del=True):
    """tensor() of int8 elements (dtype is ignored, as in NVSHMEM4Py).

    Args:
        shape: an int or a sequence of ints (bytes).
        dtype: ignored.
        release: as for tensor().
        morder: as for tensor().
        except_on_del: as for tensor().

    Returns:
        An int8 cute.Tensor on the symmetric heap.

    Raises:
        ImportError: the CuTe DSL is not installed.
        NotImplementedError: the running backend is not the gpu backend.
        NvshmemInvalid: as for tensor().

    Example:
        ::

            raw = scute.bytetensor((4096,))
    """
    return tensor(shape, dtype="int8", release=release, morder=morder, except_on_del=except_on_del)


def tensor_get_buffer(tensor):
    """The Buffer under a tensor this module made, its size in bytes and its dtype.

    Args:
        tensor: a tensor from tensor() or bytetensor().

    Returns:
        (Buffer, nbytes, dtype name).

    Raises:
        NvshmemInvalid: tensor is not one of this module's, or was freed.

    Example:
        ::

            buf, nbytes, dtype = scute.tensor_get_buffer(t)
    """
    array = _array_of("tensor_get_buffer", tensor)
    buf = _memory.buffer_of(array, "tensor_get_buffer", "tensor")[0]
    return buf, array.nbytes, str(array.dtype)


def free_tensor(tensor):
    """Free a tensor made by tensor() or bytetensor() (collective).

    Args:
        tensor: the tensor.

    Raises:
        NvshmemInvalid: tensor is not one of this module's, or was freed.

    Example:
        ::

            scute.free_tensor(t)
    """
    array = _array_of("free_tensor", tensor)
    del _arrays[id(tensor)]
    _memory.free_array(array)


def get_peer_tensor(tensor, peer_pe=None):
    """The tensor over PE peer_pe's copy, for loads and stores through the mapping.

    Args:
        tensor: a tensor of this module's.
        peer_pe: the PE (default: this one).

    Returns:
        A cute.Tensor over the peer's copy (not for free_tensor).

    Raises:
        NvshmemInvalid: tensor is not one of this module's; peer_pe is out of
            range or not mapped here (another node).

    Example:
        ::

            left = scute.get_peer_tensor(t, (me - 1) % npes)
    """
    array = _array_of("get_peer_tensor", tensor)
    pe = _symmem.my_pe() if peer_pe is None else peer_pe
    return _cute()[2](_memory.get_peer_array(array, pe), assumed_align=16)


def get_multicast_tensor(team, tensor):
    """A tensor over NVLink multicast memory: symmem never enables it, so this raises.

    Args:
        team: the team.
        tensor: a tensor of this module's.

    Returns:
        Never: see Raises.

    Raises:
        NvshmemInvalid: tensor is not one of this module's.
        NvshmemError: multicast is disabled (NVSHMEM_DISABLE_NVLS).
        NotImplementedError: multicast is not mapped by this backend.

    Example:
        ::

            scute.get_multicast_tensor(symmem.Teams.TEAM_NODE, t)   # raises, saying why
    """
    array = _array_of("get_multicast_tensor", tensor)
    return _multicast.get_multicast_array(team, array)


def register_external_tensor(tensor):
    """NVSHMEM4Py's name: the tensor's memory registered as symmetric; a
    tensor of this module's already is, so it comes back as it is.

    Args:
        tensor: a tensor of this module's.

    Returns:
        The tensor.

    Raises:
        NvshmemInvalid: tensor is not one of this module's (register other
            memory with symmem.register_external_buffer).

    Example:
        ::

            t2 = scute.register_external_tensor(t)
    """
    _array_of("register_external_tensor", tensor)
    return tensor


def unregister_external_tensor(tensor):
    """Undo register_external_tensor (nothing to undo for this module's tensors).

    Args:
        tensor: a tensor of this module's.

    Raises:
        NvshmemInvalid: tensor is not one of this module's.

    Example:
        ::

            scute.unregister_external_tensor(t)
    """
    _array_of("unregister_external_tensor", tensor)


def cleanup_cute():
    """Forget every tensor this module made and did not free (their memory
    is freed by finalize()); NVSHMEM4Py calls it before finalize.

    Example:
        ::

            scute.cleanup_cute()
    """
    _arrays.clear()


def cuda_library_handle(compiled):
    """The cudaLibrary_t handle (an int) of a kernel cute.compile made.

    CuTe DSL up to 4.5 loads the library when it compiles
    (``compiled.jit_module.cuda_library``, NVSHMEM4Py's way); 4.8 loads it at
    the first launch, so it is loaded here first (``compiled.to()``), which
    the launches then use.

    Raises:
        NvshmemInvalid: the compiled function has no CUDA library (no kernel).
    """
    module = getattr(compiled, "jit_module", None)
    if module is None and hasattr(compiled, "to"):
        compiled.to()  # loads the library: the jit_module later launches use
        module = getattr(compiled, "jit_module", None)
    libraries = getattr(module, "cuda_library", None) if module is not None else None
    if not libraries:
        raise invalid(
            "cute_compile_helper: the compiled function has no CUDA library "
            f"(it launches no @cute.kernel?): {type(compiled).__name__}"
        )
    return int(libraries[0])


def find_cute_bitcode_library():
    """The path of NVSHMEM's device bitcode as CuTe's libNVVM takes it: for
    ``cute.compile(..., options="--link-libraries=" + path)``.

    libNVVM refuses functions with an explicit section, which NVSHMEM 3.4's
    libnvshmem_device.bc has; this is a copy without them (made once with
    llvmlite and kept in ~/.cache/symmem/cute), or the original where it has
    none.

    Raises:
        NvshmemInvalid: no NVSHMEM bitcode is installed, or llvmlite is missing.

    Example:
        ::

            compiled = cute.compile(launch, dst, src,
                                    options="--link-libraries=" + scute.find_cute_bitcode_library())
    """
    call = "find_cute_bitcode_library"
    return _nvvm_bitcode.for_nvvm(_device_host.find_device_bitcode_library(), call)


def cute_compile_helper(kernel_fn, *args, **kwargs):
    """cute.compile(kernel_fn, *args, **kwargs), then library_init on the result.

    The library_init gives a kernel linking NVSHMEM's bitcode its device
    state, and a kernel on symmem's engine the constant state its fast path
    reads; run library_finalize(kernel_object) when done with it.

    Args:
        kernel_fn: a @cute.jit launcher of a @cute.kernel.
        *args: arguments to compile for (tensors, ...).
        **kwargs: passed to cute.compile (options="--link-libraries=...", ...).

    Returns:
        (compiled, kernel_object): the compiled launcher and the
        NvshmemKernelObject of its CUDA library.

    Raises:
        ImportError: the CuTe DSL is not installed.
        NvshmemInvalid: symmem is not initialised.
        NotImplementedError: the running backend is not the gpu backend.

    Example:
        ::

            compiled, kobj = scute.cute_compile_helper(launch, dst, src)
            compiled(dst, src)
            symmem.library_finalize(kobj)
    """
    cute = _cute()[1]
    compiled = cute.compile(kernel_fn, *args, **kwargs)
    kernel_object = _device_host.NvshmemKernelObject.from_handle(cuda_library_handle(compiled))
    _device_host.library_init(kernel_object)
    return compiled, kernel_object
