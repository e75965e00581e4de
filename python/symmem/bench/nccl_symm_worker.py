"""One rank of "nccl symmetric": NCCL's symmetric kernels through nccl4py.
A communicator of its own (nccl.core.Communicator; rank 0's unique id
passed in a file), three buffers of ncclMemAlloc'd memory
(nccl.core.torch.empty) registered as symmetric windows
(register_window(..., flags=WindowFlag.CollSymmetric)) at the sweep's
largest size, and the all-reduce, reduce-scatter and all-gather between
their starts, out of place, on torch's current stream, timed as the other
torch workers are (torch_timing.py). Each size's first call is profiled
and its data checked; each record is labelled by the kernels that ran
(nccl_kernels.py). Rank 0 prints one JSON record per line.

    python -m symmem.run -n 2 -m symmem.bench.nccl_symm_worker --ops reduce --store FILE
"""

import os
import time

import nccl.core as nccl
import torch

from symmem.bench import nccl_kernels, plan
from symmem.bench.nccl_libraries import SYMMETRIC_OPS
from symmem.bench.torch_timing import rank_and_device, worker_parser

LABEL = "nccl symmetric"
ID_TIMEOUT = 120.0  # seconds a rank waits for rank 0's unique id


def unique_id(store, rank):
    """The communicator's unique id: rank 0 makes it and writes it to the
    file store (renamed into place whole); the other ranks wait for it."""
    if rank == 0:
        made = nccl.get_unique_id()
        with open(store + ".part", "wb") as f:
            f.write(bytes(made))
        os.replace(store + ".part", store)
        return made
    deadline = time.monotonic() + ID_TIMEOUT
    while not os.path.exists(store):
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"nccl_symm_worker: rank {rank}: no unique id from rank 0 in {store} "
                f"after {ID_TIMEOUT:.0f} s"
            )
        time.sleep(0.01)
    with open(store, "rb") as f:
        return nccl.UniqueId.from_bytes(f.read())


def stream():
    """torch's current stream (a graph's capture stream while capturing)."""
    return torch.cuda.current_stream().cuda_stream


class Windows:
    """src and dst of count float32, small of block, ncclMemAlloc'd and
    each registered on comm as a symmetric window (a collective call)."""

    def __init__(self, comm, count, block):
        self.src, self.dst, self.small = (
            nccl.torch.empty(k, dtype=torch.float32, device=torch.cuda.current_device())
            for k in (count, count, block)
        )
        flag = nccl.WindowFlag.CollSymmetric
        self.windows = [
            comm.register_window(t, flags=flag) for t in (self.src, self.dst, self.small)
        ]

    def close(self):
        """Deregisters the windows, once no call uses them."""
        torch.cuda.synchronize()
        for window in self.windows:
            window.close()


def call(op, comm, windows, count, n, rank):
    """(body, check): one call of op on count float32 at the windows'
    starts, and the check of the data its first call leaves."""
    block = count // n
    src, dst, small = windows.src[:count], windows.dst[:count], windows.small[:block]
    (small if op == "fcollect" else src).fill_(rank + 1.0)
    body, got = {
        "reduce": (lambda: comm.allreduce(src, dst, nccl.SUM, stream=stream()), dst),
        "reducescatter": (
            lambda: comm.reduce_scatter(src, small, nccl.SUM, stream=stream()),
            small,
        ),
        "fcollect": (lambda: comm.allgather(small, dst, stream=stream()), dst),
    }[op]
    want = nccl_kernels.expected(op, n, block)
    return body, lambda: nccl_kernels.check_data(
        f"{LABEL} {op} of {4 * count} bytes", rank, got, want
    )


def main():
    args = worker_parser().parse_args()
    rank, n = rank_and_device()
    emit = plan.emitter(rank)
    t0 = time.perf_counter()
    comm = nccl.Communicator.init(nranks=n, rank=rank, unique_id=unique_id(args.store, rank))
    flag = torch.zeros(1, device="cuda")

    def line_up():
        """Every rank here together: an all-reduce of one zero, waited for."""
        torch.cuda.synchronize()
        comm.allreduce(flag, flag, nccl.SUM, stream=stream())
        torch.cuda.synchronize()

    line_up()  # NCCL connects on first use: part of its start-up
    emit(lib=LABEL, op="init", seconds=time.perf_counter() - t0, n_pes=n)
    ops = [op for op in args.ops.split(",") if op in SYMMETRIC_OPS]
    sizes = {op: plan.sizes(op, args.min_bytes, args.max_bytes, n) for op in ops}
    if ops:
        top = max(max(each) for each in sizes.values()) // 4
        windows = Windows(comm, top, top // n)
        for op in ops:
            for size in sizes[op]:
                body, check = call(op, comm, windows, size // 4, n, rank)
                nccl_kernels.measure(
                    emit, LABEL, op, size, body, check, line_up, args.graph, args.iters
                )
        windows.close()
    line_up()
    comm.destroy()


if __name__ == "__main__":
    main()
