"""How the launcher stops its PEs and learns where they were.

- A SIGINT or SIGTERM the launcher gets is passed on to the PEs (Ctrl-C makes
  each raise KeyboardInterrupt), except Ctrl-C to PEs that the terminal has
  already sent it to; a PE still running KILL_DELAY later is killed.
- Before a PE is killed (also on ``--timeout``), it is asked for the stacks of
  its Python threads (STACK_SIGNAL; symmem/_launched.py makes a PE answer),
  and the launcher says where each PE was.
- The PEs die with the launcher, even a SIGKILLed one: it exports its
  identity as SYMMEM_LAUNCHER (src/core/launcher_link.h does the rest).
- PEs stopped during init leave the cpu backend's files in /dev/shm under
  the job's name (a job that started has unlinked them): once every PE has
  exited, the launcher removes them.

Standard library only, like run.py, which mixes Stopping into its Job.
"""

import glob
import os
import re
import signal
import time

POLL = 0.05  # the launchers' main loop period; PE exits wake it up at once
EXIT_TIMEOUT = 124  # the launcher's exit status after --timeout
KILL_DELAY = 2.0  # seconds from SIGTERM (or a forwarded signal) to SIGKILL
STACK_SIGNAL = signal.SIGUSR1  # makes a PE that imported symmem print its stacks
STACK_WAIT = 2.0  # the longest we wait for the stacks we asked for
STACK_QUIET = 0.2  # a PE's stacks are complete once its stderr is this quiet
# faulthandler's first line of a thread (or of the only one)
STACK_HEADER = re.compile(
    r"^(Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):"
    r"|^Stack \(most recent call first\):"
)
STACK_FRAME = re.compile(r'^  File "(.*)", line (\d+) in (.*)$')
STACK_POLL = 0.05  # how often we look whether the stacks have come
PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # symmem's own frames


def remove_job_files(job):
    """Removes the files the cpu backend's PEs of job (its SYMMEM_JOB) left in
    /dev/shm: symmem-<uid>-<job>-... (src/backends/cpu/segment.c). Only PEs
    stopped during init leave any; the name is random for each job of the
    launcher, so no other job's files match. Returns the paths removed."""
    pattern = "/dev/shm/symmem-%d-%s-*" % (os.geteuid(), glob.escape(job))
    removed = []
    for path in glob.glob(pattern):
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


def _stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command name (field 3, the
    state, first), or [] where /proc cannot tell."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()
    except OSError:
        return []


def launcher_id():
    """SYMMEM_LAUNCHER for our PEs: our pid and start time (field 22 of
    /proc/self/stat), which name this process even after pid reuse; None
    where /proc cannot tell."""
    fields = _stat_fields("self")
    if len(fields) < 20:
        return None
    return "%d:%s" % (os.getpid(), fields[19])


def is_stopped(pid):
    """Whether process pid is stopped (state T: SIGSTOP, SIGTSTP, Ctrl-Z; t:
    held by a debugger): it runs no signal handler, so prints no stack,
    until it continues."""
    return _stat_fields(pid)[:1] in (["T"], ["t"])


def terminal_group():
    """The process group our terminal sends Ctrl-C to, or None without one."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.tcgetpgrp(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def innermost_frame(stack):
    """Where a faulthandler dump (its lines) says the PE was: the innermost
    frame outside symmem of the thread that took the signal (the kernel gives
    a signal sent to a process to its main thread), else of the last one
    listed (the oldest), and the symmem function it was in, if any."""
    blocks = []
    for line in stack:
        if STACK_HEADER.match(line):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    current = [b for b in blocks if b[0].startswith("Current thread")]
    inside = None
    for block in current or blocks[-1:]:
        for line in block[1:]:
            frame = STACK_FRAME.match(line)
            if frame and frame.group(1).startswith(PACKAGE):
                inside = frame.group(3)  # the outermost symmem frame wins
            elif frame:
                where = "%s, line %s in %s" % frame.groups()
                return where + (" (in symmem's %s)" % inside if inside else "")
    return "no Python frame"


def stopped_line(rank, pid):
    """The report's line for a PE that is stopped and so prints no stack."""
    return (
        "\tPE %d is stopped (SIGSTOP / state T; pid %d): it prints no "
        "stack until it continues (kill -CONT %d)" % (rank, pid, pid)
    )


WHERE_TITLE = (
    "where each PE still running was (the innermost Python frame of the stack it printed above):"
)


class Stopping:
    """The stopping half of run.Job, which has pes, lock, changed, signals,
    handled_signals, stop_reason, kill_at, stacks_reported, status_dir,
    running() and message()."""

    def signal_all(self, signum):
        """Send signum to every PE not yet reaped."""
        with self.lock:  # holding it, no pid can be reaped (and reused)
            for pe in self.pes:
                if pe.reaped:
                    continue
                try:
                    os.kill(pe.pid, signum)
                except ProcessLookupError:
                    continue
                if pe.returncode is None:
                    pe.stopped = True

    def stop(self, reason, signum=signal.SIGTERM):
        """Ask the running PEs to exit; SIGKILL follows KILL_DELAY later."""
        self.stop_reason = reason
        self.signal_all(signum)
        self.kill_at = time.monotonic() + KILL_DELAY

    def on_signal(self, signum, frame):
        self.signals.append(signum)
        self.changed.set()

    def interrupt(self, signum):
        """Pass a SIGINT or SIGTERM we got on to the PEs, except SIGINT to
        those in our terminal's foreground group: Ctrl-C reached them already
        (they share our process group), and a second one would interrupt
        their KeyboardInterrupt traceback."""
        group = terminal_group() if signum == signal.SIGINT else None
        with self.lock:
            for pe in self.pes:
                if pe.reaped:
                    continue
                try:
                    if group is None or os.getpgid(pe.pid) != group:
                        os.kill(pe.pid, signum)
                except ProcessLookupError:
                    continue
                if pe.returncode is None:
                    pe.stopped = True
        self.stop_reason = signal_name(signum)
        self.kill_at = time.monotonic() + KILL_DELAY

    def ask_for_stacks(self):
        """SIGUSR1 to every running PE that can answer (its stacks.<pid> file
        says it imported symmem); returns them."""
        asked = []
        with self.lock:  # holding it, no pid can be reaped (and reused)
            for pe in self.pes:
                ready = os.path.join(self.status_dir, "stacks.%d" % pe.pid)
                if pe.returncode is not None or not os.path.exists(ready):
                    continue
                pe.stack = []
                try:
                    os.kill(pe.pid, STACK_SIGNAL)
                except ProcessLookupError:
                    continue
                asked.append(pe)
        return asked

    def report_stacks(self):
        """Has the running PEs print their stacks, waits for them (at most
        STACK_WAIT, less if asked to stop again), and says where each was."""
        self.stacks_reported = True
        running = [pe for pe in self.running() if pe.returncode is None]
        if not running:
            return
        asked = self.ask_for_stacks()
        deadline = time.monotonic() + STACK_WAIT

        def printed(pe):  # or will not: a stopped PE prints nothing
            return (
                pe.returncode is not None
                or is_stopped(pe.pid)
                or (pe.stack and time.monotonic() - pe.last_stderr >= STACK_QUIET)
            )

        while (
            time.monotonic() < deadline
            and len(self.signals) <= self.handled_signals
            and not all(printed(pe) for pe in asked)
        ):
            time.sleep(STACK_POLL)
        lines = [WHERE_TITLE]
        for pe in running:
            if pe.returncode is None and is_stopped(pe.pid):
                lines.append(stopped_line(pe.rank, pe.pid))
                continue
            if pe in asked and pe.stack:
                where = innermost_frame(pe.stack)
            elif pe.returncode is not None:
                where = "exited before it printed a stack"
            elif pe not in asked:
                where = "cannot print its stack (it has not imported symmem)"
            else:
                where = "printed no stack within %g s" % STACK_WAIT
            lines.append("\tPE %d (pid %d): %s" % (pe.rank, pe.pid, where))
        self.message("\n".join(lines))
