"""The CuTe DSL and numba-cuda-mlir device APIs on GPUs (docs/testing.md,
"CuTe and numba-cuda-mlir"): tests/gpu/cute_device.py on both engines and
tests/gpu/mlir_device.py at 2 and 4 PEs, checking on every PE what it
received for every call, dtype and scope; a dead peer during a CuTe wait;
the four examples. Skipped without a GPU (NVSHMEM's bitcode engine: the
gpu backend's nvshmem engine, 2 GPUs) or without the DSL (the CPU checks
are test_cute_mlir.py). The helpers are test_gpu.py's."""

import importlib.util

import pytest

from gpu_jobs import _nvshmem_engine_for
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
