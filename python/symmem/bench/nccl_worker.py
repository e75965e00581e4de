"""One rank of the NCCL side of the benchmarks: the collectives through
torch.distributed, timed with CUDA events on the stream NCCL runs after, as
nccl-tests does. Started by symmem's launcher (its rank variables) with a
file rendezvous; rank 0 prints one JSON record per line.

    python -m symmem.run -n 2 -m symmem.bench.nccl_worker --ops reduce --store FILE
"""

import json
import os
import time

import torch
import torch.distributed as dist

from symmem.bench import plan


def join():
    """The sweep's options (with --store), and this rank joined to the NCCL
    process group on its GPU: (args, rank, n, perf_counter before joining)."""
    parser = plan.sweep_parser()
    parser.add_argument("--store", required=True, help="a file path for the rendezvous")
    args = parser.parse_args()
    rank, n = int(os.environ["SYMMEM_RANK"]), int(os.environ["SYMMEM_NRANKS"])
    local = int(os.environ.get("SYMMEM_LOCAL_RANK", rank))
    torch.cuda.set_device(local % torch.cuda.device_count())
    t0 = time.perf_counter()
    dist.init_process_group(
        "nccl",
        init_method=f"file://{args.store}",
        rank=rank,
        world_size=n,
        device_id=torch.device("cuda", torch.cuda.current_device()),
    )
    return args, rank, n, t0


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
                us = time_op(op, size, n, rank, graph)
                if rank == 0:
                    print(
                        json.dumps(
                            dict(lib="nccl (graph)" if graph else "nccl", op=op, bytes=size, us=us)
                        ),
                        flush=True,
                    )
    dist.barrier()
    dist.destroy_process_group()


def time_op(op, nbytes, n, rank, graph=False):
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
    return (best_of_graph if graph else best_of)(body, plan.iterations(nbytes))


def best_of(body, iters):
    """Microseconds a call of body takes, back to back on the current stream:
    the best of plan.REPEATS timed runs of iters calls, after a warm-up."""
    for _ in range(min(iters, 5)):
        body()

    def run():
        for _ in range(iters):
            body()

    return _fastest(run, iters)


def best_of_graph(body, iters):
    """Microseconds a call of body takes replayed from a CUDA graph of up to
    plan.GRAPH_CALLS calls: the best of plan.REPEATS timed runs."""
    body()  # warm up outside the capture
    torch.cuda.synchronize()
    graph, calls = torch.cuda.CUDAGraph(), min(iters, plan.GRAPH_CALLS)
    with torch.cuda.graph(graph):
        for _ in range(calls):
            body()
    graph.replay()
    replays = plan.graph_replays(iters)

    def run():
        for _ in range(replays):
            graph.replay()

    return _fastest(run, replays * calls)


def _fastest(run, calls):
    """Microseconds per call: the best of plan.REPEATS timed run()s of calls
    calls each, every rank starting together."""
    best = float("inf")
    for _ in range(plan.REPEATS):
        torch.cuda.synchronize()
        dist.barrier()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        run()
        end.record()
        end.synchronize()
        best = min(best, begin.elapsed_time(end) * 1e3 / calls)
    return best


if __name__ == "__main__":
    main()
