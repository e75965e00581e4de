"""One rank of the NCCL side of the benchmarks: the collectives through
torch.distributed, timed with CUDA events on the stream NCCL runs after, as
nccl-tests does (torch_timing.py). Started by symmem's launcher (its rank variables) with a
file rendezvous; rank 0 prints one JSON record per line.

    python -m symmem.run -n 2 -m symmem.bench.nccl_worker --ops reduce --store FILE
"""

import json
import time

import torch
import torch.distributed as dist

from symmem.bench import plan
from symmem.bench.torch_timing import best_of, best_of_graph, join


def main():
    args, rank, n, t0 = join()
    warm = torch.ones(1, device="cuda")
    dist.all_reduce(warm)  # NCCL connects on first use: part of its start-up
    torch.cuda.synchronize()
    if rank == 0:
        print(
            json.dumps(dict(lib="nccl", op="init", seconds=time.perf_counter() - t0, n_pes=n)),
            flush=True,
        )
    for op in args.ops.split(","):
        if op not in plan.NCCL_OPS:
            continue
        for size in plan.sizes(op, args.min_bytes, args.max_bytes, n):
            for graph in (False, True) if args.graph else (False,):
                us = time_op(op, size, n, rank, graph, args.iters)
                if rank == 0:
                    print(
                        json.dumps(
                            dict(lib="nccl (graph)" if graph else "nccl", op=op, bytes=size, us=us)
                        ),
                        flush=True,
                    )
    dist.barrier()
    dist.destroy_process_group()


def time_op(op, nbytes, n, rank, graph=False, fixed=None):
    count, block = nbytes // 4, nbytes // 4 // n
    src = torch.full((count,), rank + 1.0, device="cuda")
    small = torch.full((block,), rank + 1.0, device="cuda")
    dst = torch.zeros(count, device="cuda")
    body = {
        "reduce": lambda: dist.all_reduce(dst),
        "reducescatter": lambda: dist.reduce_scatter_tensor(small, src),
        "broadcast": lambda: dist.broadcast(dst, 0),
        "fcollect": lambda: dist.all_gather_into_tensor(dst, small),
        "alltoall": lambda: dist.all_to_all_single(dst, src),
    }[op]
    return (best_of_graph if graph else best_of)(body, plan.iterations(nbytes, fixed))


if __name__ == "__main__":
    main()
