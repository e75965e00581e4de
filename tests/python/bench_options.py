"""What the tests of python -m symmem.bench share (test_bench*.py): its
options as its parser reads them, and whether mpi4py is here to compare
with."""

import importlib.util

HAVE_MPI = importlib.util.find_spec("mpi4py") is not None


def _parse(*argv):
    from symmem.bench.__main__ import parse_args

    return parse_args(list(argv))
