"""One PE of a job that python -m symmem.run starts through mpirun (the mpi
backend): mpirun starts this program as each of its ranks, and it runs the
user's program as its child, as symmem.run does for the other backends.

It gives the child symmem.run's variables for this rank (SYMMEM_RANK, ...),
prefixes its output lines with ``[pe K] ``, passes on the signals it gets
(SIGINT, SIGTERM, SIGUSR1: the stacks), says where the child was when it
printed its stacks (where.K, for symmem.run's report on --timeout), and
when the child ends writes its exit report into SYMMEM_STATUS_DIR, where
the other PEs' waits look (src/core/peer_status.c), then exits as the
child did. So a PE killed with
kill -9 is reported by name, and mpirun (run with fault tolerance, see
_run_mpi.py) sees this program end, not a rank that vanished. Where
python -m symmem.run itself dies (SYMMEM_MPI_RUNNER names it), this program
kills the user's and ends, so that mpirun ends too and nothing outlives it.

Standard library only, like run.py: usage ``python -m symmem._mpi_pe
program words...``.
"""

import os
import signal
import subprocess
import sys
import threading
import time

if __package__:
    from symmem import run
    from symmem._run_stop import (
        STACK_HEADER,
        STACK_POLL,
        STACK_QUIET,
        _stat_fields,
        innermost_frame,
        launcher_id,
    )
else:  # pragma: no cover - run as a file
    import run
    from _run_stop import (
        STACK_HEADER,
        STACK_POLL,
        STACK_QUIET,
        _stat_fields,
        innermost_frame,
        launcher_id,
    )

# The rank and size, as MPI launchers tell their processes.
RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")
SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")
LOCAL_VARS = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID")


def _first(names, default=None):
    for name in names:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return default


class Stacks:
    """The stacks the program prints on SIGUSR1 (faulthandler, symmem/_launched.py),
    which symmem.run sends it before it stops the job on --timeout: once its
    stderr has been quiet STACK_QUIET after a dump began, where it was (the
    innermost frame) goes to where.<rank> in the status folder, for
    symmem.run's report (_run_mpi.py); mpirun carries the dump itself."""

    def __init__(self, path):
        self.path = path
        self.lines = None  # the dump being printed
        self.last = 0.0  # when its last line came (monotonic)
        self.lock = threading.Lock()

    def feed(self, line):
        text = line.decode(errors="replace").rstrip("\n")
        with self.lock:
            if self.lines is None and STACK_HEADER.match(text):
                self.lines = []
            if self.lines is not None:
                self.lines.append(text)
                self.last = time.monotonic()

    def watch(self, proc):
        while proc.poll() is None:
            time.sleep(STACK_POLL)
            with self.lock:
                if not self.lines or time.monotonic() - self.last < STACK_QUIET:
                    continue
                where, self.lines = innermost_frame(self.lines), None
            try:  # whole or not at all: the launcher reads it as soon as it exists
                with open(self.path + ".tmp", "w") as f:
                    f.write(where)
                os.replace(self.path + ".tmp", self.path)
            except OSError:
                pass


def _pump(pipe, out, prefix, stacks=None):
    out = getattr(out, "buffer", out)
    for line in iter(pipe.readline, b""):
        if not line.endswith(b"\n"):
            line += b"\n"
        if stacks is not None:
            stacks.feed(line)
        try:
            out.write(prefix + line)
            out.flush()
        except (BrokenPipeError, ValueError):
            pass
    pipe.close()


def _watch_runner(ident, proc):
    """Kills proc once the process ident ("pid:start", python -m symmem.run)
    has ended: mpirun outlives a symmem.run killed with SIGKILL, and so would
    the PEs."""
    pid, _, start = ident.partition(":")
    while proc.poll() is None:
        fields = _stat_fields(pid)
        if len(fields) < 20 or fields[0] in ("Z", "X") or fields[19] != start:  # a zombie too
            proc.kill()
            return
        time.sleep(0.2)


def main(argv):
    rank, size = _first(RANK_VARS), _first(SIZE_VARS)
    if rank is None or size is None or not argv:
        sys.exit(
            "symmem._mpi_pe: run by python -m symmem.run under mpirun only "
            "(no MPI rank in the environment, or no program)"
        )
    env = dict(os.environ)
    local = str(_first(LOCAL_VARS, rank))
    env.update(
        SYMMEM_RANK=str(rank),
        SYMMEM_NRANKS=str(size),
        SYMMEM_LOCAL_RANK=local,
        RANK=str(rank),
        LOCAL_RANK=local,
        WORLD_SIZE=str(size),
        LOCAL_WORLD_SIZE=str(size),
        PYTHONUNBUFFERED="1",
    )
    me = launcher_id()
    if me is not None:  # the PE dies with this program
        env["SYMMEM_LAUNCHER"] = me
    prefix = b"" if os.environ.get("SYMMEM_RUN_NO_PREFIX") == "1" else b"[pe %d] " % rank
    proc = subprocess.Popen(
        argv,
        stdin=None if rank == 0 else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1):
        signal.signal(signum, lambda s, frame: proc.poll() is None and proc.send_signal(s))
    status_dir = os.environ.get("SYMMEM_STATUS_DIR", "")
    if status_dir:  # the program's pid, for symmem.run's report ("PE 1 (pid N) failed first")
        try:
            with open(os.path.join(status_dir, "%d.pid" % rank), "w") as f:
                f.write(str(proc.pid))
        except OSError:
            pass
    runner = os.environ.get("SYMMEM_MPI_RUNNER", "")
    if runner:
        threading.Thread(target=_watch_runner, args=(runner, proc), daemon=True).start()
    stacks = Stacks(os.path.join(status_dir, "where.%d" % rank)) if status_dir else None
    if stacks is not None:
        threading.Thread(target=stacks.watch, args=(proc,), daemon=True).start()
    pumps = [
        threading.Thread(target=_pump, args=(proc.stdout, sys.stdout, prefix)),
        threading.Thread(target=_pump, args=(proc.stderr, sys.stderr, prefix, stacks)),
    ]
    for pump in pumps:
        pump.start()
    returncode = run.wait_exited(proc)
    if status_dir:
        try:
            run.write_status(status_dir, rank, returncode)
        except OSError:
            pass  # the peers then only see the pid gone
    proc.wait()
    for pump in pumps:
        pump.join(run.READER_JOIN)
    return run.exit_code_for(returncode)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
