"""NVSHMEM4Py's host helpers for device code (python/symmem/_device_host.py):
their names and signatures, NvshmemKernelObject from every source, every
refusal, the device libraries' files, and module_init & co. on the cpu
backend (NotImplementedError naming it, on every PE). What they do on the
gpu backend: tests/gpu/host_helpers.py (test_gpu.py runs it)."""

import importlib.util
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import symmem
import symmem.core
from symmem import DeviceLibLanguage, NvshmemInvalid, NvshmemKernelObject
from conftest import assert_all_ok, cpu_only, gpu_count

# NVSHMEM4Py 0.4.1's nvshmem.core names for device code (init_fini.py, nvshmem_types.py)
HOST_HELPERS = [
    "module_init",
    "module_finalize",
    "library_init",
    "library_finalize",
    "NvshmemKernelObject",
    "find_device_bitcode_library",
    "DeviceLibLanguage",
]


class CUmodule:  # the shape of cuda.bindings.driver's handle types: a class name and __int__
    def __init__(self, address):
        self.address = address

    def __int__(self):
        return self.address


class CUlibrary(CUmodule):
    pass


class ObjectCode:  # cuda.core's: .handle is the CUlibrary it is loaded as
    def __init__(self, handle):
        self.handle = handle


class CompiledTritonKernel:
    def __init__(self, module):
        self.module = module


def test_the_host_helpers_are_nvshmem4py_s_names_in_symmem_and_symmem_core():
    for name in HOST_HELPERS + ["find_device_library"]:
        assert name in symmem.__all__ and name in symmem.core.__all__, name
        assert getattr(symmem.core, name) is getattr(symmem, name), name


def test_signatures_follow_nvshmem4py():
    def params(fn):
        return [(p.name, p.kind.name, p.default) for p in inspect.signature(fn).parameters.values()]

    empty = inspect.Parameter.empty
    assert params(symmem.module_init) == [("mod", "POSITIONAL_OR_KEYWORD", empty)]
    assert params(symmem.module_finalize) == [("mod", "POSITIONAL_OR_KEYWORD", empty)]
    assert params(symmem.library_init) == [("lib", "POSITIONAL_OR_KEYWORD", empty)]
    assert params(symmem.library_finalize) == [("lib", "POSITIONAL_OR_KEYWORD", empty)]
    assert params(symmem.find_device_bitcode_library) == [
        ("language", "KEYWORD_ONLY", DeviceLibLanguage.LLVM_BITCODE),
        ("arch", "KEYWORD_ONLY", None),
    ]
    assert params(NvshmemKernelObject.from_handle) == [("handle", "POSITIONAL_OR_KEYWORD", None)]
    for method, arg in (
        ("from_obj", "obj"),
        ("from_obj_bytes", "obj_bytes"),
        ("from_triton", "triton_kernel"),
        ("from_cuda_bindings", "cuda_kernel"),
    ):
        assert params(getattr(NvshmemKernelObject, method)) == [
            (arg, "POSITIONAL_OR_KEYWORD", empty)
        ], method


def test_device_lib_language_has_nvshmem4py_s_members_and_values():
    assert [(m.name, m.value) for m in DeviceLibLanguage] == [
        ("LLVM_BITCODE", "bc"),
        ("LTOIR", "ltoir"),
        ("STATIC", "a"),
    ]


def test_kernel_objects_from_every_source():
    cases = [
        (NvshmemKernelObject.from_handle(0x7F00), 0x7F00, None),
        (NvshmemKernelObject.from_handle(np.uint64(0x7F08)), 0x7F08, None),
        (NvshmemKernelObject.from_handle(CUmodule(0x7F10)), 0x7F10, "module"),
        (NvshmemKernelObject.from_cuda_bindings(CUmodule(0x7F20)), 0x7F20, "module"),
        (NvshmemKernelObject.from_cuda_bindings(CUlibrary(0x7F30)), 0x7F30, "library"),
        (NvshmemKernelObject.from_obj(ObjectCode(CUlibrary(0x7F40))), 0x7F40, "library"),
        (NvshmemKernelObject.from_triton(CompiledTritonKernel(0x7F50)), 0x7F50, "module"),
        (NvshmemKernelObject.from_handle((1 << 64) - 1), (1 << 64) - 1, None),
    ]
    for obj, handle, kind in cases:
        assert isinstance(obj, NvshmemKernelObject)
        assert (obj.handle, obj.kind) == (handle, kind), repr(obj)
    assert repr(cases[3][0]) == "NvshmemKernelObject(handle=0x7f20, kind=module)"


def test_the_real_cuda_bindings_handle_types_are_recognised():
    driver = pytest.importorskip("cuda.bindings.driver")
    assert NvshmemKernelObject.from_cuda_bindings(driver.CUmodule(0x1000)).kind == "module"
    assert NvshmemKernelObject.from_cuda_bindings(driver.CUlibrary(0x2000)).kind == "library"


def test_a_kernel_object_is_made_only_by_its_from_methods():
    with pytest.raises(NvshmemInvalid) as info:
        NvshmemKernelObject(0x1000)
    assert "NvshmemKernelObject: make one with NvshmemKernelObject.from_handle" in str(info.value)


@pytest.mark.parametrize(
    "method, value, words",
    [
        (
            "from_handle",
            None,
            ["from_handle: handle of type NoneType", "not an NvshmemKernelObject"],
        ),
        ("from_handle", "0x1000", ["from_handle: handle of type str ('0x1000')"]),
        ("from_handle", 1.5, ["from_handle: handle of type float (1.5)"]),
        ("from_handle", True, ["from_handle: handle of type bool (True)"]),
        ("from_handle", 0, ["from_handle: handle=0 is not a CUDA handle"]),
        ("from_handle", -8, ["from_handle: handle=-8 is not a CUDA handle"]),
        ("from_handle", 1 << 64, [f"from_handle: handle={1 << 64} is not a CUDA handle"]),
        ("from_handle", np.zeros(3, np.int64), ["from_handle: handle of type ndarray"]),
        ("from_cuda_bindings", CUmodule(0), ["from_cuda_bindings: cuda_kernel=0 is not a CUDA"]),
        ("from_cuda_bindings", object(), ["from_cuda_bindings: cuda_kernel of type object"]),
        ("from_obj", ObjectCode("lib"), ["from_obj: obj.handle of type str ('lib')"]),
        ("from_obj", b"\x7fELF", ["from_obj: obj of type bytes"]),
        (
            "from_triton",
            object(),
            ["from_triton: triton_kernel of type object has no .handle or .module"],
        ),
        ("from_triton", CompiledTritonKernel(-1), ["from_triton: triton_kernel.module=-1 is not"]),
        ("from_obj_bytes", "cubin", ["from_obj_bytes: obj_bytes of type str is not bytes"]),
    ],
)
def test_kernel_objects_refuse_what_is_not_a_handle(method, value, words):
    with pytest.raises(NvshmemInvalid) as info:
        getattr(NvshmemKernelObject, method)(value)
    for word in words:
        assert word in str(info.value), str(info.value)


def test_from_obj_bytes_refuses_what_is_not_a_cubin():
    with pytest.raises(NvshmemInvalid) as info:
        NvshmemKernelObject.from_obj_bytes(b"PTX text")
    assert (
        "from_obj_bytes: obj_bytes (8 bytes, starting b'PTX ') is not a cubin: a cubin "
        "is an ELF file"
    ) in str(info.value)


def test_from_obj_bytes_says_why_it_cannot_load_a_cubin():
    try:
        import cuda.core  # noqa: F401
    except ImportError:
        with pytest.raises(NvshmemInvalid) as info:
            NvshmemKernelObject.from_obj_bytes(b"\x7fELF")
        assert "from_obj_bytes: loading a cubin needs cuda.core (pip install cuda-core)" in str(
            info.value
        )
        return
    if gpu_count() > 0:
        pytest.skip(
            "with a GPU, cuda.core 1.x loaded a truncated ELF without an error "
            "(2 x H200, 2026-11-22); the check is for machines without one"
        )
    with pytest.raises(symmem.NvshmemError) as info:  # no GPU here: cuda.core's loading fails
        NvshmemKernelObject.from_obj_bytes(b"\x7fELF")
    assert "from_obj_bytes: cuda.core could not load the cubin (" in str(info.value)


@pytest.mark.parametrize(
    "call", ["module_init", "module_finalize", "library_init", "library_finalize"]
)
def test_calls_before_init_raise(call):
    assert not symmem._symmem.initialized()  # this process never initialises symmem
    with pytest.raises(NvshmemInvalid) as info:
        getattr(symmem, call)(NvshmemKernelObject.from_handle(0x1000))
    assert f"{call}: symmem is not initialized" in str(info.value)
    with pytest.raises(NvshmemInvalid) as info:  # the argument is checked first
        getattr(symmem, call)("junk")
    assert f"{call}: {call.split('_')[0][:3]} of type str ('junk') is not" in str(info.value)


ON_THE_CPU_BACKEND = """
me = nvshmem.my_pe()
K = nvshmem.NvshmemKernelObject
mod, lib = K.from_handle(0x1000), K.from_cuda_bindings(CUlibrary(0x2000))
for call, arg in (("module_init", mod), ("module_finalize", mod), ("library_init", lib),
                  ("library_finalize", lib), ("library_init", 0x3000)):
    msg = expect_raises(NotImplementedError, [f"[pe {me}] {call}: CUDA modules and libraries "
                        "need the gpu backend; the running backend is cpu",
                        "symmem.device.numba"], getattr(nvshmem, call), arg)
    check(msg.count("[pe ") == 1, msg)
expect_raises(nvshmem.NvshmemInvalid, [f"[pe {me}] module_init: mod=0x2000 is a CUlibrary, "
              "not a CUmodule; call library_init"], nvshmem.module_init, lib)
expect_raises(nvshmem.NvshmemInvalid, [f"[pe {me}] library_finalize: lib=0x10 is a CUmodule, "
              "not a CUlibrary; call module_finalize"], nvshmem.library_finalize,
              K.from_cuda_bindings(CUmodule(0x10)))
for junk, words in (("abc", "mod of type str ('abc')"), (None, "mod of type NoneType"),
                    (-1, "mod=-1 is not a CUDA handle"), (2.0, "mod of type float (2.0)")):
    expect_raises(nvshmem.NvshmemInvalid, [f"[pe {me}] module_init: {words}"],
                  nvshmem.module_init, junk)
nvshmem.barrier_all()
nvshmem.finalize()
expect_raises(nvshmem.NvshmemInvalid, ["module_finalize: symmem is not initialized"],
              nvshmem.module_finalize, mod)
print(f"PE {me} OK", flush=True)
"""


@cpu_only("the cpu backend has no CUDA modules")
@pytest.mark.parametrize("n", [1, 2])
def test_module_and_library_init_on_the_cpu_backend_say_why_they_cannot_run(run_pes, n):
    stand_ins = inspect.getsource(CUmodule) + inspect.getsource(CUlibrary)
    result = run_pes(n, stand_ins + "nvshmem.init()\n" + ON_THE_CPU_BACKEND)
    assert_all_ok(result, n)


# ---- the device libraries' files ----


@pytest.fixture
def nvshmem_lib(tmp_path, monkeypatch):
    """An NVSHMEM lib folder with the device library's files, named through
    SYMMEM_NVSHMEM_LIB (the host library itself need not exist to be looked beside)."""
    lib = tmp_path / "nvshmem" / "lib"
    lib.mkdir(parents=True)
    for name in (
        "libnvshmem_device.bc",
        "libnvshmem_device_sm_90.bc",
        "libnvshmem_device.ltoir.fatbin",
        "libnvshmem_device.a",
    ):
        (lib / name).write_bytes(b"BC")
    monkeypatch.setenv("SYMMEM_NVSHMEM_LIB", str(lib / "libnvshmem_host.so.3"))
    return lib


def test_find_device_bitcode_library_finds_every_form(nvshmem_lib):
    find = symmem.find_device_bitcode_library
    assert find() == str(nvshmem_lib / "libnvshmem_device.bc")
    assert find(language=DeviceLibLanguage.LLVM_BITCODE) == str(
        nvshmem_lib / "libnvshmem_device.bc"
    )
    assert find(language="bc") == str(nvshmem_lib / "libnvshmem_device.bc")
    assert find(language=DeviceLibLanguage.LTOIR) == str(
        nvshmem_lib / "libnvshmem_device.ltoir.fatbin"
    )
    assert find(language=DeviceLibLanguage.STATIC) == str(nvshmem_lib / "libnvshmem_device.a")
    for arch in (90, "90", "sm_90", "SM_90", "compute_90", "90a", (9, 0), [9, 0]):
        assert find(arch=arch) == str(nvshmem_lib / "libnvshmem_device_sm_90.bc"), arch
    # arch picks among bitcode files only, as in NVSHMEM4Py
    assert find(language=DeviceLibLanguage.STATIC, arch=100) == str(
        nvshmem_lib / "libnvshmem_device.a"
    )


def test_find_device_bitcode_library_says_what_is_missing(nvshmem_lib):
    with pytest.raises(NvshmemInvalid) as info:
        symmem.find_device_bitcode_library(arch="sm_100")
    msg = str(info.value)
    assert (
        "find_device_bitcode_library: NVSHMEM's device library libnvshmem_device_sm_100.bc "
        f"was not found (looked in {nvshmem_lib}" in msg
    ), msg
    assert "install the nvidia-nvshmem-cu13 (or -cu12) wheel, or set SYMMEM_NVSHMEM_LIB" in msg


def test_find_device_bitcode_library_without_nvshmem(monkeypatch):
    monkeypatch.delenv("SYMMEM_NVSHMEM_LIB", raising=False)
    monkeypatch.delenv("SYMMEM_NVSHMEM_WHEEL_LIB", raising=False)
    with pytest.raises(NvshmemInvalid) as info:
        symmem.find_device_bitcode_library()
    msg = str(info.value)
    assert (
        "NVSHMEM's device library libnvshmem_device.bc was not found (no NVSHMEM here: the "
        "nvidia-nvshmem wheel is not installed and SYMMEM_NVSHMEM_LIB is not set)" in msg
    ), msg
    assert "symmem's own device library is CUDA C source: symmem.find_device_library()" in msg


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"arch": "hopper"}, "arch='hopper' is not an SM architecture"),
        ({"arch": -90}, "arch=-90 is not an SM architecture"),
        ({"arch": True}, "arch=True is not an SM architecture"),
        ({"arch": 9.0}, "arch=9.0 is not an SM architecture"),
        (
            {"language": "ptx"},
            "language='ptx' is not one of DeviceLibLanguage.LLVM_BITCODE, "
            "DeviceLibLanguage.LTOIR, DeviceLibLanguage.STATIC",
        ),
        ({"language": None}, "language=None is not one of"),
    ],
)
def test_find_device_bitcode_library_refuses_bad_arguments(nvshmem_lib, kwargs, words):
    with pytest.raises(NvshmemInvalid) as info:
        symmem.find_device_bitcode_library(**kwargs)
    assert f"find_device_bitcode_library: {words}" in str(info.value)


def test_find_device_library_is_symmem_s_cuda_source():
    path = symmem.find_device_library()
    assert os.path.basename(path) == "device.cuh" and os.path.isfile(path)
    assert not os.path.islink(path)
    assert path == symmem.find_device_library(language="cuda")
    text = open(path).read()
    assert "SYMMEM_DEVICE_API int symmem_dev_p(" in text  # NVRTC compiles it as it is:
    assert "typedef struct symmem_device_state {" in text  # device_layout.h, inlined
    assert not [line for line in text.splitlines() if line.startswith('#include "')]
    # the only #include left is the layout's <stdint.h>, for C, which CUDA skips
    assert [line for line in text.splitlines() if line.startswith("#include")] == [
        "#include <stdint.h>"
    ]
    # include/symmem/device.cuh with its headers inlined, as this tree has them
    # now (a stale copy: run `pip install -e .` or `make dev` again)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    embed_path = os.path.join(root, "tools", "embed.py")
    if os.path.isfile(embed_path) and path.startswith(os.path.join(root, "python")):
        spec = importlib.util.spec_from_file_location("symmem_embed", embed_path)
        embed = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(embed)
        assert embed.package_copy(os.path.join("include", "symmem", "device.cuh")) == text


@pytest.mark.parametrize(
    "language, words",
    [
        (
            DeviceLibLanguage.LLVM_BITCODE,
            "language=DeviceLibLanguage.LLVM_BITCODE is a form of "
            "NVSHMEM's device library (find_device_bitcode_library); "
            "symmem's is CUDA C source only: language='cuda'",
        ),
        ("bc", "language='bc' is not 'cuda'"),
    ],
)
def test_find_device_library_refuses_other_languages(language, words):
    with pytest.raises(NvshmemInvalid) as info:
        symmem.find_device_library(language)
    assert f"find_device_library: {words}" in str(info.value)


CUDA_MODULE_SLOT = """
    from symmem import _symmem
    expect_raises(nvshmem.NvshmemInvalid, ["module_init: symmem is not initialized"],
                  _symmem.cuda_module, False, 0x1234, 1)
    nvshmem.init()
    expect_raises(NotImplementedError, ["[pe 0] library_init: the cpu backend runs no CUDA "
                                        "modules"], _symmem.cuda_module, True, 0x1234, 1)
    ok()
    nvshmem.finalize()
"""


@cpu_only("the cpu backend has no CUDA modules")
def test_the_backend_slot_behind_module_init_says_why_it_cannot_run(run_pes):
    """_symmem.cuda_module, which module_init and friends call on the gpu
    backend: before init, and on the cpu backend."""
    assert_all_ok(run_pes(1, CUDA_MODULE_SLOT), 1)


def test_state_address_refuses_where_no_gpu_copy_exists():
    """Before init, and on the cpu backend, there is no GPU device state:
    state_address raises naming the call and the PE."""
    code = (
        "import symmem, symmem.device as d\n"
        "for when in ('before', 'cpu'):\n"
        "    if when == 'cpu': symmem.init()\n"
        "    try: d.state_address(); print('no error')\n"
        "    except symmem.NvshmemInvalid as e: print(when, e)\n"
        "symmem.finalize()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, SYMMEM_BACKEND="cpu"),
    ).stdout
    assert "before state_address: this process (not initialised) has no device state" in out, out
    assert "cpu [pe 0] state_address: this PE has no device state on a GPU" in out, out
