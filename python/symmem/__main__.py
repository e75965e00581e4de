"""python -m symmem [info | --version | --help]: the dispatcher; each
command lives in a module of its own (info: symmem/_info.py)."""

import argparse
import os
import sys

from symmem import _info, _symmem

PROG = "python -m symmem"
COMMANDS = {
    "info": (
        _info.info,
        "(the default) what symmem finds on this machine: the backend init would "
        "choose here (SYMMEM_BACKEND=auto: gpu or cpu) and why, the libraries it loads "
        "(the gpu backend, the CUDA driver, libnvshmem) with paths and versions, the "
        "versions of NumPy, CuPy, torch, mpi4py, numba, numba-cuda and triton, and "
        "every environment variable symmem reads",
    ),
}
EPILOG = """\
other entry points:
  python -m symmem.run -n N prog.py   start N PEs on this host (--help: its options)
  python -m symmem.bench              symmem beside NCCL, NVSHMEM, NumPy and MPI (--help)
"""


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG,
        usage="%(prog)s [-h] [--version] [info]",
        description="symmem: symmetric memory for Python on CPUs and GPUs.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"symmem {_symmem.VERSION}",
        help="print symmem's version and exit",
    )
    commands = parser.add_subparsers(dest="command", title="commands", metavar="{info}")
    for name, (_, help_text) in COMMANDS.items():
        commands.add_parser(name, help=help_text, description=help_text)
    return parser


def main(argv):
    args = build_parser().parse_args(argv)  # usage and exit 2 on a bad argument
    run, _ = COMMANDS[args.command or "info"]
    try:
        return run()
    except BrokenPipeError:  # python -m symmem info | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
