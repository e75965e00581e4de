"""One PE of a gpu-suite script in a job that no launcher started: the PEs
meet through a unique id handed over a file (uid_init.py), which is what
the script's own symmem.init() does here. test_gpu.py's
SYMMEM_TEST_LAUNCHER=uid starts one process per PE:

    python tests/gpu/uid_launch.py <rank> <n> <file> <script> [args]

It sets LOCAL_RANK to the rank: the GPU the PE takes, as symmem's init and
the scripts (through _symmem.launcher()) read it."""

import os
import runpy
import sys

os.environ["LOCAL_RANK"] = sys.argv[1]  # before symmem reads its environment
import symmem  # noqa: E402
import symmem.core  # noqa: E402
from uid_init import init_from_file  # noqa: E402

my_rank, my_nranks, path, script = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
plain_init = symmem.init


def init(device=None, uid=None, initializer_method="", **others):
    """A plain init() meets the other PEs through the file; any other goes on as asked."""
    if uid is not None or initializer_method not in ("", "auto", None):
        return plain_init(device=device, uid=uid, initializer_method=initializer_method, **others)
    return init_from_file(my_rank, my_nranks, path, device=device, **others)


symmem.init = symmem.core.init = init
sys.argv = [script, *sys.argv[5:]]
runpy.run_path(script, run_name="__main__")
