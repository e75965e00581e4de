"""One rank of the MPI side of the cpu-backend benchmarks: what a user would
otherwise write with mpi4py between processes of one machine. put is MPI's
one-sided Put into a window, the ping-pong Send/Recv, the collectives MPI's
on private NumPy buffers, all timed on the host clock like symmem's.
Started by mpirun; rank 0 prints one JSON record per line.

    mpirun -np 2 python -m symmem.bench.mpi_worker --ops put,put_signal,reduce,barrier
"""

import json
import time

import numpy as np

from symmem.bench import plan

LABEL = "mpi4py"  # the library's name in the records and the tables

# What MPI does for each operation of the plan; put_lat, get, get_lat and
# call_cost have no counterpart here.
MPI_OPS = (
    "put",
    "atomic",
    "put_signal",
    "reduce",
    "reducescatter",
    "broadcast",
    "fcollect",
    "alltoall",
    "barrier",
)


def put_window(comm, nbytes):
    """(body, done) for put: rank 0 puts nbytes into rank 1's part of a
    window, back to back, as symmem's put from PE 0 to PE 1.

    The window is MPI.Win.Allocate'd (MPI's memory, as symmem's heap is
    symmem's: Open MPI serves it from shared memory, osc/sm, on one machine)
    and every rank holds a passive-target epoch on it (Lock_all) for the
    whole sweep of calls. Each call is Put then Flush(1): the put completed
    at the target when the call returns, which is what symmem's put does on
    the cpu backend (a copy into the peer's memory). A fence epoch per put
    would add a barrier of every rank to each put (1.4x the time at 8 B on
    a 2-core machine); Flush_local (source reusable, data maybe not yet at
    the target) measured no faster than Flush on osc/sm and promises less."""
    from mpi4py import MPI

    rank, n = comm.Get_rank(), comm.Get_size()
    win = MPI.Win.Allocate(nbytes, 1, comm=comm)
    data, target = [np.ones(nbytes, np.uint8), MPI.BYTE], 1 % n
    win.Lock_all()
    body = (lambda: (win.Put(data, target), win.Flush(target))) if rank == 0 else (lambda: None)

    def done():
        win.Unlock_all()
        win.Free()

    return body, done


def atomic_window(comm):
    """(body, done) for atomic: rank 0's 8-byte Fetch_and_op (sum) on rank 1's
    part of a window, then Flush(1), as symmem's atomic_fetch_add returns
    the value it fetched; the same Lock_all epoch as put's."""
    from mpi4py import MPI

    rank, n = comm.Get_rank(), comm.Get_size()
    win = MPI.Win.Allocate(8, 8, comm=comm)
    one, fetched, target = np.ones(1, np.int64), np.zeros(1, np.int64), 1 % n
    origin, result = [one, MPI.INT64_T], [fetched, MPI.INT64_T]
    win.Lock_all()
    body = (
        (lambda: (win.Fetch_and_op(origin, result, target, 0, MPI.SUM), win.Flush(target)))
        if rank == 0
        else (lambda: None)
    )

    def done():
        win.Unlock_all()
        win.Free()

    return body, done


def body(comm, op, nbytes):
    """(the call to time for op at nbytes, on buffers made here; what to do
    once it is timed, or None). Each buffer is passed as [array, datatype],
    made once: mpi4py then does not work out the datatype from the array on
    every call (0.1 us of an 8-byte Put or Allreduce)."""
    from mpi4py import MPI

    rank, n = comm.Get_rank(), comm.Get_size()
    if op == "put":
        return put_window(comm, nbytes)
    if op == "atomic":
        return atomic_window(comm)
    if op == "put_signal":  # half of this round trip is the one-way time
        data, back = (
            [a, MPI.BYTE] for a in (np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8))
        )
        if rank == 0:
            return lambda: (comm.Send(data, 1), comm.Recv(back, 1)), None
        if rank == 1:
            return lambda: (comm.Recv(back, 0), comm.Send(data, 0)), None
        return lambda: None, None
    count, block = nbytes // 4, nbytes // 4 // n
    src, dst, small = (
        [a, MPI.FLOAT]
        for a in (
            np.full(count, rank + 1.0, np.float32),
            np.zeros(count, np.float32),
            np.full(block, rank + 1.0, np.float32),
        )
    )
    return {
        "reduce": lambda: comm.Allreduce(src, dst, MPI.SUM),
        "reducescatter": lambda: comm.Reduce_scatter_block(src, small, MPI.SUM),
        "broadcast": lambda: comm.Bcast(dst if rank else src, 0),
        "fcollect": lambda: comm.Allgather(small, dst),
        "alltoall": lambda: comm.Alltoall(src, dst),
        "barrier": comm.Barrier,
    }[op], None


def main():
    parser = plan.sweep_parser()
    args = parser.parse_args()
    t0 = time.perf_counter()
    from mpi4py import MPI  # the import starts MPI (MPI_Init): timed as its init

    comm = MPI.COMM_WORLD
    comm.Barrier()
    rank, n = comm.Get_rank(), comm.Get_size()

    def emit(**record):
        if rank == 0:
            print(json.dumps(dict(lib=LABEL, **record)), flush=True)

    emit(op="init", seconds=time.perf_counter() - t0, n_pes=n)
    for op in args.ops.split(","):
        if op not in MPI_OPS or (op == "put_signal" and n < 2):
            continue
        for size in plan.sizes(op, args.min_bytes, args.max_bytes, n):
            call, done = body(comm, op, size)
            seconds = plan.best_seconds(plan.iterations(size, args.iters), call, comm.Barrier)
            if done:
                done()
            if op == "put_signal":
                seconds /= 2
            emit(op=op, bytes=size, us=seconds * 1e6)
    comm.Barrier()


if __name__ == "__main__":
    main()
