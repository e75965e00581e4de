"""Triton kernels (symmem.device.triton) on the gpu backend, on both Triton
engines (NVSHMEM's bitcode engine needs the gpu backend's nvshmem engine: 2
GPUs): every function's bytes compared between them, the Triton examples,
and a dead peer during a Triton wait. The checks that need no GPU are
test_triton.py."""

import pytest

from gpu_jobs import (
    GPU_DIR,
    GPUS,
    SHARES_GPUS,
    _assert_all_ok,
    _example_runs,
    _launch,
    _nvshmem_engine_for,
    with_symmem_run_only,
)


def _has_triton():
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401

        return True
    except ImportError:
        return False


needs_triton = pytest.mark.skipif(
    GPUS < (1 if SHARES_GPUS else 2) or not _has_triton(),
    reason="needs a GPU (SYMMEM_GPU_ENGINE=nvshmem: 2), torch and triton",
)


@needs_triton
@with_symmem_run_only
@pytest.mark.timeout(1060)  # two launches of up to 500 s: a cold Triton cache compiles every kernel
def test_triton_kernels_deliver_the_same_bytes_on_both_engines(tmp_path):
    # tests/gpu/triton_device.py: every function, every element type, odd
    # sizes, checked on every PE; then the two engines' bytes compared
    import numpy as np

    _nvshmem_engine_for(2, "SYMMEM_TRITON_ENGINE=nvshmem (its bitcode)")
    for engine in ("symmem", "nvshmem"):
        # compiling every kernel against NVSHMEM's bitcode takes minutes
        result = _launch(
            2,
            GPU_DIR / "triton_device.py",
            timeout=500,
            env={
                "SYMMEM_BACKEND": "gpu",
                "SYMMEM_TRITON_ENGINE": engine,
                "TRITON_RESULTS": str(tmp_path),
            },
        )
        _assert_all_ok(result, 2, f"triton {engine}")
    for pe in range(2):
        own = np.load(tmp_path / f"symmem-pe{pe}.npz")
        nvshmem = np.load(tmp_path / f"nvshmem-pe{pe}.npz")
        assert sorted(own.files) == sorted(nvshmem.files)
        for name in own.files:
            assert np.array_equal(own[name], nvshmem[name]), (pe, name)


@needs_triton
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("engine", ["symmem", "nvshmem"])
@pytest.mark.parametrize("example", ["triton_allreduce.py", "triton_put_signal.py"])
def test_the_triton_examples_run_on_both_engines(example, engine, n):
    if engine == "nvshmem":
        _nvshmem_engine_for(n, "SYMMEM_TRITON_ENGINE=nvshmem (its bitcode)")
    _example_runs(example, n, {"SYMMEM_TRITON_ENGINE": engine})


@needs_triton
@with_symmem_run_only
def test_a_dead_peer_ends_a_waiting_triton_kernel():
    result = _launch(
        2,
        GPU_DIR / "triton_device.py",
        "dead_peer",
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TRITON_ENGINE": "symmem", "SYMMEM_TIMEOUT": "60"},
    )
    out = result.stdout + result.stderr
    assert "PE 0 OK (triton dead peer" in out, out
    assert "a kernel stopped in the device call signal_wait_until: PE 1 died" in out, out
