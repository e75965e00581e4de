"""Starts the gpu backend the way argv[1] says and checks a put ring.

    python -m symmem.run -n 2 tests/gpu/startup.py launcher
    mpirun -np 2 python tests/gpu/startup.py mpi          (or emulated_mpi)
    torchrun --nproc-per-node 2 tests/gpu/startup.py torchrun
    python tests/gpu/startup.py uid <rank> <nranks> <uid file>
    mpirun -np 2 python tests/gpu/startup.py mpirun       (plain init under mpirun)

With SYMMEM_ONE_HOST_PER_PE=1 each PE counts as on a host of its own: init
hands NVSHMEM's id over the launcher's rendezvous (torchrun's TCPStore, MPI).

With uid, rank 0 makes the id (NVSHMEM's id names a socket of the process
that made it) and hands it to the others through the file.
"""
import os
import pickle
import sys
import time

import cupy as cp

import symmem as nvshmem
from symmem import _symmem

method = sys.argv[1]
if method in ("mpi", "emulated_mpi"):
    from mpi4py import MPI
    nvshmem.init(mpi_comm=MPI.COMM_WORLD, initializer_method=method)
elif method == "uid":
    rank, nranks, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if rank == 0:
        with open(path + ".tmp", "wb") as f:
            pickle.dump(nvshmem.get_unique_id(), f)
        os.rename(path + ".tmp", path)
    while not os.path.exists(path):
        time.sleep(0.01)
    with open(path, "rb") as f:
        uid = pickle.load(f)
    nvshmem.init(uid=uid, rank=rank, nranks=nranks, initializer_method="uid")
else:
    nvshmem.init()

me, n = nvshmem.my_pe(), nvshmem.n_pes()
assert nvshmem.get_version().backend == "gpu"
a = nvshmem.array((256,), dtype="int32")
b = nvshmem.array((256,), dtype="int32")
a[:] = me
b[:] = -1
nvshmem.barrier_all()
nvshmem.put(b, a, (me + 1) % n)
nvshmem.barrier_all()
assert bool((b == (me - 1) % n).all()), f"PE {me} got {b[:4]}"
device = cp.cuda.runtime.getDevice()
nvshmem.free_array(a)
nvshmem.free_array(b)
nvshmem.finalize()
spans = _symmem.launcher()["spans_hosts"] if method != "uid" else ""
print(f"PE {me} of {n} OK via {method} on cuda:{device} (hosts: {spans or 'one'})")
