"""The launcher's command line: its options (-n and the other names of it,
--backend, --timeout, --grace, --no-prefix), where the program starts in
argv (split_argv: the program's own options are not the launcher's), the
command each PE runs (child_command), and the PE count: at most what init
accepts (MAX_PES), with a word when it is far beyond this host's cores
(far_beyond).

Standard library only, like run.py, which imports it.
"""

import argparse
import glob
import os
import re
import sys

PROG = "python -m symmem.run"
SCRIPT = "symmem-run"  # the console script (pyproject.toml's [project.scripts])

EXIT_USAGE = 2

# -n's names: ours, mpirun's and torchrun's (both spellings).
NPES_OPTIONS = ("-n", "--npes", "-np", "--nproc-per-node", "--nproc_per_node")
# Launcher options that take a value: the next word is theirs, not the program.
OPTIONS_WITH_VALUE = NPES_OPTIONS + ("--backend", "--timeout", "--grace")


# The most PEs init accepts (SYMMEM_MAX_PES, src/core/bootstrap.h; a test
# checks the two agree): a larger -n is refused before any PE starts.
MAX_PES = 1 << 20
# Far beyond the host: more PEs than this for each core. Every PE is a process
# of its own, which takes turns on the cores with the others (waits spin, then
# sleep), so a few a core still work, as the tests' 4 PEs on 2 cores do; this
# many a core measure time slicing, not the program.
FAR_PER_CORE = 16


def host_cores():
    """The cores this process may run on (taskset, cgroups' cpusets)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def host_gpus():
    """The NVIDIA GPUs the driver lists here (no CUDA call: none is loaded)."""
    listed = glob.glob("/proc/driver/nvidia/gpus/*")
    if listed:
        return len(listed)
    return sum(1 for p in glob.glob("/dev/nvidia*") if re.fullmatch(r"/dev/nvidia\d+", p))


def host_words(cores, gpus):
    return "%d core%s and %d GPU%s" % (
        cores,
        "" if cores == 1 else "s",
        gpus,
        "" if gpus == 1 else "s",
    )


def far_beyond(npes, cores, gpus):
    """What to say when npes is far beyond cores (more than FAR_PER_CORE a
    core), else None."""
    if npes <= FAR_PER_CORE * cores:
        return None
    return (
        "%d PEs is far beyond this host's %s (far: more than %d PEs a core); every "
        "PE is a process of its own, and they take turns on the cores (on the gpu "
        "backend each needs a GPU of its own)" % (npes, host_words(cores, gpus), FAR_PER_CORE)
    )


# argparse names a converter's function in its errors ("invalid _positive_int
# value"): these raise ArgumentTypeError, whose text it prints as it is,
# after the option's name.


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 1:
        raise argparse.ArgumentTypeError("N must be a whole number >= 1, got %r" % text)
    return value


def _pe_count(text):
    value = _positive_int(text)
    if value > MAX_PES:
        raise argparse.ArgumentTypeError(
            "N=%d is more than init accepts (at most %d PEs; this host has %s)"
            % (value, MAX_PES, host_words(host_cores(), host_gpus()))
        )
    return value


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not value >= 0:  # also rejects nan
        raise argparse.ArgumentTypeError("S must be a number of seconds >= 0, got %r" % text)
    return value


def build_parser(prog=PROG):
    parser = argparse.ArgumentParser(
        prog=prog,
        usage="%(prog)s [-n N] [--backend {cpu,gpu,mpi,auto}] [--timeout S] "
        "[--grace S] [--no-prefix]\n"
        "       (script.py | -m module | -c code) [args ...]",
        description="Start N symmem PEs on this host. Launcher options must "
        "come before the program; everything after it is passed "
        "to the program.",
        epilog="Each PE gets SYMMEM_RANK, SYMMEM_NRANKS, SYMMEM_LOCAL_RANK "
        "and SYMMEM_JOB (python -m symmem info lists them all), and "
        "the same numbers as RANK, LOCAL_RANK, WORLD_SIZE and "
        "LOCAL_WORLD_SIZE for code that reads those.",
    )
    parser.add_argument(
        *NPES_OPTIONS,
        dest="npes",
        type=_pe_count,
        default=1,
        metavar="N",
        help="number of PEs to start (default 1, at most %d); -np and --nproc-per-node "
        "are other names for it" % MAX_PES,
    )
    parser.add_argument(
        "--backend",
        choices=("cpu", "gpu", "mpi", "auto"),
        help="exported to the PEs as SYMMEM_BACKEND (mpi: the PEs are started through mpirun)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="S",
        help="wall-clock limit for the whole job; when it is "
        "exceeded all PEs are killed and the exit code "
        "is 124",
    )
    parser.add_argument(
        "--grace",
        type=_seconds,
        default=5.0,
        metavar="S",
        help="after the first failure, seconds the other PEs "
        "get to exit by themselves before they are "
        "terminated (default 5)",
    )
    parser.add_argument(
        "--no-prefix", action="store_true", help="do not prefix output lines with [pe K]"
    )
    return parser


def split_argv(argv):
    """Split argv into (launcher options, program words).

    The program starts at -m/-c, at the first word that is not an option, or
    after "--". argparse cannot do this split itself: the program's own
    options (``script.py -n 3``) must not be taken as the launcher's.
    """
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return argv[:i], argv[i + 1 :]
        if word in ("-m", "-c"):
            return argv[:i], argv[i:]
        if word[:2] in ("-m", "-c") and len(word) > 2:  # -mpkg.mod, -cCODE
            return argv[:i], [word[:2], word[2:]] + argv[i + 1 :]
        if word in OPTIONS_WITH_VALUE:
            i += 2
        elif word.startswith("-") and word != "-":
            i += 1  # a flag, --opt=value or -nN; argparse judges it
        else:
            return argv[:i], argv[i:]
    return argv, []


def parse_args(argv, prog=PROG):
    """Parse argv; returns the options with .program = [kind, target, args]."""
    parser = build_parser(prog)
    own, program = split_argv(argv)
    args = parser.parse_args(own)
    if not program:
        parser.error("no program given: expected script.py, -m module or -c code")
    if program[0] in ("-m", "-c"):
        if len(program) < 2:
            parser.error(
                "argument %s: expected %s"
                % (program[0], "a module name" if program[0] == "-m" else "code")
            )
        kind = "module" if program[0] == "-m" else "code"
        args.program = [kind, program[1], program[2:]]
    else:
        if not os.path.isfile(program[0]):
            parser.error("no such program file: %r" % program[0])
        kind = "executable" if is_native_executable(program[0]) else "script"
        args.program = [kind, program[0], program[1:]]
    return args


def is_native_executable(path):
    """A compiled program (a C test or example) rather than a Python script."""
    if not os.access(path, os.X_OK):
        return False
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def child_command(program):
    kind, target, prog_args = program
    if kind == "executable":
        return [os.path.abspath(target)] + list(prog_args)
    flag = {"script": [], "module": ["-m"], "code": ["-c"]}[kind]
    return [sys.executable] + flag + [target] + list(prog_args)
