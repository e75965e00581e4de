"""What the gpu backend's tests share (test_gpu*.py, test_gpu_dsl.py): how
many GPUs there are, how a job of tests/gpu/ programs is started (symmem.run,
or the launcher SYMMEM_TEST_LAUNCHER names) and checked, and the lines each
example in examples/ must print."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GPU_DIR = ROOT / "tests" / "gpu"


def _gpu_count():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return 0


def _has_nvshmem():
    try:
        import nvidia.nvshmem  # noqa: F401

        return True
    except Exception:
        return False


GPUS = _gpu_count()
NVSHMEM = _has_nvshmem()
# The gpu backend's engine the jobs get (SYMMEM_GPU_ENGINE, which they
# inherit): the nvshmem engine takes a GPU a PE; the symmem engine, and
# auto where PEs outnumber GPUs or NVSHMEM is absent, let PEs share a GPU,
# so on one GPU every multi-PE job runs (docs/testing.md says how).
ENGINE = os.environ.get("SYMMEM_GPU_ENGINE", "auto")
SHARES_GPUS = ENGINE != "nvshmem"
needs_gpus = pytest.mark.skipif(
    GPUS < (1 if SHARES_GPUS else 2) or (not SHARES_GPUS and not NVSHMEM),
    reason="needs CuPy and a GPU (SYMMEM_GPU_ENGINE=nvshmem: 2 GPUs and nvidia-nvshmem)",
)
# What only NVSHMEM does (its start-up across hosts, its unique id's rendezvous,
# its device library, its heap's variables): the nvshmem engine, a GPU a PE.
needs_nvshmem = pytest.mark.skipif(
    GPUS < 2 or not NVSHMEM or ENGINE == "symmem",
    reason="NVSHMEM's own: the nvshmem engine, with 2 GPUs and nvidia-nvshmem",
)
# What only the symmem engine does.
needs_symmem_engine = pytest.mark.skipif(
    GPUS < 1 or ENGINE == "nvshmem", reason="the symmem engine's own: a GPU"
)


def run(args, env=None, timeout=240):
    full = dict(os.environ, **(env or {}))
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=full)


def run_python(code, env):
    return run([sys.executable, "-c", code], env=env, timeout=60)


def gpu_init_error(env, error="NvshmemError"):
    """The message of the error symmem.init(backend='gpu') raises in a fresh
    process with env; fails the test if it raises none."""
    result = run_python(
        "import symmem\ntry:\n    symmem.init(backend='gpu')\n"
        f"except symmem.{error} as e:\n    print('ERR', e)\n",
        env=env,
    )
    assert "ERR" in result.stdout, result.stdout + result.stderr
    return result.stdout


# SYMMEM_TEST_LAUNCHER=torchrun or mpirun starts the suite's jobs through
# that launcher instead of symmem.run, and uid as plain processes that meet
# by a unique id (tests/gpu/uid_launch.py), with every PE taken for one on a
# host of its own (SYMMEM_ONE_HOST_PER_PE=1): the several-hosts path on one
# machine (docs/multi-node.md). Skipped then: tests that need symmem.run
# itself (its exit reports; a launcher that ends the job when a PE dies
# would end the PE that should report it), or the call pages that check
# only same-host PEs, or start their jobs themselves, and the long Triton
# cross-check, which compares bytes whatever the launcher.
LAUNCHER = os.environ.get("SYMMEM_TEST_LAUNCHER", "symmem.run")
with_symmem_run_only = pytest.mark.skipif(
    LAUNCHER != "symmem.run",
    reason="runs under symmem.run only (see LAUNCHER); SYMMEM_TEST_LAUNCHER is " + LAUNCHER,
)
# A PE that leaves with os._exit (its wait still runs on the GPU) skips
# MPI_Finalize, and mpirun then ends the job as failed.
not_under_mpirun = pytest.mark.skipif(
    LAUNCHER == "mpirun", reason="a PE leaves with os._exit, which mpirun counts as a failure"
)


def _symmem_run(n, script, *args, env=None, timeout=200):
    return run(
        [
            sys.executable,
            "-m",
            "symmem.run",
            "-n",
            str(n),
            "--timeout",
            str(timeout),
            str(script),
            *args,
        ],
        env=env,
        timeout=timeout + 40,
    )


def _launch(n, script, *args, env=None, timeout=200):
    """script run as n PEs by LAUNCHER."""
    if LAUNCHER == "symmem.run":
        return _symmem_run(n, script, *args, env=env, timeout=timeout)
    env = {
        **(env or {}),
        "SYMMEM_ONE_HOST_PER_PE": "1",
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    }
    if LAUNCHER == "uid":
        return _uid_processes(n, script, args, env, timeout + 40)
    if LAUNCHER == "torchrun":
        start = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(n)]
    else:
        start = [
            shutil.which("mpirun") or "mpirun",
            "-np",
            str(n),
            "--oversubscribe",
            sys.executable,
        ]
    return run([*start, str(script), *args], env=env, timeout=timeout + 40)


def _processes(commands, env, timeout):
    """Runs the commands (one per PE) at once; each one's result, in order."""
    procs = [
        subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
        )
        for command in commands
    ]
    deadline = time.monotonic() + timeout
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=max(1, deadline - time.monotonic())))
    finally:
        for proc in procs:
            proc.kill()
    return [
        subprocess.CompletedProcess(p.args, p.returncode, out, err)
        for p, (out, err) in zip(procs, outputs)
    ]


def _uid_processes(n, script, args, env, timeout):
    """script as n plain processes that meet by a unique id (uid_launch.py);
    one result with all their output and the first failing return code."""
    with tempfile.TemporaryDirectory() as folder:
        results = _processes(
            [
                [
                    sys.executable,
                    str(GPU_DIR / "uid_launch.py"),
                    str(rank),
                    str(n),
                    os.path.join(folder, "uid"),
                    str(script),
                    *args,
                ]
                for rank in range(n)
            ],
            env,
            timeout,
        )
    code = next((r.returncode for r in results if r.returncode), 0)
    return subprocess.CompletedProcess(
        results[0].args,
        code,
        "".join(r.stdout for r in results),
        "".join(r.stderr for r in results),
    )


def _assert_all_ok(result, n, marker="OK"):
    assert result.returncode == 0, result.stdout + result.stderr
    for pe in range(n):
        assert f"PE {pe} " in result.stdout and marker in result.stdout, result.stdout


def _passes_on_2_gpus(script, marker, **env):
    """tests/gpu/<script> on the gpu backend, 2 PEs: each prints 'PE k OK (marker)'."""
    result = _launch(2, GPU_DIR / script, env={"SYMMEM_BACKEND": "gpu", **env})
    _assert_all_ok(result, 2, marker)


def _numba_cuda_problem():
    """Why Numba cannot compile a CUDA kernel here, or None if it can."""
    # symmem.device.numba first: it puts back np.row_stack for numba-cuda
    probe = (
        "import symmem.device.numba\nfrom numba import cuda\n@cuda.jit\ndef k(a):\n    a[0] = 1\n"
        "import numpy as np\na = cuda.to_device(np.zeros(1))\nk[1, 1](a)\n"
    )
    result = run_python(probe, env={})
    return None if result.returncode == 0 else result.stderr.strip().splitlines()[-1]


def _engine_for(n):
    """The engine a job of n PEs gets here (engine_choice.c's choice)."""
    if ENGINE == "auto":
        return "nvshmem" if NVSHMEM and GPUS >= n else "symmem"
    return ENGINE


def _nvshmem_engine_for(n, what):
    """Skips the calling test (what: NVSHMEM's own, in words) where a job of
    n PEs runs on the symmem engine."""
    if _engine_for(n) != "nvshmem":
        pytest.skip(f"{what} is NVSHMEM's: a job of {n} PEs here runs on the symmem engine")


def _gpus_for(n):
    if GPUS < n and not SHARES_GPUS:
        pytest.skip(f"needs {n} GPUs (SYMMEM_GPU_ENGINE=nvshmem), this host has {GPUS}")


def _uid_job(tmp_path, script, *args, env):
    """tests/gpu/<script> *args started as 2 plain processes that meet
    through a unique id handed over a file (uid_init.py); each one's result."""
    return _processes(
        [
            [
                sys.executable,
                str(GPU_DIR / script),
                *args,
                "uid",
                str(rank),
                "2",
                str(tmp_path / "uid.pickle"),
            ]
            for rank in range(2)
        ],
        {"SYMMEM_BACKEND": "gpu", **env},
        200,
    )


def _example_lines(example, pe, n, env):
    """The lines PE pe of n must print for examples/<example>."""
    prev, engine = (pe - 1) % n, env.get("SYMMEM_TRITON_ENGINE")
    return {
        "ring.py": [
            f"PE {pe} of {n} received from PE {prev}: "
            f"[{' '.join(f'{100.0 * prev + i:g}.' for i in range(10))}]"
        ],
        "put_signal.py": {
            0: ["PE 0 sent its block to PE 1 and set the signal"],
            1: ["PE 1 saw signal=1 and received:"],
        }.get(pe, []),
        "device_moe_dispatch.py": [
            f"PE {pe} OK: 1024 tokens x top-2 went to {2 * n} experts "
            f"on {n} PEs and came back right"
        ],
        "device_ring_allreduce.py": [
            f"PE {pe} OK: the device ring all-reduce of {n * 8192} floats over {n} PEs is right"
        ],
        "triton_allreduce.py": [
            f"PE {pe} OK: the Triton all-reduce of 10243 floats over {n} "
            f"PEs is right ({engine} engine)"
        ],
        "triton_put_signal.py": [
            f"PE {pe} OK: 8 rounds of 16 blocks put_signalled from PE "
            f"{prev} were consumed right ({engine} engine)"
        ],
        # the CuTe and numba-cuda-mlir ones: test_gpu_dsl.py runs them
        "cute_ring_put_signal.py": [
            f"PE {pe} OK: 8 rounds put_signalled from PE {prev} were "
            f"consumed right (cute, {env.get('SYMMEM_CUTE_ENGINE')} "
            "engine)"
        ],
        "cute_allreduce.py": [
            f"PE {pe} OK: the CuTe all-reduce of 10243 floats over {n} PEs "
            f"is right ({env.get('SYMMEM_CUTE_ENGINE')} engine)"
        ],
        "mlir_ring_put_signal.py": [
            f"PE {pe} OK: 8 rounds put_signalled from PE {prev} were "
            "consumed right (numba-cuda-mlir)"
        ],
        "mlir_allreduce.py": [
            f"PE {pe} OK: the numba-cuda-mlir all-reduce of 10243 floats over {n} PEs is right"
        ],
    }[example]


def _example_runs(example, n, env=None):
    """examples/<example> on n PEs of the gpu backend prints what each PE must."""
    _gpus_for(n)
    env = {"SYMMEM_BACKEND": "gpu", **(env or {})}
    result = _launch(n, ROOT / "examples" / example, env=env, timeout=400)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for pe in range(n):
        for line in _example_lines(example, pe, n, env):
            assert line in result.stdout, f"PE {pe}: {line!r} missing:\n{out}"
