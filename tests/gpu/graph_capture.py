"""Every stream-ordered symmem call captured into one CUDA graph through a
library's own capture (torch.cuda.graph, CuPy's stream capture or cuda.core's
graph builder), replayed 1,000 times with new input written before each
replay; every PE then checks what it received and the signals' counts.

    python -m symmem.run -n 2 tests/gpu/graph_capture.py torch|cupy|cuda.core

Each PE prints 'PE k OK (graph capture: LIB, N replays)'."""

import faulthandler
import sys

import cupy as cp
import numpy as np

import symmem as nv

LIB = sys.argv[1]
faulthandler.dump_traceback_later(100, exit=True)  # a hang says where
REPLAYS = 1000
COUNT = 1024

nv.init()
me, n = nv.my_pe(), nv.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
W = nv.Teams.TEAM_WORLD
_, team = nv.team_split_2d(W, 1)  # every PE, under a handle of its own

src = nv.array((COUNT,), dtype="float32")
put_to = nv.array((COUNT,), dtype="float32")
signalled = nv.array((COUNT,), dtype="float32")
got = nv.array((COUNT,), dtype="float32")
red = nv.array((COUNT,), dtype="float32")
scatter_src = nv.array((n * COUNT,), dtype="float32")
scattered = nv.array((COUNT,), dtype="float32")
col = nv.array((n * COUNT,), dtype="float32")
bcast = nv.array((COUNT,), dtype="float32")
a2a = nv.array((n * COUNT,), dtype="float32")
sig = nv.array((2,), dtype="uint64")
for x in (src, put_to, signalled, got, red, scatter_src, scattered, col, bcast, a2a):
    x[:] = -1
sig[:] = 0


def every_call(s):
    """Every stream call symmem has, on stream s."""
    nv.barrier_all(stream=s)  # every PE's new src is written before any get reads it
    nv.put(put_to, src, nxt, stream=s)
    nv.fence(stream=s)
    nv.get(got, src, nxt, stream=s)
    nv.quiet(stream=s)
    nv.put_signal(signalled, src, sig[0:1], 1, nv.SignalOp.SIGNAL_ADD, nxt, stream=s)
    nv.signal_wait(sig[0:1], 1, nv.ComparisonType.CMP_GE, stream=s)
    nv.signal_op(sig[1:2], 1, nv.SignalOp.SIGNAL_ADD, nxt, stream=s)
    nv.barrier_all(stream=s)
    nv.sync_all(stream=s)
    nv.barrier(team, stream=s)
    nv.sync(team, stream=s)
    nv.reduce(W, red, src, "sum", stream=s)
    nv.reducescatter(W, scattered, scatter_src, "max", stream=s)
    nv.fcollect(team, col, src, stream=s)
    nv.broadcast(W, bcast, src, 0, stream=s)
    nv.alltoall(W, a2a, scatter_src, stream=s)
    nv.barrier_all(stream=s)  # nobody reads this PE's buffers once its replay ends


def inputs(replay):
    """This PE's input for a replay, and a peer's."""

    def of(pe):
        return (np.arange(COUNT, dtype=np.float32) % 7 + pe * 100 + replay).astype(np.float32)

    def wide(pe):
        return (np.arange(n * COUNT, dtype=np.float32) % 5 + pe * 10 + replay).astype(np.float32)

    return of, wide


def capture_and_replay():
    """(graph launcher, stream sync, a 'with stream' context maker)."""
    if LIB == "torch":
        import torch

        torch.cuda.set_device(cp.cuda.Device().id)
        s = torch.cuda.Stream()
        every_call(s)  # kernels compiled before capture
        s.synchronize()
        nv.barrier_all()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=s):
            every_call(s)
        return graph.replay, s.synchronize, cp.cuda.ExternalStream(s.cuda_stream), graph
    if LIB == "cupy":
        s = cp.cuda.Stream(non_blocking=True)
        every_call(s)
        s.synchronize()
        nv.barrier_all()
        s.begin_capture()
        every_call(s)
        graph = s.end_capture()
        return (lambda: graph.launch(stream=s)), s.synchronize, s, graph
    try:
        from cuda.core import Device
    except ImportError:
        from cuda.core.experimental import Device
    device = Device(cp.cuda.Device().id)
    device.set_current()
    s = device.create_stream()
    every_call(s)
    s.sync()
    nv.barrier_all()
    builder = s.create_graph_builder()
    builder.begin_building()
    every_call(builder.stream)
    builder.end_building()
    graph = builder.complete()
    return (lambda: graph.launch(s)), s.sync, cp.cuda.ExternalStream(int(s.handle)), graph


launch, sync, on_stream, graph = capture_and_replay()
sig[:] = 0  # the warm-up's signals
cp.cuda.Device().synchronize()
nv.barrier_all()
for replay in range(REPLAYS):
    of, wide = inputs(replay)
    with on_stream:  # new input, ordered before the replay on its stream
        src[:] = cp.asarray(of(me))
        scatter_src[:] = cp.asarray(wide(me))
    launch()
sync()
nv.barrier_all()

last = REPLAYS - 1
of, wide = inputs(last)
expect = {
    "put": (put_to, of(prv)),
    "get": (got, of(nxt)),
    "put_signal": (signalled, of(prv)),
    "reduce": (red, sum(of(pe) for pe in range(n))),
    "reducescatter": (
        scattered,
        np.max([wide(pe)[me * COUNT : (me + 1) * COUNT] for pe in range(n)], axis=0),
    ),
    "fcollect": (col, np.concatenate([of(pe) for pe in range(n)])),
    "broadcast": (bcast, of(0)),
    "alltoall": (a2a, np.concatenate([wide(pe)[me * COUNT : (me + 1) * COUNT] for pe in range(n)])),
}
for name, (array, want) in expect.items():
    have = cp.asnumpy(array)
    assert np.array_equal(have, want), f"PE {me} ({LIB}): {name}: got {have[:4]}, want {want[:4]}"
counts = cp.asnumpy(sig).tolist()
assert counts == [REPLAYS, REPLAYS], f"PE {me} ({LIB}): signal counts {counts}, want {REPLAYS}"
del graph
nv.barrier_all()
nv.finalize()
print(f"PE {me} OK (graph capture: {LIB}, {REPLAYS} replays)", flush=True)
