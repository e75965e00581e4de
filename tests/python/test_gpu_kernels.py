"""Kernels on the gpu backend: kernels that store into peer views, the
Numba device API (tests/gpu/device_numba.py, device_collectives.py) at 2
and 4 PEs, kernels that end saying why, and the host helpers for device
code with real CUDA modules."""

import pytest

from gpu_jobs import (
    GPU_DIR,
    _assert_all_ok,
    _gpus_for,
    _launch,
    _numba_cuda_problem,
    _passes_on_2_gpus,
    needs_gpus,
    needs_nvshmem,
    with_symmem_run_only,
)


@needs_gpus
@pytest.mark.parametrize("library", ["cupy", "numba"])
def test_kernels_store_into_peer_views(library):
    if library == "numba" and (problem := _numba_cuda_problem()):
        pytest.skip(f"Numba cannot compile CUDA kernels in this Python: {problem}")
    _assert_all_ok(
        _launch(2, GPU_DIR / "kernel_stores.py", library, env={"SYMMEM_BACKEND": "gpu"}),
        2,
        f"{library} kernel stores",
    )


@needs_gpus
@pytest.mark.parametrize("n", [2, 4])
def test_numba_kernels_put_get_signal_wait_atomics_and_barriers_on_the_device(n):
    _gpus_for(n)
    _assert_all_ok(
        _launch(n, GPU_DIR / "device_numba.py", "all", env={"SYMMEM_BACKEND": "gpu"}),
        n,
        "device numba",
    )


@needs_gpus
@pytest.mark.parametrize("n", [2, 4])
def test_numba_kernels_team_syncs_collectives_peer_arrays_and_float_atomics(n):
    _gpus_for(n)
    _assert_all_ok(
        _launch(n, GPU_DIR / "device_collectives.py", "all", env={"SYMMEM_BACKEND": "gpu"}),
        n,
        "device collectives",
    )


def _kernel_ends_saying(mode, *words):
    """tests/gpu/device_collectives.py <mode>: PE 0's kernel traps, and PE 0
    prints why (every one of words)."""
    env = {"SYMMEM_BACKEND": "gpu"}
    if mode.startswith("unreachable"):
        env["SYMMEM_GPU_UNMAPPED_PE"] = "1"
    result = _launch(2, GPU_DIR / "device_collectives.py", mode, env=env)
    out = result.stdout + result.stderr
    for expected in ("PE 0 kernel ended", *words):
        assert expected in out, out


@needs_gpus
def test_a_device_collective_on_a_team_that_is_not_one_ends_the_kernel_naming_it():
    _kernel_ends_saying(
        "bad_team", "a kernel stopped in the device call sync: team 37 is not a team PE 0 is in"
    )


@needs_gpus
def test_a_device_reduce_whose_dst_overlaps_src_elsewhere_ends_the_kernel_saying_so():
    _kernel_ends_saying(
        "overlap",
        "a kernel stopped in the device call reduce_block: dst (0x",
        "overlaps src without being it",
    )


@needs_gpus
@pytest.mark.parametrize("mode", ["empty_p", "empty_atomic"])
def test_p_or_an_atomic_on_an_empty_array_ends_the_kernel_saying_so(mode):
    # the first element of an empty view is not its own (here: past its end)
    _kernel_ends_saying(
        mode,
        "a kernel stopped in the device call p, g, a signal or an "
        "atomic: argument 0 is too small: the call needs 8 bytes there",
    )


@needs_nvshmem
@pytest.mark.parametrize(
    "mode,call", [("unreachable_put", "put"), ("unreachable_barrier", "barrier_all")]
)
def test_a_device_call_to_a_pe_with_no_peer_mapping_ends_the_kernel_saying_why(mode, call):
    # SYMMEM_GPU_UNMAPPED_PE=1: PE 0's kernels see PE 1 as a PE on another node
    _kernel_ends_saying(
        mode,
        f"a kernel stopped in the device call {call}: PE 1 has no peer "
        "mapping on this GPU (another node)",
        "use the host calls for it",
    )


@needs_gpus
@with_symmem_run_only
def test_a_dead_peer_ends_a_waiting_kernel_and_the_gpu_stays_usable():
    result = _launch(
        2,
        GPU_DIR / "device_numba.py",
        "dead_peer",
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TIMEOUT": "60"},
    )
    out = result.stdout + result.stderr
    assert "PE 0 kernel ended after" in out, out
    assert "a kernel stopped in the device call signal_wait: PE 1 died" in out, out
    _assert_all_ok(
        _launch(2, GPU_DIR / "kernel_stores.py", "numba", env={"SYMMEM_BACKEND": "gpu"}),
        2,
        "numba kernel stores",
    )


@needs_gpus
def test_module_init_and_library_init_with_real_cuda_core_modules():
    # tests/gpu/host_helpers.py: symmem's device library through library_init and
    # module_init, NVSHMEM's device state copied into a module that links it
    _passes_on_2_gpus("host_helpers.py", "OK (host helpers)")


@needs_gpus
def test_modules_linking_the_device_library_hold_the_current_constant_device_state():
    # tests/gpu/device_consts.py: written at load, at each malloc, zeroed at finalize,
    # written again at the next init; a user's cubin through library_init
    _passes_on_2_gpus("device_consts.py", "OK (device consts)")
