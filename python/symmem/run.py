"""Start a symmem job: N processing elements (PEs) on this host.

    python -m symmem.run -n N [--backend B] [--timeout S] [--grace S]
                         [--no-prefix] (script.py | -m module | -c code)
                         [args ...]

``symmem-run`` (installed with the package) is the same command, and ``-np``
(mpirun's) and ``--nproc-per-node`` (torchrun's) are other names of ``-n``.

Each PE gets SYMMEM_JOB, SYMMEM_RANK, SYMMEM_NRANKS, SYMMEM_LOCAL_RANK,
SYMMEM_JOB_SECRET, SYMMEM_STATUS_DIR and SYMMEM_LAUNCHER, which symmem reads,
and, for code that reads torch-style variables, RANK, LOCAL_RANK, WORLD_SIZE
and LOCAL_WORLD_SIZE (every PE is on this host: LOCAL_* equal the others).
symmem reads the SYMMEM_* ones first, so a PE of this launcher meets its
peers through this launcher's rendezvous, not as a torchrun job.

Every output line of a PE is prefixed with ``[pe K] ``. If a PE fails (exits
non-zero or is killed by a signal), the others get ``--grace`` seconds to
notice and exit by themselves, then they are stopped; the launcher exits with
the first failure's status and prints a report naming it. A failure, Ctrl-C
or SIGTERM while the PEs are still being started ends the start-up: no
further PE starts, and those started are stopped (after a failure at once:
they would wait in init for the rest). -n is at most what init accepts
(MAX_PES); far more PEs than cores is said before they start.

Before a PE is killed (on ``--timeout``, or when it outlives Ctrl-C or SIGTERM
by KILL_DELAY), it is asked for the stacks of its Python threads (SIGUSR1, see
symmem/_launched.py) and the launcher reports where each PE was. Ctrl-C
interrupts every PE (KeyboardInterrupt); the PEs die with the launcher, even
when it is killed (SYMMEM_LAUNCHER, see src/core/launcher_link.h).

This module uses the standard library only: it must run even while the
compiled part of the package is missing or broken. Where a backend is named
(--backend, SYMMEM_BACKEND), _run_backend.py asks the extension, where it
loads, what that backend can do: mpirun starts the PEs of a backend whose
PEs are MPI processes (_run_mpi.py).
"""

import collections
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The command line is _run_command_line.py's; its names are imported as they
# were when it was part of this file (test_bench.py imports build_parser here).
if __package__:
    from symmem import _run_backend, _run_mpi
    from symmem._run_command_line import (  # noqa: F401
        EXIT_USAGE,
        NPES_OPTIONS,
        OPTIONS_WITH_VALUE,
        PROG,
        SCRIPT,
        build_parser,
        child_command,
        far_beyond,
        host_cores,
        host_gpus,
        is_native_executable,
        parse_args,
        split_argv,
    )
    from symmem._run_stop import (
        EXIT_TIMEOUT,
        POLL,
        STACK_HEADER,
        Stopping,
        launcher_id,
        remove_job_files,
        signal_name,
    )
else:  # run as a file (python .../symmem/run.py): its folder is on sys.path
    import _run_backend
    import _run_mpi
    from _run_command_line import (  # noqa: F401
        EXIT_USAGE,
        NPES_OPTIONS,
        OPTIONS_WITH_VALUE,
        PROG,
        SCRIPT,
        build_parser,
        child_command,
        far_beyond,
        host_cores,
        host_gpus,
        is_native_executable,
        parse_args,
        split_argv,
    )
    from _run_stop import (
        EXIT_TIMEOUT,
        POLL,
        STACK_HEADER,
        Stopping,
        launcher_id,
        remove_job_files,
        signal_name,
    )

TAIL_LINES = 40  # stderr lines kept per PE for the failure report
READER_JOIN = 2.0  # how long to wait for output still buffered in the pipes


# --------------------------------------------------------------------------
# What each PE is told


def child_env(args, job, rank, status_dir):
    env = dict(os.environ)
    # SYMMEM_JOB_SECRET (one per job, made in Job): no other job's PE can pair with ours.
    env.update(
        SYMMEM_JOB=job,
        SYMMEM_JOB_SECRET=args.job_secret,
        SYMMEM_RANK=str(rank),
        SYMMEM_NRANKS=str(args.npes),
        SYMMEM_LOCAL_RANK=str(rank),
        SYMMEM_STATUS_DIR=status_dir,
        PYTHONUNBUFFERED="1",
    )
    # The same numbers under torch's names, for the program's own code; they
    # replace any an outer launcher set. symmem itself reads SYMMEM_* first
    # (src/core/bootstrap.c), so this is no torchrun job to it.
    env.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(args.npes),
        LOCAL_WORLD_SIZE=str(args.npes),
    )
    if args.backend is not None:
        env["SYMMEM_BACKEND"] = args.backend
    return env


# --------------------------------------------------------------------------
# Exit statuses


def describe(returncode):
    """Popen-style returncode (negative = signal) -> words for reports."""
    if returncode >= 0:
        return "exited with code %d" % returncode
    return "killed by signal %d (%s)" % (-returncode, signal_name(-returncode))


def status_line(returncode):
    """The one line of a PE's status file, read by the C library."""
    text = describe(returncode)
    return text if returncode >= 0 else "was " + text


def exit_code_for(returncode):
    """Shell convention: a death by signal s becomes 128 + s."""
    return returncode if returncode >= 0 else 128 - returncode


def wait_exited(proc):
    """Block until proc has exited and return its Popen-style returncode,
    leaving it a zombie (not reaped) where the OS allows it.

    Reaping later, after the status file is written, means a peer that sees
    the pid gone always finds the file already there.
    """
    if hasattr(os, "waitid"):
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            info = None
        if info is not None:
            if info.si_code == os.CLD_EXITED:
                return info.si_status
            return -info.si_status
    return proc.wait()


def write_status(status_dir, rank, returncode):
    # Write then rename, so a reader never sees a half-written file.
    final = os.path.join(status_dir, str(rank))
    temp = os.path.join(status_dir, ".%d.tmp" % rank)
    with open(temp, "w") as f:
        f.write(status_line(returncode) + "\n")
    os.rename(temp, final)


# --------------------------------------------------------------------------
# The job


class PE:
    """One child process and what the launcher knows about it."""

    def __init__(self, rank, proc):
        self.rank = rank
        self.proc = proc
        self.pid = proc.pid
        self.returncode = None  # set as soon as it has exited
        self.reaped = False  # its pid may be reused once this is True
        self.stopped = False  # the launcher signalled it while it ran
        self.stderr_tail = collections.deque(maxlen=TAIL_LINES)
        self.threads = []
        self.stack = None  # faulthandler's lines, once we asked
        self.last_stderr = 0.0  # when it last wrote on stderr (monotonic)


class Job(Stopping):
    def __init__(self, args):
        self.args = args
        self.name = "j" + secrets.token_hex(8)
        args.job_secret = secrets.token_hex(16)
        self.pes = []
        self.lock = threading.Lock()  # PE state, signalling, reaping
        self.out_lock = threading.Lock()  # whole lines on our stdout/stderr
        self.changed = threading.Event()  # a PE exited or a signal came
        self.first_failure = None  # the PE that failed first
        self.failure_time = None
        self.stop_reason = None  # "the failure", "the timeout", ...
        self.kill_at = None  # when to escalate to SIGKILL
        self.signals = []  # signals the launcher received
        self.handled_signals = 0  # how many of them the main loop handled
        self.stacks_reported = False  # asked the PEs for stacks already
        self.status_dir = None
        self.never_started = 0  # PEs not started: a signal or a failure came first

    # ---- starting

    def start(self):
        """Starts the PEs one by one. A signal, or a PE that fails, ends the
        start-up at once: the PEs started would wait in init for the rest."""
        self.status_dir = tempfile.mkdtemp(prefix="symmem-%s-" % self.name)
        cmd = child_command(self.args.program)
        me = launcher_id()
        for rank in range(self.args.npes):
            if self.signals or self.first_failure is not None:
                self.stop_starting(rank)
                return
            # Like mpirun: only PE 0 reads the launcher's stdin.
            stdin = None if rank == 0 else subprocess.DEVNULL
            env = child_env(self.args, self.name, rank, self.status_dir)
            if me is not None:  # the PE dies with us
                env["SYMMEM_LAUNCHER"] = me
            proc = subprocess.Popen(
                cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
            )
            pe = PE(rank, proc)
            self.pes.append(pe)
            prefix = b"" if self.args.no_prefix else b"[pe %d] " % rank
            self._thread(pe, self._pump, proc.stdout, sys.stdout, prefix, None)
            self._thread(pe, self._pump, proc.stderr, sys.stderr, prefix, pe)
            self._thread(pe, self._waiter, pe)

    def stop_starting(self, rank):
        """Leaves PEs rank.. unstarted; after a failure the others are
        stopped now (no grace: they wait for PEs that never come); a signal
        is handled by wait()."""
        self.never_started = self.args.npes - rank
        never = (
            "PE %d" % rank
            if self.never_started == 1
            else "PEs %d to %d" % (rank, rank + self.never_started - 1)
        )
        if self.signals:
            cause = "got %s" % signal_name(self.signals[0])
        else:
            cause = "PE %d failed" % self.first_failure.rank
        self.message("%s while starting the PEs: %s never started" % (cause, never))
        if not self.signals:
            self.stop("the failure during start-up")

    def _thread(self, pe, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        pe.threads.append(thread)

    def _pump(self, pipe, out, prefix, pe):
        """Copy one child pipe to our stream line by line, prefixed; for
        stderr (pe given) keep its last lines and the stacks we asked for."""
        out = getattr(out, "buffer", out)
        for line in iter(pipe.readline, b""):
            if not line.endswith(b"\n"):
                line += b"\n"  # a final partial line still gets printed
            if pe is not None:
                text = line.decode(errors="replace").rstrip("\n")
                pe.stderr_tail.append(text)
                pe.last_stderr = time.monotonic()
                stack = pe.stack
                if stack is not None and (stack or STACK_HEADER.match(text)):
                    stack.append(text)
            with self.out_lock:
                try:
                    out.write(prefix + line)
                    out.flush()
                except (BrokenPipeError, ValueError):
                    pass  # our output is gone; keep draining the child
        pipe.close()

    def _waiter(self, pe):
        """Notice the PE's exit at once, report it in the status dir, reap."""
        returncode = wait_exited(pe.proc)
        with self.lock:
            pe.returncode = returncode
        try:
            write_status(self.status_dir, pe.rank, returncode)
        except OSError as e:  # peers then only see the pid gone
            self.message("cannot write the status of PE %d: %s" % (pe.rank, e))
        with self.lock:
            pe.proc.wait()  # reaps the zombie; instant
            pe.reaped = True
            # A PE that Ctrl-C ended before we could pass it on is no failure.
            if (
                returncode != 0
                and not pe.stopped
                and not self.signals
                and self.first_failure is None
            ):
                self.first_failure = pe
                self.failure_time = time.monotonic()
        self.changed.set()

    # ---- stopping

    def running(self):
        """PEs not yet reaped (their exit is not fully handled yet)."""
        with self.lock:
            return [pe for pe in self.pes if not pe.reaped]

    # ---- the main loop

    def wait(self):
        """Supervise until every PE has exited; returns our exit code."""
        start = time.monotonic()
        timed_out = False
        while self.running():
            now = time.monotonic()
            if len(self.signals) > self.handled_signals:
                self.handled_signals = len(self.signals)
                signum = self.signals[-1]
                if self.handled_signals == 1:
                    self.message(
                        "got %s; stopping PEs %s"
                        % (signal_name(signum), self.ranks(self.running()))
                    )
                    self.interrupt(signum)
                else:  # asked twice: do not wait any longer
                    self.signal_all(signal.SIGKILL)
                    self.kill_at = None
            elif (
                self.args.timeout is not None and not timed_out and now - start >= self.args.timeout
            ):
                timed_out = True
                self.message(
                    "timeout after %g s: PEs still running: %s; "
                    "asking them for their stacks" % (self.args.timeout, self.ranks(self.running()))
                )
                self.report_stacks()
                self.stop("the timeout")
            elif (
                self.first_failure is not None
                and self.stop_reason is None
                and now - self.failure_time >= self.args.grace
            ):
                self.stop("the failure")
            if self.kill_at is not None and now >= self.kill_at:
                if not self.stacks_reported:
                    self.report_stacks()
                self.signal_all(signal.SIGKILL)
                self.kill_at = None
            self.changed.wait(POLL)
            self.changed.clear()
        self.join_output()
        if self.first_failure is not None:
            self.report_failure()
        if self.signals:
            return 128 + self.signals[0]
        if timed_out:
            return EXIT_TIMEOUT
        if self.first_failure is not None:
            return exit_code_for(self.first_failure.returncode)
        return 0

    def join_output(self):
        # The pipes reach EOF when the PEs exit, unless a process they
        # started keeps them open: do not wait for that one forever.
        deadline = time.monotonic() + READER_JOIN
        for pe in self.pes:
            for thread in pe.threads:
                thread.join(max(0.0, deadline - time.monotonic()))

    # ---- reporting

    def report_failure(self):
        first = self.first_failure
        lines = [
            "PE %d (pid %d) failed first: %s" % (first.rank, first.pid, describe(first.returncode))
        ]
        if first.stderr_tail:
            lines.append("last lines of PE %d's stderr:" % first.rank)
            # Indented, without our prefix: they read as a quote.
            lines.extend("\t" + line for line in first.stderr_tail)
        else:
            lines.append("PE %d wrote nothing on stderr" % first.rank)
        failed = [pe for pe in self.pes if pe.returncode != 0 and not pe.stopped]
        stopped = [pe for pe in self.pes if pe.stopped]
        summary = "%d of %d PEs failed (%s)" % (
            len(failed),
            len(self.pes),
            self.ranks(failed, brackets=False),
        )
        if stopped:
            summary += "; stopped %s after %s" % (
                self.ranks(stopped, brackets=False),
                self.stop_reason,
            )
        if self.never_started:
            summary += "; %d of %d never started" % (self.never_started, self.args.npes)
        lines.append(summary)
        self.message("\n".join(lines))

    @staticmethod
    def ranks(pes, brackets=True):
        if brackets:
            return "[%s]" % ", ".join(str(pe.rank) for pe in pes)
        return ", ".join("PE %d" % pe.rank for pe in pes)

    def message(self, text):
        """Write our own lines to stderr; lines starting with a tab are
        written indented by four spaces instead of prefixed."""
        with self.out_lock:
            for line in text.split("\n"):
                if line.startswith("\t"):
                    sys.stderr.write("    %s\n" % line[1:])
                else:
                    sys.stderr.write("symmem.run: %s\n" % line)
            sys.stderr.flush()

    def cleanup(self):
        """After every PE has exited: the status folder, and the files in
        /dev/shm of PEs stopped during init."""
        if self.status_dir is not None:
            shutil.rmtree(self.status_dir, ignore_errors=True)
        remove_job_files(self.name)


def main(argv=None):
    """python -m symmem.run, and the symmem-run console script."""
    script = os.path.basename(sys.argv[0]) == SCRIPT
    args = parse_args(sys.argv[1:] if argv is None else argv, SCRIPT if script else PROG)
    far = far_beyond(args.npes, host_cores(), host_gpus())
    if far is not None:
        sys.stderr.write("symmem.run: %s\n" % far)
    if _run_backend.started_by_mpirun(args):  # PEs that are MPI processes
        return _run_mpi.main(args, child_command(args.program))
    job = Job(args)
    # Handle SIGINT/SIGTERM in the main loop (and between two PEs' starts):
    # forward them to the PEs and make sure none outlives the launcher.
    old_handlers = {s: signal.signal(s, job.on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            job.start()
        except OSError as e:
            job.message("cannot start PE %d: %s" % (len(job.pes), e))
            job.stop("a start error", signal.SIGKILL)
            job.wait()
            return 1
        return job.wait()
    finally:
        for signum, handler in old_handlers.items():
            signal.signal(signum, handler)
        job.cleanup()


if __name__ == "__main__":
    sys.exit(main())
