"""The gpu backend: without a GPU only its host-side logic runs (library
discovery and error paths; test_gpu_engine_choice.py has the engines'
choice); with a GPU (one is enough on the symmem engine; NVSHMEM's own parts
need the nvshmem engine: 2 GPUs and the nvidia-nvshmem wheel), how it
starts: every start-up path (symmem.run, mpirun, torchrun, a unique id, as
on several hosts), what init refuses, and what it reports
(docs/testing.md). The other gpu backend tests are test_gpu_*.py, with the
helpers they share in gpu_jobs.py."""

import os
import shutil
import sys
from pathlib import Path

import pytest

# test_gpu_dsl.py imports GPU_DIR, _example_runs and the other helpers from here
from gpu_jobs import (  # noqa: F401
    GPU_DIR,
    GPUS,
    NVSHMEM,
    _assert_all_ok,
    _example_runs,
    _gpus_for,
    _engine_for,
    _launch,
    _nvshmem_engine_for,
    _passes_on_2_gpus,
    _symmem_run,
    _uid_job,
    gpu_init_error,
    needs_gpus,
    needs_nvshmem,
    needs_symmem_engine,
    run,
    run_python,
    with_symmem_run_only,
)

# ---- host-side logic: runs everywhere ----


def test_the_package_points_the_core_at_its_gpu_backend_library():
    import symmem  # noqa: F401  (importing the package publishes the path)

    path = os.environ.get("SYMMEM_GPU_BACKEND_LIB")
    assert path and Path(path).exists() and "_gpu_backend" in path


@pytest.mark.skipif(GPUS > 0, reason="checks the error on a machine without a GPU")
def test_backend_gpu_without_a_gpu_raises_naming_what_is_missing():
    error = gpu_init_error({})
    assert "backend='gpu' cannot run here" in error
    assert "libcuda.so.1" in error or "libnvshmem_host.so.3" in error


def test_a_missing_backend_library_is_reported_by_path():
    error = gpu_init_error({"SYMMEM_GPU_BACKEND_LIB": "/nonexistent/libsymmem_gpu.so"})
    assert "cannot load the gpu backend /nonexistent/libsymmem_gpu.so" in error


@pytest.mark.skipif(GPUS > 0, reason="auto picks the gpu where there is one")
def test_auto_falls_back_to_the_cpu_engine():
    result = run_python(
        "import symmem\nsymmem.init()\nprint(symmem.get_version().backend)\n",
        env={"SYMMEM_BACKEND": "auto"},
    )
    assert result.stdout.strip() == "cpu", result.stderr


@needs_gpus
def test_team_init_from_a_unique_id():
    _passes_on_2_gpus("team_init.py", "team_init")


@needs_gpus
def test_a_failed_start_up_gives_back_what_it_took():
    _passes_on_2_gpus("startup_failures.py", "startup failures, 9 steps")


@needs_symmem_engine
def test_the_symmem_engine_s_heap_grows_to_its_limit_and_its_version_says_so():
    _passes_on_2_gpus(
        "heap_growth.py", "heap growth", SYMMEM_GPU_ENGINE="symmem", SYMMEM_SYMMETRIC_SIZE="3G"
    )


@needs_gpus
def test_a_bad_kernels_choice_is_refused_at_init():
    error = gpu_init_error({"SYMMEM_GPU_KERNELS": "fast"}, "NvshmemInvalid")
    assert "SYMMEM_GPU_KERNELS='fast' is not one of 'symmem', 'nvshmem'" in error


@needs_gpus
@pytest.mark.parametrize("engine", ["symmem", "nvshmem"])
def test_symmem_debug_says_where_init_s_time_went(engine):
    if engine == "nvshmem" and not NVSHMEM:
        pytest.skip("the nvshmem engine needs the nvidia-nvshmem wheel")
    result = run_python(
        "import symmem\nsymmem.init(backend='gpu')\nsymmem.finalize()\nprint('DONE')\n",
        env={"SYMMEM_DEBUG": "1", "SYMMEM_GPU_ENGINE": engine},
    )
    assert "DONE" in result.stdout, result.stdout + result.stderr
    line = next(
        (x for x in result.stderr.splitlines() if "init: the" in x and "steps took" in x), ""
    )
    assert line.startswith(f"symmem: [pe 0] init: the {engine} engine's steps took context "), (
        result.stderr
    )
    steps = ["context", "engine", "stream", "scratch", "agree_buffers", "watch_peers"]
    steps += ["heartbeat", "teams", "call_pages"]
    took = dict(part.rsplit(" ", 2)[:2] for part in line.split("took ", 1)[1].split(", "))
    assert list(took) == steps and all(float(ms) >= 0 for ms in took.values()), line


@needs_nvshmem
def test_a_bad_unmapped_pe_test_hook_is_refused_at_init():
    error = gpu_init_error({"SYMMEM_GPU_UNMAPPED_PE": "one"}, "NvshmemInvalid")
    assert "SYMMEM_GPU_UNMAPPED_PE='one' is not a PE number (0 to 0)" in error


@needs_nvshmem
def test_symmem_symmetric_size_sizes_nvshmem_and_the_version_is_nvshmem_s():
    env = {"SYMMEM_SYMMETRIC_SIZE": "256M", "NVSHMEM_SYMMETRIC_SIZE": ""}
    _passes_on_2_gpus("heap_and_version.py", "heap and version", **env)


# What the gpu backend can do (include/symmem/vocabulary.h's capabilities):
# the package asks these, never the backend's name.
GPU_CAPABILITIES = [
    "device_calls",
    "device_memory",
    "peer_load_store",
    "spans_hosts",
    "stream_ordered",
]


@needs_gpus
def test_the_gpu_backend_s_capabilities(tmp_path):
    from symmem import _symmem

    assert sorted(_symmem.launcher(backend="gpu")["capabilities"]) == GPU_CAPABILITIES
    script = tmp_path / "capabilities.py"
    script.write_text(
        "import symmem\nfrom symmem import _symmem\nsymmem.init()\n"
        "print('CAPABILITIES', _symmem.backend_name(), "
        "sorted(_symmem.capabilities()), flush=True)\nsymmem.finalize()\n"
    )
    result = _launch(2, script, env={"SYMMEM_BACKEND": "gpu"})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "CAPABILITIES" in line]
    assert len(lines) == 2, result.stdout
    assert all(line.endswith(f"CAPABILITIES gpu {GPU_CAPABILITIES}") for line in lines), lines


@needs_gpus
def test_launcher_start_picks_the_gpu_by_itself():
    result = _launch(2, GPU_DIR / "startup.py", "launcher", env={"SYMMEM_BACKEND": "auto"})
    _assert_all_ok(result, 2, "via launcher")
    for pe in range(2):  # LOCAL_RANK % the GPUs
        assert f"PE {pe} of 2 OK via launcher on cuda:{pe % GPUS}" in result.stdout, result.stdout


@needs_gpus
@with_symmem_run_only
@pytest.mark.parametrize("method", ["mpi", "emulated_mpi"])
def test_mpi_start(method):
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        pytest.skip("no mpirun")
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    result = run(
        [
            mpirun,
            "-np",
            "2",
            "--oversubscribe",
            sys.executable,
            "-m",
            "mpi4py",  # a rank that raises aborts the job (not a wait in MPI_Finalize)
            str(GPU_DIR / "startup.py"),
            method,
        ],
        env=env,
    )
    _assert_all_ok(result, 2, f"via {method}")


@needs_gpus
@with_symmem_run_only
def test_torchrun_start():
    result = run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            str(GPU_DIR / "startup.py"),
            "torchrun",
        ]
    )
    _assert_all_ok(result, 2, "via torchrun")


def _uid_start_passes(tmp_path, env):
    """tests/gpu/startup.py through a unique id: each PE must print its OK line."""
    for rank, result in enumerate(_uid_job(tmp_path, "startup.py", env=env)):
        assert result.returncode == 0 and f"PE {rank} of 2 OK via uid" in result.stdout, (
            result.stdout + result.stderr
        )


@needs_gpus
@with_symmem_run_only
def test_uid_start(tmp_path):
    _uid_start_passes(tmp_path, {})


@needs_nvshmem
@with_symmem_run_only
@pytest.mark.parametrize("how", ["torchrun", "mpirun", "uid"])
def test_the_gpu_backend_starts_as_on_several_hosts(how, tmp_path):
    # SYMMEM_ONE_HOST_PER_PE=1: symmem's own logic takes each PE for one on a
    # host of its own, so init hands NVSHMEM's id over the launcher's
    # rendezvous (torchrun's TCPStore, MPI) or the program's (uid), never
    # over /dev/shm, which the gpu backend then refuses
    env = {
        "SYMMEM_BACKEND": "gpu",
        "SYMMEM_ONE_HOST_PER_PE": "1",
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    }
    script = str(GPU_DIR / "startup.py")
    if how == "uid":
        _uid_start_passes(tmp_path, env)
        return
    if how == "torchrun":
        args = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", script, how]
    else:
        mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
        if mpirun is None:
            pytest.skip("no mpirun")
        args = [mpirun, "-np", "2", "--oversubscribe", sys.executable, script, how]
    result = run(args, env=env)
    for pe in range(2):
        assert (
            f"PE {pe} of 2 OK via {how} on cuda:{pe} (hosts: SYMMEM_ONE_HOST_PER_PE=1)"
            in result.stdout
        ), result.stdout + result.stderr
        assert f"PE {pe} started again via {how}" in result.stdout, result.stdout


@needs_nvshmem
@with_symmem_run_only
def test_symmem_run_says_it_starts_pes_on_one_host_only():
    result = _symmem_run(
        2,
        GPU_DIR / "startup.py",
        "launcher",
        timeout=60,
        env={"SYMMEM_BACKEND": "gpu", "SYMMEM_ONE_HOST_PER_PE": "1"},
    )
    assert result.returncode != 0, result.stdout + result.stderr
    assert (
        "this job's PEs span hosts (SYMMEM_ONE_HOST_PER_PE=1), and symmem hands NVSHMEM's "
        "unique id across hosts over torchrun's store or MPI"
    ) in result.stderr, result.stdout + result.stderr


@pytest.mark.skipif(GPUS < 2, reason="needs 2 GPUs: a stream of the other one")
@needs_gpus
def test_a_stream_of_another_gpu_is_refused_and_init_says_which_device_it_made_current():
    result = _launch(2, GPU_DIR / "devices.py", env={"SYMMEM_BACKEND": "gpu"})
    _assert_all_ok(result, 2, "foreign-stream calls refused")
    for pe in range(2):
        assert (
            f"[pe {pe}] init: this thread had cuda:{(pe + 1) % 2} current, but this PE's "
            f"symmetric heap is on cuda:{pe}"
        ) in result.stderr, result.stderr
