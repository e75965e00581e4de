"""init through a unique id handed over a file, as a program started by no
launcher does: rank 0 makes the id (NVSHMEM's id names a socket of the
process that made it) and writes it; the others wait for it. Each init of
the process has a file of its own (path.<k> for the k-th), so that a
second init never reads the first one's id."""

import itertools
import os
import pickle
import time

import symmem as nvshmem

_rounds = itertools.count()


def init_from_file(rank, nranks, path, **init_args):
    path = f"{path}.{next(_rounds)}"
    if rank == 0:
        with open(path + ".tmp", "wb") as f:
            pickle.dump(nvshmem.get_unique_id(), f)
        os.rename(path + ".tmp", path)
    while not os.path.exists(path):
        time.sleep(0.01)
    with open(path, "rb") as f:
        uid = pickle.load(f)
    nvshmem.init(uid=uid, rank=rank, nranks=nranks, initializer_method="uid", **init_args)
