"""One rank of PyTorch SymmetricMemory's side of the benchmarks, on one of
its backends (torch.distributed._symmetric_memory.set_backend), timed with
CUDA events like nccl_worker.py (torch_timing.py); rank 0 prints one JSON
record per line.

--backend CUDA ("torch symm-mem"): its one-shot and two-shot all-reduce
kernels (torch.ops.symm_mem) on a symmetric tensor, as "torch symm-mem
one-shot" and "torch symm-mem two-shot".

--backend NCCL ("torch symm-mem nccl"): symm_mem.empty allocates with
ncclMemAlloc and rendezvous registers the tensor as an NCCL symmetric
window (NCCL_WIN_COLL_SYMMETRIC), so torch.distributed's all-reduce,
reduce-scatter and all-gather on such tensors may run NCCL's symmetric
kernels: recorded as "torch symm-mem nccl", labelled by the kernels that ran
(nccl_kernels.py); and the one-shot and two-shot kernels on NCCL's windows,
as "torch symm-mem nccl one-shot" and "... two-shot", where this torch and
NCCL (2.28 on) run them.

    python -m symmem.run -n 2 -m symmem.bench.torch_symm_worker --ops reduce --store FILE
"""

import time

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

from symmem.bench import nccl_kernels, plan
from symmem.bench.nccl_libraries import SYMMETRIC_OPS
from symmem.bench.torch_timing import best_of, best_of_graph, join, worker_parser

NCCL_LABEL = "torch symm-mem nccl"


def main():
    parser = worker_parser()
    parser.add_argument("--backend", choices=("CUDA", "NCCL"), default="CUDA")
    args, rank, n, t0 = join(parser)
    emit = plan.emitter(rank)
    group = dist.group.WORLD.group_name
    if args.backend == "NCCL":
        symm_mem.set_backend("NCCL")  # before any symmetric tensor
        warm = torch.ones(1, device="cuda")
        dist.all_reduce(warm)  # NCCL's communicator up before the first rendezvous
        torch.cuda.synchronize()
        emit(lib=NCCL_LABEL, op="init", seconds=time.perf_counter() - t0, n_pes=n)
        on_nccl(args, rank, n, group, emit)
    else:
        emit(lib="torch symm-mem one-shot", op="init", seconds=time.perf_counter() - t0, n_pes=n)
        if "reduce" in args.ops.split(","):
            for size in plan.sizes("reduce", args.min_bytes, args.max_bytes, n):
                buf = symm_mem.empty(size // 4, device="cuda", dtype=torch.float32)
                symm_mem.rendezvous(buf, group)
                buf.fill_(rank + 1.0)
                for name, body in shots(buf, group).items():
                    timed(emit, f"torch symm-mem {name}", size, body, args.graph, args.iters)
                del buf
    dist.barrier()
    dist.destroy_process_group()


def shots(buf, group):
    """torch's one-shot (out of place) and two-shot (in place) all-reduce of buf."""
    return {
        "one-shot": lambda: torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", group),
        "two-shot": lambda: torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", group),
    }


def timed(emit, lib, size, body, graph, fixed=None):
    """Records body's time as lib (reduce), eager and with graph replayed
    (fixed calls a run where given)."""
    for replayed in (False, True) if graph else (False,):
        us = (best_of_graph if replayed else best_of)(body, plan.iterations(size, fixed))
        emit(lib=lib + (" (graph)" if replayed else ""), op="reduce", bytes=size, us=us)


def on_nccl(args, rank, n, group, emit):
    """The NCCL backend's measurements: torch.distributed's collectives on
    the slices at the start of three symmetric tensors of the sweep's
    largest size (registered once), then the one-shot and two-shot kernels."""
    ops = [op for op in args.ops.split(",") if op in SYMMETRIC_OPS]
    sizes = {op: plan.sizes(op, args.min_bytes, args.max_bytes, n) for op in ops}
    if not ops:
        return
    top = max(max(each) for each in sizes.values()) // 4
    big, dst, small = (symm_mem.empty(k, device="cuda") for k in (top, top, top // n))
    for tensor in (big, dst, small):
        symm_mem.rendezvous(tensor, group)
    for op in ops:
        for size in sizes[op]:
            count = size // 4
            block = count // n
            src, out, part = big[:count], dst[:count], small[:block]
            (part if op == "fcollect" else out if op == "reduce" else src).fill_(rank + 1.0)
            body, got = {
                "reduce": (lambda out=out: dist.all_reduce(out), out),
                "reducescatter": (lambda p=part, s=src: dist.reduce_scatter_tensor(p, s), part),
                "fcollect": (lambda o=out, p=part: dist.all_gather_into_tensor(o, p), out),
            }[op]
            want = nccl_kernels.expected(op, n, block)
            what = f"{NCCL_LABEL} {op} of {size} bytes"

            def check(got=got, want=want, what=what):
                nccl_kernels.check_data(what, rank, got, want)

            nccl_kernels.measure(
                emit, NCCL_LABEL, op, size, body, check, None, args.graph, args.iters
            )
    if "reduce" in ops:
        shots_on_nccl(args, rank, n, group, big, sizes["reduce"], emit)


def shots_on_nccl(args, rank, n, group, big, sizes, emit):
    """torch's one-shot and two-shot all-reduce on NCCL's windows, each
    checked on its first call and left out, saying why, where this torch
    or NCCL does not run it (NCCL gives peers' pointers from 2.28 on)."""
    for name in ("one-shot", "two-shot"):
        for size in sizes:
            buf = big[: size // 4]
            buf.fill_(rank + 1.0)
            body = shots(buf, group)[name]
            try:
                got = body()
                got = buf if got is None else got
            except Exception as error:  # this torch or NCCL does not run it: say so, go on
                if rank == 0:
                    print(f"{NCCL_LABEL} {name}: left out: {error}".splitlines()[0], flush=True)
                break
            want = nccl_kernels.expected("reduce", n, size // 4 // n)
            nccl_kernels.check_data(f"{NCCL_LABEL} {name} of {size} bytes", rank, got, want)
            timed(emit, f"{NCCL_LABEL} {name}", size, body, args.graph, args.iters)


if __name__ == "__main__":
    main()
