"""Helpers for the symmem test suite.

Multi-PE tests write a program to tmp_path and start it through the launcher
(`python -m symmem.run -n N --timeout T prog.py`). Every program gets PRELUDE
prepended: the imports, the list of dtypes, and small helpers, so that each
PE can assert on what it received and finish with `ok()` (prints "PE k OK").
The test then checks rc == 0 and that every PE printed its OK line.

The PEs run on the backend SYMMEM_BACKEND names (it passes to them): the cpu
engine here and in CI, where symmetric arrays are NumPy arrays; with
SYMMEM_BACKEND=gpu, where they are CuPy arrays (one PE a GPU on the
nvshmem engine; PEs share GPUs on the symmem engine). PRELUDE's
xp() and host() let one program serve both: fill a symmetric array with
`a[:] = xp().asarray(numpy_values)` and compare `host(a)` (check_equal does).
Tests of what only the cpu engine does carry @cpu_only(reason); a test that
starts more PEs than there are GPUs is skipped on the gpu backend's nvshmem
engine.
"""

import functools
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

# One BLAS thread a process: NumPy's OpenBLAS starts a thread per core at
# import, a third of the CPU time of importing NumPy, in each of the suite's
# thousands of processes (launchers, PEs); no test multiplies matrices.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Variables through which a launcher tells init() who is who. Tests that start
# processes themselves remove them so the parent's environment cannot leak in.
LAUNCHER_VARS = re.compile(
    r"^(SYMMEM_(JOB|RANK|NRANKS|LOCAL_RANK|STATUS_DIR|TIMEOUT)|RANK|WORLD_SIZE|"
    r"LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|TORCHELASTIC_.*|OMPI_.*|PMIX_.*|"
    r"SLURM_.*|PMI_.*|MPI_LOCALRANKID)$"
)

# SYMMEM_BACKEND=gpu runs the PEs on the gpu backend; anything else (unset,
# "cpu", "auto") on the cpu engine, also on a machine with GPUs: see
# pinned_cpu_engine.
ON_GPU = os.environ.get("SYMMEM_BACKEND") == "gpu"
# SYMMEM_BACKEND=mpi runs the PEs on the mpi backend (symmem.run starts them
# through mpirun); docs/testing.md says which tests it runs in CI.
ON_MPI = os.environ.get("SYMMEM_BACKEND") == "mpi"
# ... with every PE taken for one on a host of its own: no PE maps another's heap.
ON_MPI_RMA = ON_MPI and os.environ.get("SYMMEM_ONE_HOST_PER_PE") == "1"


@pytest.fixture(autouse=True)
def pinned_cpu_engine(request, monkeypatch):
    """Outside test_gpu.py (whose jobs name their backend), the PEs a test
    starts inherit SYMMEM_BACKEND=cpu unless the run asked for the gpu: on a
    machine with GPUs "auto" would pick the gpu backend."""
    if not ON_GPU and not ON_MPI and request.node.path.name != "test_gpu.py":
        monkeypatch.setenv("SYMMEM_BACKEND", "cpu")


# `make test` runs the suite on several workers at once (pytest-xdist, -n):
# the tests that take longest go first, so that the last minutes are not one
# worker finishing a long test while the others idle. Each entry is the start
# of a node id (file, or file::test), in the order they go; the rest follow in
# their usual order.
LONGEST_FIRST = (
    "test_build.py::test_a_used_tree_compiles_afresh",
    "test_bench.py::test_one_command",
    "test_device_cpu.py",
    "test_kernel_sources.py",
    "test_property.py",
    "test_bench",  # test_bench*.py
    "test_teams.py::test_finalize_after_collectives",
    "test_device_peer_array.py",
    "test_collectives.py",
)

# SYMMEM_TEST_PES=1,3 (make test-sanitize sets it) runs each test
# parametrized over its PE count (n) at those of its counts the list names;
# a test none of whose counts above 1 is named keeps those counts all.
PE_COUNTS = os.environ.get("SYMMEM_TEST_PES", "")


def _pe_count(item):
    callspec = getattr(item, "callspec", None)
    n = callspec.params.get("n") if callspec else None
    return n if isinstance(n, int) else None


def _wanted_pe_counts(items, wanted):
    """items less those at a PE count that SYMMEM_TEST_PES leaves out."""
    multi_named = set()  # tests with a count above 1 in wanted
    for item in items:
        if (_pe_count(item) or 0) > 1 and _pe_count(item) in wanted:
            multi_named.add((item.path, item.originalname))

    def kept(item):
        n = _pe_count(item)
        return (
            n is None
            or n in wanted
            or (n > 1 and (item.path, item.originalname) not in multi_named)
        )

    return [item for item in items if kept(item)], [item for item in items if not kept(item)]


def pytest_collection_modifyitems(config, items):
    if PE_COUNTS:
        items[:], dropped = _wanted_pe_counts(items, {int(n) for n in PE_COUNTS.split(",")})
        if dropped:
            config.hook.pytest_deselected(items=dropped)

    def rank(item):
        nodeid = item.nodeid.rsplit("/", 1)[-1]
        return next(
            (i for i, start in enumerate(LONGEST_FIRST) if nodeid.startswith(start)),
            len(LONGEST_FIRST),
        )

    items.sort(key=rank)


def cpu_only(reason):
    """Marks a test of what only the cpu backend does: skipped when
    SYMMEM_BACKEND=gpu or mpi."""
    return pytest.mark.skipif(ON_GPU or ON_MPI, reason=f"cpu backend only: {reason}")


def not_on_gpu(reason):
    """Marks a test the cpu and mpi backends run and the gpu backend skips:
    host memory (NumPy arrays over the heap, host addresses), waits that
    the host watches."""
    return pytest.mark.skipif(ON_GPU, reason=f"not on the gpu backend: {reason}")


def not_on_mpi(reason):
    """Marks a test the mpi backend cannot pass (yet), with the reason."""
    return pytest.mark.skipif(ON_MPI, reason=f"not on the mpi backend: {reason}")


def not_through_rma(reason):
    """Marks a test that needs the peers' heaps mapped, which the mpi backend
    does only for PEs of one node: skipped with SYMMEM_ONE_HOST_PER_PE=1."""
    return pytest.mark.skipif(
        ON_MPI_RMA,
        reason="not with SYMMEM_ONE_HOST_PER_PE=1 on the mpi "
        f"backend (every PE a host of its own): {reason}",
    )


@functools.lru_cache(maxsize=None)
def gpu_count():
    """How many GPUs this host has; asked (through CuPy) only when SYMMEM_BACKEND=gpu."""
    if not ON_GPU:
        return 0
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


def require_gpus(n):
    """On the gpu backend's nvshmem engine every PE needs a GPU of its own:
    skips the calling test where this host has fewer than n. The symmem
    engine (and auto, which takes it where PEs outnumber GPUs) lets PEs share
    a GPU. Does nothing on the cpu backend."""
    engine = os.environ.get("SYMMEM_GPU_ENGINE", "auto")
    if ON_GPU and engine == "nvshmem" and gpu_count() < n:
        pytest.skip(
            f"SYMMEM_BACKEND=gpu, SYMMEM_GPU_ENGINE=nvshmem: {n} PEs need {n} GPUs, "
            f"this host has {gpu_count()}"
        )


PRELUDE = '''\
import os, sys, time, signal, pickle, warnings
import numpy as np
import symmem as nvshmem

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "float16", "float32", "float64"]
INT_DTYPES = [d for d in DTYPES if d.startswith(("int", "uint"))]


def xp():
    """The module of symmetric arrays (ask after init()): CuPy on the gpu backend,
    else NumPy. A symmetric array a takes NumPy values as a[:] = xp().asarray(v)."""
    if nvshmem.get_version().backend == "gpu":
        import cupy
        return cupy
    return np


def host(a):
    """A NumPy array with a's contents (a CuPy array is copied off the GPU)."""
    if type(a).__module__.partition(".")[0] == "cupy":
        return a.get()
    return np.asarray(a)


def address(a):
    """The address of the first element of a NumPy or CuPy array."""
    interface = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    return interface["data"][0]


def buffer_view(buf, dtype="uint8"):
    """An array of dtype over the bytes of a Buffer: NumPy on the cpu backend,
    CuPy (over device memory) on the gpu backend."""
    if xp() is np:
        return np.frombuffer(buf, dtype=dtype)
    return xp().from_dlpack(buf).view(dtype)


def values(pe, dtype, count=8, salt=0):
    """Deterministic contents that differ from PE to PE (and with salt)."""
    dt = np.dtype(dtype)
    k = np.arange(count)
    if dt == np.bool_:
        return (k + pe + salt) % 3 == 0
    if dt.kind in "iu":
        return ((k * 7 + pe * 11 + salt * 3 + 1) % 100).astype(dt)
    return (k * 0.5 + pe + salt * 0.25).astype(dt)


def check(cond, what):
    if not cond:
        raise AssertionError(f"PE {nvshmem.my_pe()}: {what}")


def check_equal(got, expected, what):
    got, expected = host(got), host(expected)
    if got.shape != expected.shape or not np.array_equal(got, expected):
        raise AssertionError(f"PE {nvshmem.my_pe()}: {what}: got {got!r}, expected {expected!r}")


def expect_raises(exc, words, fn, *args, **kwargs):
    """fn(*args, **kwargs) must raise exc with every word of words in its message;
    returns the message."""
    try:
        fn(*args, **kwargs)
    except exc as error:
        msg = str(error)
        for word in words:
            if word not in msg:
                raise AssertionError(f"{getattr(fn, '__name__', fn)}: message {msg!r} "
                                     f"lacks {word!r}")
        return msg
    except BaseException as error:
        raise AssertionError(f"{getattr(fn, '__name__', fn)}{args!r}: expected "
                             f"{exc.__name__}, got {type(error).__name__}: {error}")
    raise AssertionError(f"{getattr(fn, '__name__', fn)}{args!r}: expected {exc.__name__}, "
                         "nothing was raised")


def ok():
    print(f"PE {nvshmem.my_pe()} OK", flush=True)

'''


def clean_env(extra=None):
    """os.environ without any launcher's variables, plus extra."""
    env = {k: v for k, v in os.environ.items() if not LAUNCHER_VARS.match(k)}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def write_program(tmp_path, code, name=None, prelude=True):
    """Writes code (dedented, PRELUDE first) to tmp_path; returns the path."""
    if name is None:
        index = len(list(tmp_path.glob("prog*.py")))
        name = f"prog{index}.py"
    path = tmp_path / name
    text = textwrap.dedent(code)
    path.write_text((PRELUDE if prelude else "") + text)
    return path


class Result:
    """A finished job: rc, stdout, stderr, elapsed seconds, and per-PE lines."""

    def __init__(self, proc, elapsed):
        self.rc = proc.returncode
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.elapsed = elapsed

    def lines(self, pe, stream="stdout"):
        """The lines PE pe wrote (launcher prefix removed)."""
        prefix = f"[pe {pe}] "
        text = self.stdout if stream == "stdout" else self.stderr
        return [line[len(prefix) :] for line in text.splitlines() if line.startswith(prefix)]

    def __repr__(self):
        return (
            f"rc={self.rc} elapsed={self.elapsed:.1f}s\n--- stdout ---\n{self.stdout}"
            f"\n--- stderr ---\n{self.stderr}"
        )


def launch(n, program, timeout=60, env=None, args=(), launcher_args=()):
    """Runs program (a path) on n PEs through the launcher (skips the test on the
    gpu backend where there are fewer than n GPUs)."""
    require_gpus(n)
    cmd = [
        sys.executable,
        "-m",
        "symmem.run",
        "-n",
        str(n),
        "--timeout",
        str(timeout),
        *map(str, launcher_args),
        str(program),
        *map(str, args),
    ]
    start = time.monotonic()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout + 30, env=clean_env(env)
    )
    return Result(proc, time.monotonic() - start)


@pytest.fixture
def run_pes(tmp_path):
    """run_pes(n, code_or_script, timeout=60, env=None, args=()) -> Result.

    code_or_script is program text (PRELUDE is prepended) or a path to an
    existing script (run as it is)."""

    def run(n, code_or_script, timeout=60, env=None, args=(), launcher_args=()):
        if isinstance(code_or_script, os.PathLike) or (
            isinstance(code_or_script, str)
            and "\n" not in code_or_script
            and code_or_script.endswith(".py")
            and os.path.isfile(code_or_script)
        ):
            program = code_or_script
        else:
            program = write_program(tmp_path, code_or_script)
        return launch(n, program, timeout=timeout, env=env, args=args, launcher_args=launcher_args)

    return run


def assert_all_ok(result, n):
    """rc == 0 and every one of the n PEs printed "PE k OK" (each PE once)."""
    assert result.rc == 0, str(result)
    for pe in range(n):
        assert result.lines(pe).count(f"PE {pe} OK") == 1, f"PE {pe} did not print OK\n{result}"
    assert f"[pe {n}] " not in result.stdout, str(result)


def _default_sigint():
    # A job a shell started in the background inherits SIGINT ignored, and a
    # Python started so never installs its KeyboardInterrupt handler.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_plain(program, args=(), env=None, timeout=60):
    """Starts `python program args` without any launcher, SIGINT as in a
    terminal; returns the Popen."""
    return subprocess.Popen(
        [sys.executable, str(program), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(env),
        preexec_fn=_default_sigint,
    )


def wait_all(procs, timeout=60):
    """Waits for Popen objects; returns [(rc, stdout, stderr)], killing stragglers."""
    deadline = time.monotonic() + timeout
    results = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in procs:
                if other.poll() is None:
                    other.kill()
            out, err = proc.communicate()
            results.append((None, out, err + "\n(killed: timeout)"))
            continue
        results.append((proc.returncode, out, err))
    return results
