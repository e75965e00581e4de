"""One rank of the MPI side of the cpu-backend benchmarks: what a user would
otherwise write with mpi4py between processes of one machine. The ping-pong
is Send/Recv, the collectives MPI's on private NumPy buffers, timed on the
host clock like symmem's. Started by mpirun; rank 0 prints one JSON record
per line.

    mpirun -np 2 python -m symmem.bench.mpi_worker --ops put_signal,reduce,barrier
"""
import json
import time

import numpy as np

from symmem.bench import plan

# What MPI does for each operation of the plan; put, get, their latencies
# and call_cost are one-sided and have no two-sided counterpart here.
MPI_OPS = ("put_signal", "reduce", "reducescatter", "broadcast", "fcollect", "alltoall",
           "barrier")


def body(comm, op, nbytes):
    """The call to time for op at nbytes, on buffers made here."""
    from mpi4py import MPI
    rank, n = comm.Get_rank(), comm.Get_size()
    if op == "put_signal":  # half of this round trip is the one-way time
        data, back = np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)
        if rank == 0:
            return lambda: (comm.Send(data, 1), comm.Recv(back, 1))
        if rank == 1:
            return lambda: (comm.Recv(back, 0), comm.Send(data, 0))
        return lambda: None
    count, block = nbytes // 4, nbytes // 4 // n
    src, dst = np.full(count, rank + 1.0, np.float32), np.zeros(count, np.float32)
    small = np.full(block, rank + 1.0, np.float32)
    return {
        "reduce": lambda: comm.Allreduce(src, dst, MPI.SUM),
        "reducescatter": lambda: comm.Reduce_scatter_block(src, small, MPI.SUM),
        "broadcast": lambda: comm.Bcast(dst if rank else src, 0),
        "fcollect": lambda: comm.Allgather(small, dst),
        "alltoall": lambda: comm.Alltoall(src, dst),
        "barrier": comm.Barrier,
    }[op]


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
            print(json.dumps(dict(lib="mpi", **record)), flush=True)

    emit(op="init", seconds=time.perf_counter() - t0, n_pes=n)
    for op in args.ops.split(","):
        if op not in MPI_OPS or (op == "put_signal" and n < 2):
            continue
        for size in plan.sizes(op, args.min_bytes, args.max_bytes, n):
            seconds = plan.best_seconds(plan.iterations(size), body(comm, op, size),
                                        comm.Barrier)
            if op == "put_signal":
                seconds /= 2
            emit(op=op, bytes=size, us=seconds * 1e6)
    comm.Barrier()


if __name__ == "__main__":
    main()
