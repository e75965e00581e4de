"""What a PE started by ``python -m symmem.run`` does when it imports symmem.

The extension has already tied the PE's life to the launcher's (it dies with
it). Here the PE lets the launcher see where it is: SIGUSR1 prints the stacks
of all its Python threads on stderr (faulthandler, so even a PE blocked in C
code answers), and a file ``stacks.<pid>`` in the launcher's status folder
says that this PE will answer. The launcher sends SIGUSR1 before it stops a
PE: on ``--timeout``, and to PEs still running after Ctrl-C or SIGTERM.
"""

import faulthandler
import os
import signal
import sys

from symmem import _symmem

STACK_SIGNAL = signal.SIGUSR1


def launcher_pid():
    """The pid of the symmem.run that started this process, or None."""
    pid = _symmem.env("SYMMEM_LAUNCHER").partition(":")[0]
    return int(pid) if pid.isdigit() else None


def setup():
    # Only the launcher's own children: a process a PE starts inherits the
    # environment but is no PE, and keeps SIGUSR1's usual meaning.
    if launcher_pid() is None or launcher_pid() != os.getppid():
        return
    try:
        faulthandler.register(STACK_SIGNAL, file=sys.stderr, all_threads=True)
    except (AttributeError, ValueError, OSError, RuntimeError):
        return  # no usable stderr: the launcher will report "no stack"
    status_dir = _symmem.env("SYMMEM_STATUS_DIR")
    if status_dir:
        try:
            open(os.path.join(status_dir, "stacks.%d" % os.getpid()), "w").close()
        except OSError:
            pass
