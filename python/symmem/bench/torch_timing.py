"""How the workers built on torch (nccl_worker.py, nccl_symm_worker.py,
torch_symm_worker.py) join their ranks and time a call: CUDA events on the
current stream, as nccl-tests does, the best of plan.REPEATS runs, each
started by every rank together; eager, or replayed from a CUDA graph."""

import os
import time

import torch
import torch.distributed as dist

from symmem.bench import plan


def worker_parser():
    """The sweep's options with --store, a file path for the rendezvous; a
    worker may add its own."""
    parser = plan.sweep_parser()
    parser.add_argument("--store", required=True, help="a file path for the rendezvous")
    return parser


def rank_and_device():
    """(rank, ranks) from symmem's launcher, with this rank's GPU made current."""
    rank, n = int(os.environ["SYMMEM_RANK"]), int(os.environ["SYMMEM_NRANKS"])
    local = int(os.environ.get("SYMMEM_LOCAL_RANK", rank))
    torch.cuda.set_device(local % torch.cuda.device_count())
    return rank, n


def join(parser=None):
    """The options (parser's, default worker_parser()'s), and this rank joined
    to the NCCL process group on its GPU: (args, rank, n, perf_counter before
    joining)."""
    args = (parser or worker_parser()).parse_args()
    rank, n = rank_and_device()
    t0 = time.perf_counter()
    dist.init_process_group(
        "nccl",
        init_method=f"file://{args.store}",
        rank=rank,
        world_size=n,
        device_id=torch.device("cuda", torch.cuda.current_device()),
    )
    return args, rank, n, t0


def best_of(body, iters, line_up=None):
    """Microseconds a call of body takes, back to back on the current stream:
    the best of plan.REPEATS timed runs of iters calls, after a warm-up.
    line_up() starts every rank together (default dist.barrier)."""
    for _ in range(min(iters, 5)):
        body()

    def run():
        for _ in range(iters):
            body()

    return _fastest(run, iters, line_up or dist.barrier)


def best_of_graph(body, iters, line_up=None, watch=None):
    """Microseconds a call of body takes replayed from a CUDA graph of up to
    plan.GRAPH_CALLS calls: the best of plan.REPEATS timed runs. The capture
    and the first replay (the warm-up) run as watch(run, graph) (default
    run()): nccl_kernels.py looks at the kernels they run and capture."""
    body()  # warm up outside the capture
    torch.cuda.synchronize()
    graph, calls = torch.cuda.CUDAGraph(), min(iters, plan.GRAPH_CALLS)

    def capture_and_replay():
        with torch.cuda.graph(graph):
            for _ in range(calls):
                body()
        graph.replay()

    (watch or (lambda run, graph: run()))(capture_and_replay, graph)
    replays = plan.graph_replays(iters)

    def run():
        for _ in range(replays):
            graph.replay()

    return _fastest(run, replays * calls, line_up or dist.barrier)


def _fastest(run, calls, line_up):
    """Microseconds per call: the best of plan.REPEATS timed run()s of calls
    calls each, every rank starting together."""
    best = float("inf")
    for _ in range(plan.REPEATS):
        torch.cuda.synchronize()
        line_up()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        run()
        end.record()
        end.synchronize()
        best = min(best, begin.elapsed_time(end) * 1e3 / calls)
    return best
