"""symmem.device.cute (with symmem.interop.cute) and
symmem.device.numba_cuda_mlir without GPUs: NVSHMEM4Py 0.4.1's names,
the modules' layout, the message a missing DSL gives, the device library's
signatures, and, where the DSL is installed, every call compiled for sm_90
on each engine (cute_compile.py, mlir_compile.py). CI installs neither DSL:
there the layout and message tests run and the rest skip, saying why. On
GPUs: tests/gpu/cute_device.py and mlir_device.py (test_gpu.py)."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
HAVE_CUTE = importlib.util.find_spec("cutlass") is not None
HAVE_MLIR = importlib.util.find_spec("numba_cuda_mlir") is not None
needs_cute = pytest.mark.skipif(
    not HAVE_CUTE, reason="nvidia-cutlass-dsl is not installed (pip install 'symmem[cute]')"
)
needs_mlir = pytest.mark.skipif(
    not HAVE_MLIR, reason="numba-cuda-mlir is not installed (pip install 'symmem[mlir]')"
)

# NVSHMEM4Py 0.4.1's nvshmem.core.device.cute.__all__ and
# nvshmem.core.device.numba_cuda_mlir.__all__ (their modules' lists, sorted)
NVSHMEM4PY_CUTE = [
    "SmemAmount",
    "alltoall",
    "alltoall_block",
    "alltoall_warp",
    "ask_smem",
    "atomic_add",
    "atomic_and",
    "atomic_compare_swap",
    "atomic_fetch",
    "atomic_fetch_add",
    "atomic_fetch_and",
    "atomic_fetch_inc",
    "atomic_fetch_or",
    "atomic_fetch_xor",
    "atomic_inc",
    "atomic_or",
    "atomic_set",
    "atomic_swap",
    "atomic_xor",
    "barrier",
    "barrier_all",
    "barrier_all_block",
    "barrier_all_warp",
    "barrier_block",
    "barrier_warp",
    "broadcast",
    "broadcast_block",
    "broadcast_warp",
    "fcollect",
    "fcollect_block",
    "fcollect_warp",
    "fence",
    "g",
    "get",
    "get_block",
    "get_multicast_tensor",
    "get_nbi",
    "get_nbi_block",
    "get_nbi_warp",
    "get_peer_tensor",
    "get_warp",
    "give_smem",
    "my_pe",
    "n_pes",
    "p",
    "put",
    "put_block",
    "put_nbi",
    "put_nbi_block",
    "put_nbi_warp",
    "put_signal",
    "put_signal_block",
    "put_signal_nbi",
    "put_signal_nbi_block",
    "put_signal_nbi_warp",
    "put_signal_warp",
    "put_warp",
    "quiet",
    "reduce",
    "reduce_block",
    "reduce_warp",
    "reducescatter",
    "reducescatter_block",
    "reducescatter_warp",
    "release_smem",
    "signal_op",
    "signal_wait",
    "sync",
    "sync_all",
    "sync_all_block",
    "sync_all_warp",
    "sync_block",
    "sync_warp",
    "team_my_pe",
    "team_n_pes",
]
NVSHMEM4PY_MLIR = [
    "alltoall",
    "alltoall_block",
    "alltoall_warp",
    "atomic_add",
    "atomic_and",
    "atomic_compare_swap",
    "atomic_fetch",
    "atomic_fetch_add",
    "atomic_fetch_and",
    "atomic_fetch_inc",
    "atomic_fetch_or",
    "atomic_fetch_xor",
    "atomic_inc",
    "atomic_or",
    "atomic_set",
    "atomic_swap",
    "atomic_xor",
    "barrier",
    "barrier_all",
    "barrier_all_block",
    "barrier_all_warp",
    "barrier_block",
    "barrier_warp",
    "broadcast",
    "broadcast_block",
    "broadcast_warp",
    "fcollect",
    "fcollect_block",
    "fcollect_warp",
    "g",
    "get",
    "get_block",
    "get_multicast_array",
    "get_nbi",
    "get_nbi_block",
    "get_nbi_warp",
    "get_peer_array",
    "get_warp",
    "my_pe",
    "n_pes",
    "p",
    "put",
    "put_block",
    "put_nbi",
    "put_nbi_block",
    "put_nbi_warp",
    "put_signal",
    "put_signal_block",
    "put_signal_nbi",
    "put_signal_nbi_block",
    "put_signal_nbi_warp",
    "put_signal_warp",
    "put_warp",
    "reduce",
    "reduce_block",
    "reduce_warp",
    "reducescatter",
    "reducescatter_block",
    "reducescatter_warp",
    "signal_op",
    "signal_wait",
    "sync",
    "sync_all",
    "sync_all_block",
    "sync_all_warp",
    "sync_block",
    "sync_warp",
    "team_my_pe",
    "team_n_pes",
]
NVSHMEM4PY_INTEROP_CUTE = [
    "bytetensor",
    "tensor",
    "free_tensor",
    "tensor_get_buffer",
    "get_peer_tensor",
    "get_multicast_tensor",
    "register_external_tensor",
    "unregister_external_tensor",
    "cleanup_cute",
    "cute_compile_helper",
]


def test_the_reference_lists_have_nvshmem4pys_sizes():
    assert len(set(NVSHMEM4PY_CUTE)) == 75 and len(set(NVSHMEM4PY_MLIR)) == 69


def test_module_layout():
    device = os.path.join(ROOT, "python", "symmem", "device")
    for path in (
        "cute/__init__.py",
        "cute/_engine.py",
        "cute/_externs.py",
        "cute/_rma.py",
        "cute/_collectives.py",
        "cute/_atomics.py",
        "cute/_memory.py",
        "numba_cuda_mlir/__init__.py",
        "numba_cuda_mlir/_library.py",
        "numba_cuda_mlir/_calls.py",
        "numba_cuda_mlir/_collectives.py",
        "_library_calls.py",
        "_ltoir.py",
        "_dsl_docs.py",
    ):
        assert os.path.isfile(os.path.join(device, path)), path
    assert os.path.isfile(os.path.join(ROOT, "python", "symmem", "interop", "cute.py"))
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    assert re.search(r'^cute = \["nvidia-cutlass-dsl', text, re.M)
    assert re.search(r'^mlir = \["numba-cuda-mlir', text, re.M)


@pytest.mark.parametrize(
    "module,extra",
    [
        ("symmem.device.cute", "cute"),
        ("symmem.core.device.cute", "cute"),
        ("symmem.device.numba_cuda_mlir", "mlir"),
        ("symmem.core.device.numba_cuda_mlir", "mlir"),
    ],
)
def test_a_missing_dsl_names_the_extra(module, extra):
    """With the DSL hidden (as where it is not installed), importing the
    module raises ImportError naming pip install 'symmem[extra]'."""
    hide = "cutlass" if extra == "cute" else "numba_cuda_mlir"
    code = (
        f"import sys; sys.modules[{hide!r}] = None\n"
        "import symmem.core\n"
        f"try:\n    import {module}\nexcept ImportError as e:\n    print(e)\n"
        "else:\n    print('imported')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert f"pip install 'symmem[{extra}]'" in out.stdout, out.stdout + out.stderr


def test_interop_cute_imports_without_the_dsl():
    import symmem.interop.cute as scute

    for name in NVSHMEM4PY_INTEROP_CUTE:
        assert callable(getattr(scute, name)), name


@needs_cute
def test_cute_names_cover_nvshmem4py():
    import symmem.core.device.cute as alias
    import symmem.device.cute as dev

    assert alias is dev
    missing = sorted(n for n in NVSHMEM4PY_CUTE if not hasattr(dev, n))
    assert not missing, f"symmem.device.cute lacks {missing}"
    assert set(NVSHMEM4PY_CUTE) <= set(dev.__all__)
    assert len(dev.__all__) == len(set(dev.__all__))


@needs_mlir
def test_mlir_names_cover_nvshmem4py():
    import symmem.core.device.numba_cuda_mlir as alias
    import symmem.device.numba_cuda_mlir as dev

    assert alias is dev
    missing = sorted(n for n in NVSHMEM4PY_MLIR if not hasattr(dev, n))
    assert not missing, f"symmem.device.numba_cuda_mlir lacks {missing}"
    assert len(dev.__all__) == len(set(dev.__all__))


NEVER_RAISE = {"engine", "cleanup_cute"}


def _documented(module, names):
    """Every function among names has a summary, Args naming its parameters,
    Raises (unless it never raises) and an Example code block (test_docs.py's
    rules)."""
    import inspect

    sys.path.insert(0, HERE)
    from test_docs import entries, sections

    for name in names:
        fn = getattr(module, name)
        if isinstance(fn, type) or not callable(fn):
            continue
        found = sections(inspect.getdoc(fn) or "")
        params = [p.name for p in inspect.signature(fn).parameters.values()]
        if params:
            assert {e.lstrip("*") for e in entries(found.get("Args", []))} == set(params), name
        assert name in NEVER_RAISE or entries(found.get("Raises", [])), name
        assert any(line.endswith("::") for line in found.get("Example", [])), name


@needs_cute
def test_cute_calls_are_documented():
    import symmem.device.cute as dev

    _documented(dev, dev.__all__)


@needs_mlir
def test_mlir_calls_are_documented():
    import symmem.device.numba_cuda_mlir as dev

    _documented(dev, dev.__all__)


def test_interop_cute_is_documented():
    import symmem.interop.cute as scute

    _documented(scute, NVSHMEM4PY_INTEROP_CUTE)


def _device_bitcode(tmp_path):
    """device.bc: the package's, else built into tmp_path where clang is."""
    shipped = os.path.join(ROOT, "python", "symmem", "device", "device.bc")
    if os.path.exists(shipped):
        return shipped
    tool = os.path.join(ROOT, "tools", "device_bitcode.py")
    out = str(tmp_path / "device.bc")
    if shutil.which("clang") is None:
        pytest.skip("no device.bc and no clang to build it (tools/device_bitcode.py)")
    subprocess.run([sys.executable, tool, out], check=True, capture_output=True, timeout=300)
    return out


def test_library_signatures_match_the_bitcode(tmp_path):
    """_library_calls.SIGNATURES against device.bc's definitions (llvm-dis)."""
    if shutil.which("llvm-dis") is None:
        pytest.skip("llvm-dis is not installed")
    from symmem.device import _library_calls as L

    text = subprocess.run(
        ["llvm-dis", _device_bitcode(tmp_path), "-o", "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    llvm = {"u64": "i64", "i64": "i64", "i32": "i32", "u32": "i32"}
    found = {
        m.group(2): (m.group(1), [a.split()[0] for a in m.group(3).split(",") if a.strip()])
        for m in re.finditer(r"^define .*?(i32|i64|void) @symmem_dev_(\w+)\((.*?)\)", text, re.M)
    }
    for name, (ret, *params) in L.SIGNATURES.items():
        assert name in found, f"device.bc has no symmem_dev_{name}"
        got_ret, got_params = found[name]
        assert got_ret == llvm[ret], f"symmem_dev_{name} returns {got_ret}"
        assert got_params == [llvm[p] for p in params], f"symmem_dev_{name}({got_params})"


def _run(args, timeout=1200):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a")
    out = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )
    return out.returncode, out.stdout + out.stderr


@needs_cute
@pytest.mark.timeout(1300)  # 13 kernels: about 2 minutes on an idle 2-core machine
def test_cute_compiles_every_call_on_symmems_engine(tmp_path):
    bitcode = _device_bitcode(tmp_path)
    shipped = os.path.join(ROOT, "python", "symmem", "device", "device.bc")
    if bitcode != shipped:
        pytest.skip("the package has no device.bc (setup.py builds it where clang is)")
    rc, out = _run([os.path.join(HERE, "cute_compile.py"), "symmem"])
    assert rc == 0 and "compiled 13 kernels" in out, out[-3000:]


def _nvshmem_bitcode():
    path = os.environ.get("SYMMEM_TEST_NVSHMEM_BITCODE")
    if path:
        return path
    try:
        import symmem

        return symmem.find_device_bitcode_library()
    except Exception as error:  # noqa: BLE001
        pytest.skip(
            f"no NVSHMEM device bitcode ({error}); SYMMEM_TEST_NVSHMEM_BITCODE "
            "names one (libnvshmem_device_sm_90.bc of the nvidia-nvshmem wheel)"
        )


@needs_cute
@pytest.mark.timeout(1300)
def test_cute_calls_nvshmem_functions_its_bitcode_has():
    """Every call traced for every dtype on NVSHMEM's engine names a function
    libnvshmem_device.bc defines (traced only: linking that bitcode takes
    minutes a kernel; tests/gpu/cute_device.py links and runs it)."""
    pytest.importorskip("llvmlite")
    rc, out = _run(
        [os.path.join(HERE, "cute_compile.py"), "nvshmem", _nvshmem_bitcode(), "--names"]
    )
    assert rc == 0 and "traced 13 kernels" in out, out[-3000:]


@needs_mlir
@pytest.mark.timeout(1300)  # 8 kernels: a few minutes
def test_mlir_compiles_and_links_every_call():
    try:
        from cuda.core import Linker  # noqa: F401
        from symmem.device._ltoir import ltoir

        ltoir("sm_90")
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"NVRTC or cuda.core is not usable here: {error}")
    rc, out = _run([os.path.join(HERE, "mlir_compile.py")])
    assert rc == 0 and "compiled and linked" in out, out[-3000:]
