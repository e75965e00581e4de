"""Mismatched collectives on the gpu backend raise on every PE, naming each
PE and what it called (the cpu engine's words), instead of pairing up or
hanging on the GPU. PE 0 makes one call and PE 1 another; each PE checks the
exception (NvshmemInvalid, status ERR_MISMATCH) and its message, then exits
at once: the collective that was launched before the mismatch was seen may
still wait on the GPU, so NVSHMEM cannot finalize. 'matched' runs 200 mixed,
matched collectives on TEAM_WORLD and a split team, blocking and on a
stream, checking the data: no false mismatch. 'team_stream': PE 0 reduces
on a split team and PE 1 on TEAM_WORLD, each on a stream, then both wait in
the stream's synchronize, where no symmem call runs: each PE's device watch
sees the two calls wait for each other (src/backends/gpu/stuck.c), says so on
stderr and stops its GPU work, so the synchronize raises instead of hanging.

Run: python -m symmem.run -n 2 tests/gpu/mismatch.py CASE
CASE: reduce_count reduce_dtype reduce_op broadcast_root team reduce_vs_barrier
      stream matched team_stream"""

import os
import random
import sys
import threading
import time

import cupy as cp

import symmem as nvshmem
from symmem import _symmem

CASE = sys.argv[1]
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
W = nvshmem.Teams.TEAM_WORLD
f32 = nvshmem.array((64,), dtype="float32")
dst = nvshmem.array((64 * n,), dtype="float32")
i32 = nvshmem.array((64,), dtype="int32")
i32d = nvshmem.array((64,), dtype="int32")
f32[:] = me + 1
i32[:] = me + 1
split = nvshmem.team_split_strided(W, 0, 1, n)
S = int(split)
stream = cp.cuda.Stream(non_blocking=True)
cp.cuda.Device().synchronize()
nvshmem.barrier_all()


def red(count, team=W, op="sum", src=f32, on=None):
    out = dst if src is f32 else i32d
    return lambda: nvshmem.reduce(team, out[:count], src[:count], op, stream=on)


def then_barrier(first):
    def both():
        first()
        nvshmem.barrier_all()  # a stream call's mismatch may surface here

    return both


# (what PE 0 calls, what the others call, how the message names each)
CASES = {
    "reduce_count": (
        red(8),
        red(4),
        "reduce(sum, float32, 8 elements, team WORLD)",
        "reduce(sum, float32, 4 elements, team WORLD)",
    ),
    "reduce_dtype": (
        red(8, src=i32),
        red(8),
        "reduce(sum, int32, 8 elements, team WORLD)",
        "reduce(sum, float32, 8 elements, team WORLD)",
    ),
    "reduce_op": (
        red(8, op="max"),
        red(8),
        "reduce(max, float32, 8 elements, team WORLD)",
        "reduce(sum, float32, 8 elements, team WORLD)",
    ),
    "broadcast_root": (
        lambda: nvshmem.broadcast(W, dst[:8], f32[:8], root=1),
        lambda: nvshmem.broadcast(W, dst[:8], f32[:8], root=0),
        "broadcast(32 bytes, root 1, team WORLD)",
        "broadcast(32 bytes, root 0, team WORLD)",
    ),
    # different teams: each PE waits in its own, for the other
    "team": (
        red(8, team=split),
        red(8),
        f"reduce(sum, float32, 8 elements, team {S})",
        "reduce(sum, float32, 8 elements, team WORLD)",
    ),
    "reduce_vs_barrier": (
        red(8),
        nvshmem.barrier_all,
        "reduce(sum, float32, 8 elements, team WORLD)",
        "barrier_all",
    ),
    # on a stream: seen at enqueue, or by the blocking call after it
    "stream": (
        then_barrier(red(8, on=stream)),
        then_barrier(red(4, on=stream)),
        "reduce(sum, float32, 8 elements, team WORLD)",
        "reduce(sum, float32, 4 elements, team WORLD)",
    ),
}


def check(cond, what):
    if not cond:
        print(f"PE {me} FAILED: {what}", flush=True)
        os._exit(1)


if CASE == "matched":
    rng = random.Random(1234)  # the same choices on every PE
    expect = n * (n + 1) / 2
    for step in range(200):
        team = W if rng.random() < 0.5 else split
        on = stream if rng.random() < 0.5 else None
        kind = rng.choice(["reduce", "broadcast", "fcollect", "barrier", "barrier_all", "sync_all"])
        count = rng.choice([1, 8, 64])
        if on is None:
            stream.synchronize()
        if kind == "reduce":
            nvshmem.reduce(team, dst[:count], f32[:count], "sum", stream=on)
            want = cp.full(count, expect, dtype="float32")
            got = dst[:count]
        elif kind == "broadcast":
            nvshmem.broadcast(team, dst[:count], f32[:count], root=step % n, stream=on)
            want = cp.full(count, step % n + 1, dtype="float32")
            got = dst[:count]
        elif kind == "fcollect":
            nvshmem.fcollect(team, dst[: count * n], f32[:count], stream=on)
            want = cp.repeat(cp.arange(1, n + 1, dtype="float32"), count)
            got = dst[: count * n]
        elif kind == "barrier":
            nvshmem.barrier(team, stream=on)
            want = got = None
        elif kind == "barrier_all":
            nvshmem.barrier_all(stream=on)
            want = got = None
        else:
            nvshmem.sync_all(stream=on)
            want = got = None
        if on is not None:
            stream.synchronize()
        if want is not None:
            check(
                bool((got == want).all()),
                f"step {step}: {kind} on team {int(team)}, stream={on is not None}: {got[:4]}",
            )
            # nobody overwrites dst (a broadcast's or fcollect's target) before all read it
            nvshmem.barrier_all()
    nvshmem.team_destroy(split)
    for a in (f32, dst, i32, i32d):
        nvshmem.free_array(a)
    nvshmem.finalize()
    print(f"PE {me} OK (mismatch: matched, 200 collectives)", flush=True)
    sys.exit(0)

if CASE == "team_stream":
    # each team's first collective, matched: NVSHMEM may set a team up on the
    # host inside its first launch, where the PEs would wait on the host
    for team in (W, split):
        nvshmem.reduce(team, dst[:8], f32[:8], "sum")
    # a guard, should the stop not end the GPU's wait
    threading.Timer(
        45,
        lambda: (
            print(f"PE {me} FAILED: still in synchronize after 45 s", flush=True),
            os._exit(1),
        ),
    ).start()
    started = time.monotonic()
    red(8, team=split if me == 0 else W, on=stream)()
    try:
        stream.synchronize()
    except Exception as error:  # CuPy's CUDA error: the context was stopped
        took = time.monotonic() - started
        print(
            f"PE {me} OK (mismatch: team_stream, after {took:.1f} s: "
            f"{type(error).__name__}: {error})",
            flush=True,
        )
        os._exit(0)
    check(False, "the stream's synchronize returned")

first, rest, first_text, rest_text = CASES[CASE]
started = time.monotonic()
try:
    (first if me == 0 else rest)()
except nvshmem.NvshmemInvalid as error:
    took = time.monotonic() - started
    text = str(error)
    check(error.status == _symmem.ERR_MISMATCH, f"status {error.status}: {text}")
    for part in (
        f"[pe {me}] ",
        "PEs disagree",
        f"PE 0 called {first_text}",
        f"PE 1 called {rest_text}",
    ):
        check(part in text, f"{part!r} not in {text!r}")
    check(text.count("[pe ") == 1, f"one PE prefix in {text!r}")
    print(f"PE {me} OK (mismatch: {CASE}, after {took:.1f} s: {text})", flush=True)
    os._exit(0)  # a launched collective may still wait on the GPU
check(False, f"{CASE}: no error raised")
