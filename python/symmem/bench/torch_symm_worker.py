"""One rank of PyTorch SymmetricMemory's side of the benchmarks: its one-shot
and two-shot all-reduce kernels (torch.ops.symm_mem) on a symmetric tensor,
timed with CUDA events like nccl_worker.py; rank 0 prints one JSON record
per line, as "torch symm-mem one-shot" and "torch symm-mem two-shot".

    python -m symmem.run -n 2 -m symmem.bench.torch_symm_worker --ops reduce --store FILE
"""

import json
import time

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

from symmem.bench import plan
from symmem.bench.nccl_worker import best_of, best_of_graph, join


def main():
    args, rank, n, t0 = join()
    group = dist.group.WORLD.group_name
    if rank == 0:
        print(
            json.dumps(
                dict(
                    lib="torch symm-mem one-shot",
                    op="init",
                    seconds=time.perf_counter() - t0,
                    n_pes=n,
                )
            ),
            flush=True,
        )
    if "reduce" in args.ops.split(","):
        for size in plan.sizes("reduce", args.min_bytes, args.max_bytes, n):
            buf = symm_mem.empty(size // 4, device="cuda", dtype=torch.float32)
            symm_mem.rendezvous(buf, group)
            buf.fill_(rank + 1.0)
            one = lambda buf=buf: torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", group)  # noqa: E731
            two = lambda buf=buf: torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", group)  # noqa: E731
            for name, body in (("one-shot", one), ("two-shot", two)):
                for graph in (False, True) if args.graph else (False,):
                    us = (best_of_graph if graph else best_of)(body, plan.iterations(size))
                    if rank == 0:
                        print(
                            json.dumps(
                                dict(
                                    lib=f"torch symm-mem {name}" + (" (graph)" if graph else ""),
                                    op="reduce",
                                    bytes=size,
                                    us=us,
                                )
                            ),
                            flush=True,
                        )
            del buf
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
