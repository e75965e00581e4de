"""Helpers shared by the benchmark scripts: start-up, the header line, sizes,
timing of interleaved candidates, and markdown tables printed by PE 0.

The scripts run under `python -m symmem.run -n N` or, to get an MPI reference
in the same run, under `mpirun -n N` (symmem then boots over mpi4py).
"""
import datetime
import os
import platform
import socket
import statistics
import subprocess
import time
import timeit

import numpy as np

import symmem as nvshmem

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def under_mpirun():
    return any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))


def start():
    """Initialise symmem; return the mpi4py COMM_WORLD when under mpirun, else None."""
    if not under_mpirun():
        nvshmem.init()
        return None
    from mpi4py import MPI
    nvshmem.init(mpi_comm=MPI.COMM_WORLD, initializer_method="mpi")
    return MPI.COMM_WORLD


def say(*args):
    """print() on PE 0 only."""
    if nvshmem.my_pe() == 0:
        print(*args, flush=True)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def header(script, comm):
    launcher = "mpirun (mpi4py %s, %s)" % _mpi_versions() if comm is not None else "symmem.run"
    version = nvshmem.get_version()
    say("# %s  %s  host=%s  cpu=%r x%d  python=%s  numpy=%s  symmem=%s (%s)  PEs=%d  "
        "git=%s  launcher=%s  SYMMEM_SPIN_US=%s  loadavg=%s"
        % (os.path.basename(script), datetime.datetime.now().isoformat(timespec="seconds"),
           socket.gethostname(), cpu_model(), os.cpu_count(), platform.python_version(),
           np.__version__, version.symmem_version, version.backend, nvshmem.n_pes(), _git(),
           launcher, os.environ.get("SYMMEM_SPIN_US", "default"), _loadavg()))


def _git():
    """The commit of the checkout the scripts run from ('+dirty' with local changes)."""
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty=+dirty"],
                             capture_output=True, text=True, timeout=10,
                             cwd=os.path.dirname(os.path.abspath(__file__)))
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def _loadavg():
    """The 1-minute load average: other work on the machine skews every number."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def _mpi_versions():
    import mpi4py
    from mpi4py import MPI
    return mpi4py.__version__, MPI.Get_library_version().split(",")[0].strip()


def parse_size(text):
    """'8', '4K', '64M', '64MiB' -> bytes."""
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = text[-1] if text and text[-1] in _UNITS else ""
    return int(text[:len(text) - len(unit)]) * _UNITS[unit]


def fmt_size(nbytes):
    for unit in ("G", "M", "K"):
        if nbytes >= _UNITS[unit] and nbytes % _UNITS[unit] == 0:
            return "%d %siB" % (nbytes // _UNITS[unit], unit)
    return "%d B" % nbytes


def sizes(lo, hi, step):
    """lo, lo*step, ... <= hi."""
    out = [lo]
    while out[-1] * step <= hi:
        out.append(out[-1] * step)
    return out


def interleaved(stmts, namespace, seconds=None, batch=None, repeats=5):
    """Median nanoseconds per execution of each statement in stmts (name -> code).

    Each statement runs in a compiled timeit loop (no per-call Python wrapper),
    in `repeats` rounds that alternate between the statements, so a drift of
    the machine hits every candidate alike; each round starts one statement
    later, so no statement always inherits the caches of the same predecessor.
    Give `batch` (executions per round, the same on every PE: required when
    the statements are collective) or `seconds` (per statement in all; the
    batch is calibrated, which also warms the statement up).
    Returns {name: (median_ns, min_ns)}.
    """
    timers = {name: timeit.Timer(code, globals=namespace, timer=time.perf_counter_ns)
              for name, code in stmts.items()}
    batches = {name: batch or _calibrate(t, seconds * 1e9 / repeats) for name, t in timers.items()}
    samples = {name: [] for name in stmts}
    names = list(stmts)
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            samples[name].append(timers[name].timeit(batches[name]) / batches[name])
    return {name: (statistics.median(s), min(s)) for name, s in samples.items()}


def _calibrate(timer, target_ns):
    """How many executions take about target_ns (at least 1)."""
    n = 1
    while True:
        elapsed = max(timer.timeit(n), 1)
        if elapsed >= target_ns / 10 or n >= 1 << 24:
            return max(1, int(n * target_ns / elapsed))
        n *= 8


def table(title, columns, rows):
    """Print a markdown table on PE 0; rows are tuples of already formatted cells."""
    say("\n### " + title + "\n")
    say("| " + " | ".join(columns) + " |")
    say("|" + "|".join("---:" for _ in columns) + "|")
    for row in rows:
        say("| " + " | ".join(row) + " |")


def us(ns):
    return "%.3f" % (ns / 1e3) if ns < 1e5 else "%.1f" % (ns / 1e3)


def gbs(nbytes, ns):
    return "%.2f" % (nbytes / ns)  # bytes per ns == GB/s


def ratio(a, b):
    return "%.2f" % (a / b)
