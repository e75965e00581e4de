"""How a gpu backend job ends: a dead peer or Ctrl-C during a wait (also
across hosts, through the heartbeat), finalize while CUDA graphs of symmem
calls are alive, and a PE that finalizes while its peer still calls."""

import pytest

from gpu_jobs import (
    GPU_DIR,
    _assert_all_ok,
    _launch,
    _nvshmem_engine_for,
    _uid_job,
    needs_gpus,
    needs_nvshmem,
    not_under_mpirun,
    with_symmem_run_only,
)


def _caught(result):
    """PE 0's 'caught after S s: error' line, and S."""
    caught = [line for line in result.stdout.splitlines() if "PE 0 caught after" in line]
    assert len(caught) == 1, result.stdout + result.stderr
    return caught[0], float(caught[0].split("after ")[1].split(" s")[0])


@needs_gpus
@with_symmem_run_only
@pytest.mark.parametrize("wait", ["barrier_all", "signal_wait"])
def test_a_dead_peer_ends_a_wait_on_the_gpu(wait):
    result = _launch(2, GPU_DIR / "wait_ends.py", wait, "peer_dies", env={"SYMMEM_BACKEND": "gpu"})
    assert result.returncode == 137, result.stdout + result.stderr
    line, seconds = _caught(result)
    assert f"{wait}: PE 1 was killed by signal 9" in line and seconds < 10, line


@needs_gpus
@not_under_mpirun
@pytest.mark.parametrize("wait", ["barrier_all", "signal_wait"])
def test_ctrl_c_ends_a_wait_on_the_gpu(wait):
    result = _launch(2, GPU_DIR / "wait_ends.py", wait, "ctrl_c", env={"SYMMEM_BACKEND": "gpu"})
    _assert_all_ok(result, 1, "stayed away")
    line, seconds = _caught(result)
    assert "KeyboardInterrupt()" in line and seconds < 5, line


@needs_nvshmem
@with_symmem_run_only
@pytest.mark.parametrize("wait", ["barrier_all", "signal_wait"])
def test_a_dead_pe_on_another_host_ends_a_wait_through_the_heartbeat(wait, tmp_path):
    # SYMMEM_ONE_HOST_PER_PE=1: PE 1 counts as on another host, so no pid
    # check watches it; its heartbeat connection to PE 0 closing tells
    pe0, pe1 = _uid_job(
        tmp_path, "wait_ends.py", wait, "peer_dies", env={"SYMMEM_ONE_HOST_PER_PE": "1"}
    )
    assert pe1.returncode == -9, pe1.stdout + pe1.stderr
    line, seconds = _caught(pe0)
    assert (
        f"{wait}: PE 1 ended without finalize: its heartbeat connection to PE 0 closed" in line
        and seconds < 10
    ), line


@needs_gpus
@pytest.mark.parametrize(
    "mode,collectives", [("barrier", "symmem"), ("every", "symmem"), ("every", "nvshmem")]
)
def test_finalize_completes_while_graphs_of_symmem_calls_are_alive(mode, collectives):
    if collectives == "nvshmem":
        _nvshmem_engine_for(2, "SYMMEM_GPU_COLLECTIVES=nvshmem")
    # 'barrier' hung in NVSHMEM's closing barrier in one run of two or three
    # before finalize waited for the device (issue 17): three runs.
    for _ in range(3 if mode == "barrier" else 1):
        result = _launch(
            2,
            GPU_DIR / "finalize_live_graph.py",
            mode,
            env={
                "SYMMEM_BACKEND": "gpu",
                "SYMMEM_TIMEOUT": "60",
                "SYMMEM_GPU_COLLECTIVES": collectives,
            },
        )
        _assert_all_ok(result, 2, f"finalize with live graphs: {mode}")


@needs_gpus
@not_under_mpirun
def test_finalize_raises_naming_a_replayed_wait_that_never_ends():
    result = _launch(
        2,
        GPU_DIR / "finalize_live_graph.py",
        "stuck",
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TIMEOUT": "5"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "OK (finalize raised" in line]
    assert len(lines) == 2, result.stdout + result.stderr
    stuck = [line for line in lines if "PE 0 OK" in line][0]
    # PE 0 names the replay still running and the graph; it may also learn
    # first that PE 1 gave up (timed out) and left (from symmem.run's exit
    # report, or across hosts from the heartbeat).
    assert "the work this PE launched on cuda:0 to finish" in stuck, stuck
    assert "1 CUDA graph that captured symmem calls (signal_wait) is still alive" in stuck, stuck
    assert any(
        words in stuck
        for words in (
            "timed out after",
            "PE 1 exited",
            "PE 1 ended without finalize",
            "PE 1 is gone",
        )
    ), stuck
    waiting = [line for line in lines if "PE 1 OK" in line][0]
    assert "timed out after" in waiting or "PE 0 exited" in waiting, waiting


@needs_gpus
@with_symmem_run_only
def test_a_finalized_gpu_pe_makes_a_peer_s_barrier_all_raise_at_once():
    result = _launch(
        2,
        GPU_DIR / "finalized_peer.py",
        "barrier_all",
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TIMEOUT": "60"},
    )
    _assert_all_ok(result, 2, "finalized peer: barrier_all")
    assert "PE 0 OK (finalized peer: barrier_all, after" in result.stdout, result.stdout
    assert "PE 1 OK (finalized peer: barrier_all, finalize took" in result.stdout, result.stdout


@needs_gpus
@with_symmem_run_only
def test_a_gpu_pe_finalizing_while_its_peer_calls_reduce():
    result = _launch(
        2,
        GPU_DIR / "finalized_peer.py",
        "reduce_soon",
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_TIMEOUT": "60"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PE 0 OK (finalized peer: reduce_soon" in result.stdout, result.stdout
    assert "PE 1 OK (finalized peer: reduce_soon, finalize raised" in result.stdout, (
        result.stdout + result.stderr
    )
