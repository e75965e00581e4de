"""The CuTe DSL and numba-cuda-mlir device APIs on GPUs (docs/testing.md,
"CuTe and numba-cuda-mlir"): tests/gpu/cute_device.py on both engines and
tests/gpu/mlir_device.py at 2 and 4 PEs, checking on every PE what it
received for every call, dtype and scope; a dead peer during a CuTe wait;
the four examples; and the raw bindings (symmem.bindings.device):
tests/gpu/bindings_numba.py (numba and numba-cuda-mlir), bindings_cute.py
(both engines), bindings_ring_reduce.py, and NVSHMEM4Py's CuTe binding test
where a checkout of it is named. Skipped without a GPU (NVSHMEM's bitcode
engine: the gpu backend's nvshmem engine, 2 GPUs) or without the DSL (the
CPU checks are test_cute_mlir.py and test_bindings_device.py). The helpers
are test_gpu.py's and gpu_jobs.py's."""

import importlib.util
import os
from pathlib import Path

import pytest

from gpu_jobs import _numba_cuda_problem, _nvshmem_engine_for, needs_nvshmem, run, run_python
from test_gpu import GPU_DIR, _assert_all_ok, _example_runs, _gpus_for, _launch, needs_gpus

needs_cute = pytest.mark.skipif(
    importlib.util.find_spec("cutlass") is None,
    reason="nvidia-cutlass-dsl is not installed (docs/testing.md: CuTe and numba-cuda-mlir)",
)
needs_mlir = pytest.mark.skipif(
    importlib.util.find_spec("numba_cuda_mlir") is None, reason="numba-cuda-mlir is not installed"
)


@needs_gpus
@needs_cute
@pytest.mark.timeout(1300)  # 12 kernels (one a dtype) to compile, against NVSHMEM's bitcode too
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("engine", ["symmem", "nvshmem"])
def test_cute_kernels_deliver_every_call_dtype_and_scope(engine, n):
    _gpus_for(n)
    if engine == "nvshmem":
        _nvshmem_engine_for(n, "SYMMEM_CUTE_ENGINE=nvshmem (its bitcode)")
    result = _launch(
        n,
        GPU_DIR / "cute_device.py",
        "all",
        timeout=1200,
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_CUTE_ENGINE": engine},
    )
    _assert_all_ok(result, n, f"OK (cute {engine}:")


@needs_gpus
@needs_cute
def test_a_dead_peer_ends_a_waiting_cute_kernel():
    result = _launch(
        2,
        GPU_DIR / "cute_device.py",
        "dead_peer",
        timeout=300,
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_CUTE_ENGINE": "symmem", "SYMMEM_TIMEOUT": "60"},
    )
    out = result.stdout + result.stderr
    assert "PE 0 OK (cute dead peer" in out, out
    assert "a kernel stopped in the device call signal_wait: PE 1 died" in out, out


@needs_gpus
@needs_mlir
@pytest.mark.timeout(1300)
@pytest.mark.parametrize("n", [2, 4])
def test_mlir_kernels_deliver_every_call_dtype_and_scope(n):
    _gpus_for(n)
    result = _launch(n, GPU_DIR / "mlir_device.py", timeout=1200, env={"SYMMEM_BACKEND": "gpu"})
    _assert_all_ok(result, n, "OK (mlir:")


@needs_gpus
@needs_cute
@pytest.mark.timeout(900)
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("engine", ["symmem", "nvshmem"])
@pytest.mark.parametrize("example", ["cute_ring_put_signal.py", "cute_allreduce.py"])
def test_the_cute_examples_run_on_both_engines(example, engine, n):
    if engine == "nvshmem":
        _nvshmem_engine_for(n, "SYMMEM_CUTE_ENGINE=nvshmem (its bitcode)")
    _example_runs(example, n, {"SYMMEM_CUTE_ENGINE": engine})


@needs_gpus
@needs_mlir
@pytest.mark.timeout(900)
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("example", ["mlir_ring_put_signal.py", "mlir_allreduce.py"])
def test_the_mlir_examples_run(example, n):
    _example_runs(example, n)


# ---- symmem.bindings.device: NVSHMEM4Py's raw device bindings (issue 51) ----


@needs_gpus
@pytest.mark.timeout(1300)
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("dsl", ["numba", "mlir"])
def test_raw_bindings_deliver_a_sample_of_every_family(dsl, n):
    if dsl == "numba" and (problem := _numba_cuda_problem()):
        pytest.skip(f"Numba cannot compile CUDA kernels in this Python: {problem}")
    if dsl == "mlir" and importlib.util.find_spec("numba_cuda_mlir") is None:
        pytest.skip("numba-cuda-mlir is not installed")
    _gpus_for(n)
    env = {"SYMMEM_BACKEND": "gpu"}
    result = _launch(n, GPU_DIR / "bindings_numba.py", dsl, timeout=1200, env=env)
    _assert_all_ok(result, n, f"OK (bindings {dsl}:")


@needs_gpus
@needs_cute
@pytest.mark.timeout(1300)
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("engine", ["symmem", "nvshmem"])
def test_raw_cute_bindings_deliver_a_sample_of_every_family(engine, n):
    _gpus_for(n)
    if engine == "nvshmem":
        _nvshmem_engine_for(n, "SYMMEM_CUTE_ENGINE=nvshmem (its bitcode)")
    env = {"SYMMEM_BACKEND": "gpu", "SYMMEM_CUTE_ENGINE": engine}
    result = _launch(n, GPU_DIR / "bindings_cute.py", timeout=1200, env=env)
    _assert_all_ok(result, n, f"OK (bindings cute {engine}:")


@needs_gpus
@pytest.mark.parametrize("n", [2, 4])
def test_a_ring_reduce_written_against_the_raw_numba_bindings(n):
    if problem := _numba_cuda_problem():
        pytest.skip(f"Numba cannot compile CUDA kernels in this Python: {problem}")
    _gpus_for(n)
    result = _launch(n, GPU_DIR / "bindings_ring_reduce.py", env={"SYMMEM_BACKEND": "gpu"})
    _assert_all_ok(result, n, "OK (bindings ring reduce")


# NVSHMEM4Py's own programs, from a checkout of NVIDIA/nvshmem (its nvshmem4py
# folder) that SYMMEM_NVSHMEM4PY_SOURCE names, with `nvshmem` spelled `symmem`
# and nothing else changed, under mpirun (they init over MPI). Its CuTe
# binding test links NVSHMEM_HOME/src/lib/libnvshmem_device.bc: here the copy
# libNVVM takes (symmem.interop.cute.find_cute_bitcode_library()).
NVSHMEM4PY_SOURCE = os.environ.get("SYMMEM_NVSHMEM4PY_SOURCE")


@needs_nvshmem  # it links NVSHMEM's bitcode and calls library_init: the nvshmem engine
@needs_cute
@pytest.mark.skipif(not NVSHMEM4PY_SOURCE, reason="SYMMEM_NVSHMEM4PY_SOURCE names no checkout")
@pytest.mark.timeout(900)
def test_nvshmem4pys_cute_binding_test_runs_with_symmem_imports(tmp_path):
    import re
    import shutil
    import sys

    source = Path(NVSHMEM4PY_SOURCE) / "test" / "device" / "cute" / "test_cute_bindings.py"
    program = tmp_path / source.name
    program.write_text(re.sub(r"\bnvshmem\b", "symmem", source.read_text()))
    bitcode = run_python(
        "import symmem.interop.cute as s; print(s.find_cute_bitcode_library())", {}
    ).stdout.strip()
    home = tmp_path / "nvshmem_home"
    (home / "src" / "lib").mkdir(parents=True)
    (home / "src" / "lib" / "libnvshmem_device.bc").symlink_to(bitcode)
    mpirun = shutil.which("mpirun") or "mpirun"
    env = {"SYMMEM_BACKEND": "gpu", "NVSHMEM_HOME": str(home), "OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}  # fmt: skip
    result = run([mpirun, "-np", "2", "--oversubscribe", sys.executable, str(program)], env, 800)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    # each PE's tensor starts with the previous PE's number + 1 (int_p of my_pe() + 1)
    firsts = sorted(int(m) for m in re.findall(r"tensor\(\[\s*(\d+)", result.stdout))
    assert firsts == [1, 2], out
