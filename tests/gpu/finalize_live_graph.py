"""finalize() while CUDA graphs that captured symmem's stream calls are still
alive, with symmetric tensors left for finalize's leak sweep.

    python -m symmem.run -n 2 tests/gpu/finalize_live_graph.py barrier
    python -m symmem.run -n 2 tests/gpu/finalize_live_graph.py every
    SYMMEM_TIMEOUT=5 python -m symmem.run -n 2 tests/gpu/finalize_live_graph.py stuck

'barrier': the program of issue 17 (a graph holding barrier_all). 'every':
one graph per capturable call, each replayed and its data checked, all left
alive. finalize must return (bounded by SYMMEM_TIMEOUT, which the test sets)
on every PE; each PE prints 'PE k OK (finalize with live graphs: MODE)'.
'stuck': PE 0 replays a signal_wait no one satisfies; finalize must raise on
every PE within SYMMEM_TIMEOUT, saying what it waited for."""

import os
import sys
import time

import torch

import symmem as nv
from symmem import _symmem  # the launcher's placement, whichever launcher

MODE = sys.argv[1]
REPLAYS = 10

local = _symmem.launcher()["local_rank"] % torch.cuda.device_count()  # PEs may share a GPU
torch.cuda.set_device(local)
nv.init(device=local)
me, n = nv.my_pe(), nv.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
W = nv.Teams.TEAM_WORLD
s = torch.cuda.Stream()
graphs = []  # kept alive on purpose until after finalize


def capture(body):
    """body() captured into a graph on s, replayed REPLAYS times."""
    torch.cuda.synchronize()
    nv.barrier_all()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        body()
    for _ in range(REPLAYS):
        g.replay()
    s.synchronize()
    nv.barrier_all()
    graphs.append(g)


def check(what, ok):
    assert ok, f"PE {me}: {what}"


x = nv.tensor((1024,), dtype=torch.float32)
if MODE == "barrier":  # the program, as it was
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        nv.barrier_all(stream=s)
    for _ in range(REPLAYS):
        g.replay()
    s.synchronize()
    graphs.append(g)
elif MODE == "every":
    src = nv.tensor((1024,), dtype=torch.float32)
    dst = nv.tensor((n, 1024), dtype=torch.float32)
    got = nv.tensor((1024,), dtype=torch.float32)
    sig = nv.tensor((1,), dtype=torch.uint64)
    red = nv.tensor((1024,), dtype=torch.float32)
    col = nv.tensor((n * 1024,), dtype=torch.float32)
    a2a = nv.tensor((n * 16,), dtype=torch.float32)
    src.fill_(me + 1)
    dst.fill_(-1)
    sig.zero_()
    torch.cuda.synchronize()
    nv.barrier_all()

    # name: (what the graph holds, what every PE then checks)
    every = {
        "put": (
            lambda: nv.put(dst[me], src, nxt, stream=s),
            lambda: bool((dst[prv] == prv + 1).all()),
        ),
        "get": (
            lambda: (nv.get(got, src, nxt, stream=s), nv.quiet(stream=s)),
            lambda: bool((got == nxt + 1).all()),
        ),
        "put_signal": (
            lambda: nv.put_signal(dst[me], src, sig, 1, nv.SignalOp.SIGNAL_ADD, nxt, stream=s),
            lambda: int(sig[0]) == REPLAYS,
        ),
        "signal_wait": (
            lambda: nv.signal_wait(sig, REPLAYS, nv.ComparisonType.CMP_GE, stream=s),
            None,
        ),
        "signal_op": (lambda: nv.signal_op(sig, 1, nv.SignalOp.SIGNAL_ADD, nxt, stream=s), None),
        "quiet": (lambda: nv.quiet(stream=s), None),
        "barrier_all": (lambda: nv.barrier_all(stream=s), None),
        "sync_all": (lambda: nv.sync_all(stream=s), None),
        "reduce": (
            lambda: nv.reduce(W, red, src, "sum", stream=s),
            lambda: bool((red == n * (n + 1) / 2).all()),
        ),
        "fcollect": (
            lambda: nv.fcollect(W, col, src, stream=s),
            lambda: all(bool((col[k * 1024 : (k + 1) * 1024] == k + 1).all()) for k in range(n)),
        ),
        "broadcast": (
            lambda: nv.broadcast(W, got, src, root=0, stream=s),
            lambda: bool((got == 1).all()),
        ),
        "alltoall": (
            lambda: nv.alltoall(W, a2a, col[: n * 16], stream=s),
            lambda: bool((a2a[me * 16 : (me + 1) * 16] == 1).all()),
        ),
    }
    chosen = os.environ.get("GRAPHS", ",".join(every)).split(",")  # a subset, to bisect
    for name in chosen:
        body, ok = every[name]
        capture(body)
        if ok is not None:
            check(name, ok())
    # Once more, unsynchronised: finalize starts while the replays may run.
    for g in graphs:
        g.replay()

if MODE == "stuck":  # PE 0 replays a wait no one will satisfy
    sig = nv.tensor((1,), dtype=torch.uint64)
    sig.zero_()
    torch.cuda.synchronize()
    if me == 0:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            nv.signal_wait(sig, 12345, nv.ComparisonType.CMP_EQ, stream=s)
        g.replay()
        graphs.append(g)
    try:
        nv.finalize()
    except nv.NvshmemError as error:
        print(f"PE {me} OK (finalize raised: {error})", flush=True)
        os._exit(0)  # the stuck kernel keeps the runtime from ending cleanly
    raise AssertionError(f"PE {me}: finalize returned with a wait still running")

refused = ""
if MODE == "every":
    # NVSHMEM runs collectives on NCCL, which cannot finalize while a graph
    # holding one lives: finalize refuses, naming them, and stays usable.
    # symmem's own collective kernels (the default) hold nothing of NCCL's.
    on_nccl = os.environ.get("SYMMEM_GPU_COLLECTIVES") == "nvshmem"
    collectives = [
        c for c in ("reduce", "fcollect", "broadcast", "alltoall") if c in chosen and on_nccl
    ]
    try:
        nv.finalize()
    except nv.NvshmemInvalid as error:
        text = str(error)
        assert collectives and "still alive" in text, text
        assert all(c in text for c in collectives) and "call finalize again" in text, text
        refused = f", refused first ({len(graphs)} graphs named)"
        for g in graphs:
            g.reset()
        graphs.clear()
    else:
        assert not collectives, f"PE {me}: finalize ended with collectives in live graphs"

started = time.monotonic()
nv.finalize()
took = time.monotonic() - started
print(
    f"PE {me} OK (finalize with live graphs: {MODE}{refused}, {len(graphs)} graphs, "
    f"finalize took {took:.1f} s)",
    flush=True,
)
