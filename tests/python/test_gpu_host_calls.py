"""The gpu backend's host calls (on 2+ GPUs, or PEs sharing one on the
symmem engine), through tests/gpu/ programs checked on every PE: the
end-to-end checks, external memory, put_signal at every size, barriers, an
atomic beyond the NVLink domain (the nvshmem engine's), and every stream
call replayed from a CUDA graph."""

import pytest

from gpu_jobs import (
    GPU_DIR,
    GPUS,
    SHARES_GPUS,
    _assert_all_ok,
    _launch,
    _nvshmem_engine_for,
    _passes_on_2_gpus,
    needs_gpus,
    needs_nvshmem,
)


@needs_gpus
@pytest.mark.parametrize("lib", ["torch", "cupy", "cuda.core"])
def test_every_stream_call_replays_from_a_cuda_graph_captured_by(lib):
    result = _launch(2, GPU_DIR / "graph_capture.py", lib, env={"SYMMEM_BACKEND": "gpu"})
    _assert_all_ok(result, 2, f"graph capture: {lib}, 1000 replays")


@needs_gpus
@pytest.mark.parametrize("most", [4, 8])
def test_end_to_end_checks_on_every_gpu(most):
    n = most if SHARES_GPUS else min(GPUS, most)
    if not SHARES_GPUS and most == 8 and GPUS < 8:
        pytest.skip(f"8 PEs need 8 GPUs on the nvshmem engine; this host has {GPUS}")
    _assert_all_ok(_launch(n, GPU_DIR / "smoke.py", env={"SYMMEM_BACKEND": "gpu"}), n)


@needs_gpus
def test_registered_external_vmm_memory_is_symmetric():
    _passes_on_2_gpus(
        "register_external.py", "register_external", NVSHMEM_CUMEM_GRANULARITY=str(2 << 20)
    )


@needs_gpus
@pytest.mark.parametrize("kernels", ["symmem", "nvshmem"])
def test_put_signal_delivers_every_size_and_alignment(kernels):
    if kernels == "nvshmem":
        _nvshmem_engine_for(2, "SYMMEM_GPU_KERNELS=nvshmem")
    _passes_on_2_gpus("put_signal.py", "put_signal, 156 cases", SYMMEM_GPU_KERNELS=kernels)


@needs_gpus
def test_barriers_order_every_kind_of_write():
    _passes_on_2_gpus("barrier.py", "barrier, 300 rounds")


@needs_nvshmem
def test_an_atomic_beyond_the_nvlink_domain_that_cannot_compile_says_what_is_missing(tmp_path):
    """PE 1 taken for a PE on another node, and no CUDA headers: PE 0's
    atomic on it raises naming NVRTC and SYMMEM_CUDA_INCLUDE; the job goes on."""
    script = tmp_path / "atomic_without_headers.py"
    script.write_text(
        "import symmem as nvshmem\n"
        "nvshmem.init()\n"
        "me = nvshmem.my_pe()\n"
        "x = nvshmem.array((1,), dtype='int64')\n"
        "x[:] = 0\n"
        "nvshmem.barrier_all()\n"
        "if me == 0:\n"
        "    try:\n"
        "        nvshmem.atomic_fetch_add(x, 1, 1)\n"
        "        print('PE 0 no error')\n"
        "    except NotImplementedError as error:\n"
        "        print('PE 0 raised', type(error).__name__, error)\n"
        "    nvshmem.atomic_fetch_add(x, 5, 0)  # its own PE: PTX, unaffected\n"
        "nvshmem.barrier_all()\n"
        "print(f'PE {me} holds {int(x[0])}')\n"
        "nvshmem.finalize()\n"
    )
    result = _launch(
        2,
        script,
        env={
            "SYMMEM_BACKEND": "gpu",
            "SYMMEM_GPU_UNMAPPED_PE": "1",
            "SYMMEM_CUDA_INCLUDE": str(tmp_path / "no-headers"),
        },
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "PE 0 raised NotImplementedError [pe 0] atomic: an atomic on a PE outside" in out, out
    assert "NVRTC" in out and "SYMMEM_CUDA_INCLUDE" in out and "cuda_runtime.h" in out, out
    assert "PE 0 holds 5" in out and "PE 1 holds 0" in out, out


@needs_gpus
def test_gpu_arrays_of_other_orders_and_views_of_freed_ones_are_refused():
    _passes_on_2_gpus("orders_and_views.py", "orders and views")
