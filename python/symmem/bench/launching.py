"""How the bench starts a library's processes and reads what they measure:
the launcher's command line, the sweep's worker options, the JSON records
PE 0 prints, the environment of a run. libraries.py and nccl_libraries.py
build their runners from these."""

import importlib.util
import json
import os
import subprocess
import sys


def gpu_count():
    """The GPUs CuPy sees (0 without CuPy)."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return 0


def launch(n, args, env, timeout):
    """symmem's launcher's command line running `python args` on n PEs."""
    return [
        sys.executable,
        "-m",
        "symmem.run",
        "-n",
        str(n),
        "--no-prefix",
        "--timeout",
        str(timeout),
        *args,
    ]


def measuring(run, ops):
    """run, marked as measuring only ops (comma-separated) of --ops."""
    run.ops = ops
    return run


def sweep_args(opts, ops=None):
    """The worker options that say what to measure (ops: default the host
    operations); every worker takes them."""
    iters = getattr(opts, "iters", None)
    return (
        [
            "--ops",
            ops or opts.ops,
            "--min-bytes",
            str(opts.min_bytes),
            "--max-bytes",
            str(opts.max_bytes),
        ]
        + (["--graph"] if opts.graph else [])
        + (["--iters", str(iters)] if iters else [])
    )


def ops_without(opts, *left_out):
    """The operations of --ops but left_out, comma-separated: what a library
    that has no counterpart of those measures."""
    return ",".join(op for op in opts.ops.split(",") if op and op not in left_out)


def stream_records(command, env, log):
    """Runs command, yielding the JSON records it prints; the rest of its
    output goes to log. A failed run raises RuntimeError with its tail."""
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    tail = []
    for line in proc.stdout:
        log.write(line)
        if line.startswith("{"):
            try:
                yield json.loads(line)
                continue
            except json.JSONDecodeError:
                pass
        tail = (tail + [line])[-30:]
    if proc.wait() != 0:
        raise RuntimeError(
            f"{' '.join(command[:6])} ... exited with {proc.returncode}:\n" + "".join(tail)
        )


def heap_env(max_bytes, backend):
    """The environment for a run: symmetric heaps big enough for the sweep."""
    env = dict(os.environ)
    heap = 2 * max_bytes + (512 << 20)
    env.setdefault("NVSHMEM_SYMMETRIC_SIZE", str(heap))
    if backend in ("cpu", "mpi"):
        env.setdefault("SYMMEM_SYMMETRIC_SIZE", str(heap))
    env["SYMMEM_BACKEND"] = backend
    return env


def missing(module):
    """Whether module (dotted: its package too) cannot be found."""
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # its package is missing, or hidden
        return True
