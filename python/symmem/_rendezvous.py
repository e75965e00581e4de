"""PE 0's unique id handed to every PE of a job, over a rendezvous the job
already has: an MPI communicator (initializer_method="mpi", and mpirun's or
srun's jobs that span hosts) or torchrun's TCPStore (MASTER_ADDR,
MASTER_PORT). The gpu backend's own rendezvous, a file in /dev/shm, reaches
one host only; init comes here when the launcher's PEs span hosts."""

import itertools
import os
import time
from datetime import timedelta

from symmem import _symmem
from symmem._errors import exception, invalid

INIT_TIMEOUT_SECONDS = 120.0  # as the C library's start-up waits
# Each init of a job hands over a new id under a key of its own: init is
# collective, so the k-th init of every PE meets the others' k-th (a PE
# reading the key of an earlier init would join a bootstrap long gone).
_store_rounds = itertools.count()


def _failed(message):
    return exception(_symmem.ERR_BOOTSTRAP, message)


def uid_over_mpi(make_uid, mpi_comm=None, expect=None):
    """(uid bytes, rank, size): rank 0 of the communicator (default
    COMM_WORLD) calls make_uid() and broadcasts it. expect: the launcher's
    (rank, nranks), which the communicator must agree with."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise invalid(
            f"init: handing the unique id over MPI needs mpi4py ({error}); pip install symmem[mpi]"
        ) from None
    comm = mpi_comm if mpi_comm is not None else MPI.COMM_WORLD
    if not hasattr(comm, "Bcast"):
        raise invalid(f"init: mpi_comm of type {type(comm).__name__} is not an mpi4py communicator")
    rank, size = comm.Get_rank(), comm.Get_size()
    if expect is not None and (rank, size) != expect:
        raise _failed(
            f"init: MPI's COMM_WORLD numbers this process {rank} of {size}, "
            f"but the launcher's variables say {expect[0]} of {expect[1]}; "
            f"run under the MPI that mpi4py was built with"
        )
    uid = bytearray(make_uid() if rank == 0 else bytes(_symmem.UNIQUE_ID_SIZE))
    comm.Bcast(uid, root=0)
    return bytes(uid), rank, size


def mpi_comm_handle(mpi_comm=None):
    """(handle, rank, size) of an mpi4py communicator (default COMM_WORLD),
    for the mpi backend, which runs on the communicator itself."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise invalid(
            f"init: initializer_method='mpi' needs mpi4py ({error}); pip install symmem[mpi]"
        ) from None
    comm = mpi_comm if mpi_comm is not None else MPI.COMM_WORLD
    if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL:
        raise invalid(f"init: mpi_comm of type {type(comm).__name__} is not an mpi4py communicator")
    return MPI._handleof(comm), comm.Get_rank(), comm.Get_size()


def _uid_through_store(host, port, serve, key, make_uid, job, deadline):
    """One try: the id under key (PE 0 puts it there), and how many PEs have read it."""
    from torch.distributed import TCPStore  # imported already by the caller

    store = TCPStore(
        host,
        int(port),
        is_master=serve,
        timeout=timedelta(seconds=max(1.0, deadline - time.monotonic())),
        wait_for_workers=False,
    )
    if job["rank"] == 0:
        store.set(key, make_uid())
    uid = bytes(store.get(key))
    read = store.add(f"{key}/read", 1)
    while serve and read < job["nranks"] and time.monotonic() < deadline:
        time.sleep(0.01)  # the others still need the store this PE serves
        read = store.add(f"{key}/read", 0)
    return uid, read


def _uid_over_torch_store(make_uid, job, timeout):
    try:
        import torch.distributed  # noqa: F401
    except ImportError as error:
        raise _failed(
            f"init: this torchrun job spans hosts ({job['spans_hosts']}); "
            f"handing NVSHMEM's unique id over torchrun's TCPStore needs torch "
            f"({error})"
        ) from None
    host, port = os.environ.get("MASTER_ADDR", ""), os.environ.get("MASTER_PORT", "")
    if not host or not port.isdigit():
        raise _failed(
            f"init: this torchrun job spans hosts ({job['spans_hosts']}), but "
            f"MASTER_ADDR={host!r} and MASTER_PORT={port!r} name no TCPStore"
        )
    # torchrun's agent serves a store there; without it, PE 0 serves one
    # until every PE has read the id, as torch's env:// init would
    serve = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True" and job["rank"] == 0
    key = f"symmem/{job['job']}/uid/{next(_store_rounds)}"
    deadline = time.monotonic() + timeout
    while True:
        try:
            uid, read = _uid_through_store(host, port, serve, key, make_uid, job, deadline)
            break
        except (RuntimeError, OSError) as error:  # torch's DistStoreError is a RuntimeError
            # A PE that does not serve may have reached the store an earlier
            # init's PE 0 served, as it closed: the next try reaches this one's.
            if serve or time.monotonic() > deadline:
                raise _failed(
                    f"init: handing NVSHMEM's unique id over torchrun's TCPStore at "
                    f"{host}:{port} failed: {error}"
                ) from None
            time.sleep(0.1)
    if read < job["nranks"] and serve:
        raise _failed(
            f"init: {job['nranks'] - read} PEs never read the unique id from the "
            f"TCPStore this PE serves at {host}:{port}"
        )
    return uid


def uid_across_hosts(make_uid, job):
    """The unique id for a job whose PEs span hosts (job: _symmem.launcher())."""
    timeout = float(_symmem.env("SYMMEM_TIMEOUT")) or INIT_TIMEOUT_SECONDS
    if job["launcher"] == "torchrun":
        return _uid_over_torch_store(make_uid, job, timeout)
    if job["launcher"] in ("mpirun", "srun", "pmi"):
        return uid_over_mpi(make_uid, expect=(job["rank"], job["nranks"]))[0]
    raise _failed(
        f"init: this job's PEs span hosts ({job['spans_hosts']}), and symmem "
        f"hands NVSHMEM's unique id across hosts over torchrun's store or MPI "
        f"(mpirun, srun); start it with one of those, or pass "
        f"initializer_method='uid' with an id you hand over yourself"
    )


__all__ = []
