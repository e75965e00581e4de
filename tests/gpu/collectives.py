"""symmem's own collectives on the gpu backend (SYMMEM_GPU_COLLECTIVES=symmem,
the default, or one_shot / two_shot / push_one_shot / push_two_shot for
reduce and, the push ones, reducescatter; test_gpu.py runs the push ones with
a small SYMMEM_GPU_STAGING, so that most sizes take several rounds through
the staging buffer): every PE checks what it received against NumPy.
  - reduce: every dtype and op, at sizes around the kernels' 16-byte packs and
    their slices (odd counts, a count under one pack), out of place and in
    place, and from a misaligned element;
  - reducescatter: every dtype and op at odd and even counts;
  - fcollect, alltoall, broadcast (two roots): byte counts of every width, from
    aligned and misaligned addresses;
  - every collective, barrier and sync on three teams: the world, a team of
    every PE made by team_split_2d (another handle) and its x teams;
  - reduce on one team and fcollect on another, on two streams at once (500
    rounds);
  - 10,000 back-to-back collectives on one stream, checked at the end;
  - back-to-back reduces whose sizes (so grids, slots, rounds) change from
    call to call, out of place and in place, checked at the end;
  - a CUDA graph of 100 collectives, replayed 1,000 times with new input.
Where PEs share a GPU (the symmem engine), they take turns on it, a time
slice of a few ms for each wait on a peer, so the three loops run 30, 300
and 20 times: the same checks, in minutes instead of hours.
Run: python -m symmem.run -n 2 tests/gpu/collectives.py"""

import os

import cupy as cp
import numpy as np
import torch

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
W = nvshmem.Teams.TEAM_WORLD
mode = os.environ.get("SYMMEM_GPU_COLLECTIVES", "symmem")
stream = cp.cuda.Stream(non_blocking=True)
checks = 0
SHARED = nvshmem.team_n_pes(nvshmem.Teams.TEAM_SAME_GPU) > 1
TWO_STREAM_ROUNDS = 30 if SHARED else 500
BACK_TO_BACK = 300 if SHARED else 10000
REPLAYS, CHECK_EVERY = (20, 10) if SHARED else (1000, 100)

INTS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
ARITH = ["sum", "min", "max", "prod"]
BITS = ["and", "or", "xor"]
SIZES = [1, 7, 8, 9, 63, 1000, 4099, 100003]


def values(dtype, pe, count):
    """PE pe's input: small numbers, so sums and products are exact everywhere."""
    base = (np.arange(count) * 7 + pe * 3) % 5
    if dtype == "bool":
        return (base + pe) % 2 == 1
    return (base + 1).astype(np.float64)


def reference(dtype, op, count, members=None, part=None):
    """What reducing every member's values gives (part k of count elements:
    reducescatter's, each member's input being len(members) * count long)."""
    members = range(n) if members is None else members
    if part is None:
        parts = np.stack([values(dtype, pe, count) for pe in members])
    else:
        whole = len(members) * count
        parts = np.stack(
            [values(dtype, pe, whole)[part * count : (part + 1) * count] for pe in members]
        )
    if dtype == "bool":
        parts = parts.astype(np.uint8)
        fold = {
            "sum": np.max,
            "max": np.max,
            "or": np.max,
            "prod": np.min,
            "min": np.min,
            "and": np.min,
            "xor": np.bitwise_xor.reduce,
        }[op]
        return fold(parts, axis=0).astype(bool)
    if op in BITS:
        parts = parts.astype(np.int64)
        fold = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return fold.reduce(parts, axis=0)
    return {"sum": parts.sum(0), "prod": parts.prod(0), "min": parts.min(0), "max": parts.max(0)}[
        op
    ]


def make(dtype, count, extra=0):
    """A symmetric array (torch for bfloat16) of count (+ extra) elements."""
    if dtype == "bfloat16":
        return nvshmem.tensor((count + extra,), dtype=torch.bfloat16)
    return nvshmem.array((count + extra,), dtype=dtype)


def release(*arrays):
    for x in arrays:
        if isinstance(x, torch.Tensor):
            nvshmem.free_tensor(x)
        else:
            nvshmem.free_array(x)


def to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.float().cpu().numpy()
    return cp.asnumpy(x)


def fill(x, data):
    """x = data, done on the GPU when fill returns: CuPy and torch write on
    their current (default) stream, which `stream` (non-blocking) does not
    wait for, and the collectives after read x there and, after their
    first meeting, on the other PEs."""
    if isinstance(x, torch.Tensor):
        x.copy_(torch.from_numpy(np.asarray(data, dtype=np.float32)).to(x.device))
    else:
        x[:] = cp.asarray(data.astype(x.dtype))
    cp.cuda.Device().synchronize()


def check(dtype, op, count, got, what, members=None, part=None):
    global checks
    want = reference(dtype, op, count, members, part)
    got = np.asarray(got)
    if dtype == "bool":
        ok = np.array_equal(got.astype(bool), want)
    else:
        ok = np.array_equal(got.astype(np.float64), want.astype(np.float64))
    if not ok:
        bad = np.flatnonzero(got.astype(np.float64) != want.astype(np.float64))[:6]
        raise AssertionError(
            f"PE {me} ({mode}): reduce {dtype} {op} count {count} {what}: "
            f"wrong at {bad.tolist()}: got {got[bad].tolist()}, expected "
            f"{want[bad].tolist()}"
        )
    checks += 1


# Every dtype and op at every size, out of place and in place.
for dtype in INTS + FLOATS:
    for op in ARITH + (BITS if dtype in INTS else []):
        for count in SIZES:
            src, dst = make(dtype, count), make(dtype, count)
            fill(src, values(dtype, me, count))
            nvshmem.reduce(W, dst, src, op, stream=stream)
            stream.synchronize()
            check(dtype, op, count, to_numpy(dst), "out of place")
            nvshmem.reduce(W, src, src, op)
            check(dtype, op, count, to_numpy(src), "in place")
            release(src, dst)

# From element 1: not 16-byte aligned (one-shot, element by element; in
# place: NVSHMEM's), then aligned again.
for count in (5, 4099):
    src, dst = make("float32", count, 1), make("float32", count, 1)
    fill(src[1:], values("float32", me, count))
    nvshmem.reduce(W, dst[1:], src[1:], "sum")
    check("float32", "sum", count, to_numpy(dst[1:]), "misaligned")
    nvshmem.reduce(W, dst[:count], src[1:], "sum")
    check("float32", "sum", count, to_numpy(dst[:count]), "misaligned src")
    nvshmem.reduce(W, src[1:], src[1:], "sum")
    check("float32", "sum", count, to_numpy(src[1:]), "misaligned in place")
    release(src, dst)


def members_of(team):
    return [nvshmem.team_translate_pe(team, i, W) for i in range(nvshmem.team_n_pes(team))]


def reducescatter_case(team, dtype, op, count, s=None):
    members, k = members_of(team), nvshmem.team_my_pe(team)
    src, dst = make(dtype, len(members) * count), make(dtype, count)
    fill(src, values(dtype, me, len(members) * count))
    nvshmem.reducescatter(team, dst, src, op, stream=s)
    if s is not None:
        s.synchronize()
    check(dtype, op, count, to_numpy(dst), f"reducescatter on team {int(team)}", members, k)
    release(src, dst)


# reducescatter: every dtype and op.
for dtype in INTS + FLOATS:
    for op in ARITH + (BITS if dtype in INTS else []):
        for count in (1, 7, 8, 1000, 4099, 4096, 40000):
            reducescatter_case(W, dtype, op, count, stream)


def byte_values(pe, nbytes, salt=0):
    return ((np.arange(nbytes) * 13 + pe * 101 + salt * 7) % 251).astype(np.uint8)


def moves(team, nbytes, skew, s=None, salt=0):
    """fcollect, alltoall and broadcast (roots 0 and last) of nbytes per PE,
    from buffers skew bytes past 16-byte alignment; every byte checked."""
    global checks
    members, k = members_of(team), nvshmem.team_my_pe(team)
    m = len(members)
    src = nvshmem.array((skew + m * nbytes,), dtype="uint8")
    dst = nvshmem.array((skew + m * nbytes,), dtype="uint8")
    mine = byte_values(me, m * nbytes, salt)
    src[skew:] = cp.asarray(mine)
    cp.cuda.Device().synchronize()  # as in fill(): before s reads it
    got = {}

    def done(name, view):
        if s is not None:
            s.synchronize()
        got[name] = cp.asnumpy(view)

    nvshmem.fcollect(team, dst[skew:], src[skew : skew + nbytes], stream=s)
    done("fcollect", dst[skew:])
    want = np.concatenate([byte_values(pe, m * nbytes, salt)[:nbytes] for pe in members])
    cases = [("fcollect", want)]
    nvshmem.alltoall(team, dst[skew:], src[skew:], stream=s)
    done("alltoall", dst[skew:])
    want = np.concatenate(
        [byte_values(pe, m * nbytes, salt)[k * nbytes : (k + 1) * nbytes] for pe in members]
    )
    cases.append(("alltoall", want))
    for root in sorted({0, m - 1}):
        nvshmem.broadcast(
            team, dst[skew : skew + nbytes], src[skew : skew + nbytes], root, stream=s
        )
        done(f"broadcast from {root}", dst[skew : skew + nbytes])
        cases.append(
            (f"broadcast from {root}", byte_values(members[root], m * nbytes, salt)[:nbytes])
        )
    for name, want in cases:
        if not np.array_equal(got[name], want):
            bad = np.flatnonzero(got[name] != want)[:6]
            raise AssertionError(
                f"PE {me}: {name} on team {int(team)}, {nbytes} bytes, skew "
                f"{skew}: wrong at {bad.tolist()}: got {got[name][bad].tolist()}"
                f", expected {want[bad].tolist()}"
            )
        checks += 1
    nvshmem.free_array(src)
    nvshmem.free_array(dst)


# Byte movers: every width (16, 8, 4, 2, 1) from the sizes and the skews.
for nbytes in (1, 2, 3, 4, 8, 12, 16, 17, 1000, 4096, 65537, 1 << 20):
    for skew in (0, 1, 2, 4, 8):
        moves(W, nbytes, skew, stream if skew % 2 else None)

# Three teams: the world, every PE under another handle, and the x teams.
xteam, yteam = nvshmem.team_split_2d(W, 1 if n <= 2 else 2)
for team in (W, yteam, xteam):
    for op, dtype in (("sum", "float32"), ("max", "int32"), ("sum", "bfloat16")):
        for count in (1, 1000, 4099, 1 << 18):
            src, dst = make(dtype, count), make(dtype, count)
            fill(src, values(dtype, me, count))
            nvshmem.reduce(team, dst, src, op, stream=stream)
            stream.synchronize()
            check(dtype, op, count, to_numpy(dst), f"on team {int(team)}", members_of(team))
            release(src, dst)
        reducescatter_case(team, dtype, op, 4099)
    for nbytes in (8, 4099, 1 << 20):
        moves(team, nbytes, 0, stream)
    nvshmem.barrier(team, stream=stream)
    nvshmem.sync(team, stream=stream)
    nvshmem.barrier(team)
    nvshmem.sync(team)
    stream.synchronize()

# Two teams on two streams at once: world reduces on one, fcollects of the
# other all-PE team on the other, never ordered against each other.
other = cp.cuda.Stream(non_blocking=True)
a, b = make("float32", 4096), make("float32", 4096)
c, d = nvshmem.array((256,), dtype="int64"), nvshmem.array((256 * n,), dtype="int64")
fill(a, values("float32", me, 4096))
c[:] = cp.arange(256) + 1000 * me
cp.cuda.Device().synchronize()
nvshmem.barrier_all()
for _ in range(TWO_STREAM_ROUNDS):
    nvshmem.reduce(W, b, a, "sum", stream=stream)
    nvshmem.fcollect(yteam, d, c, stream=other)
stream.synchronize()
other.synchronize()
check("float32", "sum", 4096, to_numpy(b), "two streams")
want = np.concatenate([np.arange(256) + 1000 * pe for pe in members_of(yteam)])
assert np.array_equal(cp.asnumpy(d)[: want.size], want), f"PE {me}: fcollect beside a reduce"
checks += 1

# 10,000 back-to-back collectives on one stream: the flags never get out of step.
for k in range(BACK_TO_BACK):
    if k % 3 == 0:
        nvshmem.reduce(W, b, a, "sum", stream=stream)
    elif k % 3 == 1:
        nvshmem.fcollect(W, d, c, stream=stream)
    else:
        nvshmem.barrier_all(stream=stream)
stream.synchronize()
check("float32", "sum", 4096, to_numpy(b), f"after {BACK_TO_BACK} back to back")
assert np.array_equal(
    cp.asnumpy(d), np.concatenate([np.arange(256) + 1000 * pe for pe in range(n)])
)
checks += 1

# Back to back at changing sizes: each call's grid, slot and rounds differ
# from the last one's, and nothing waits in between.
cases = []
for count in [4099, 100003, 7, 1 << 18, 1000, 40000, 63, (1 << 20) + 3] * 2:
    for dtype in ("float32", "bfloat16"):
        src, dst = make(dtype, count), make(dtype, count)
        fill(src, values(dtype, me, count))
        cases.append((dtype, count, src, dst))
cp.cuda.Device().synchronize()
nvshmem.barrier_all()
for dtype, count, src, dst in cases:
    nvshmem.reduce(W, dst, src, "sum", stream=stream)
    nvshmem.reduce(W, src, src, "max", stream=stream)
stream.synchronize()
for dtype, count, src, dst in cases:
    check(dtype, "sum", count, to_numpy(dst), "back to back, sizes changing")
    check(dtype, "max", count, to_numpy(src), "back to back, sizes changing, in place")
    release(src, dst)

# A graph of 100 collectives (chained max-reduces a -> b -> a, fcollects and
# barriers), replayed 1,000 times with new input written before each replay.
a[:] = 0
nvshmem.reduce(W, b, a, "max", stream=stream)  # kernels built before the capture
stream.synchronize()
nvshmem.barrier_all()
stream.begin_capture()
for k in range(100):
    if k % 10 == 9:
        nvshmem.fcollect(W, d, c, stream=stream)
    elif k % 10 == 4:
        nvshmem.barrier_all(stream=stream)
    else:
        nvshmem.reduce(W, b, a, "max", stream=stream)
        nvshmem.reduce(W, a, b, "max", stream=stream)
graph = stream.end_capture()
for replay in range(REPLAYS):
    with stream:
        a[:] = cp.arange(4096, dtype=cp.float32) % 11 + replay * 10 + me
        c[:] = cp.arange(256) + replay + 1000 * me
    graph.launch(stream=stream)
    if replay % CHECK_EVERY == CHECK_EVERY - 1:
        stream.synchronize()
        want = np.arange(4096, dtype=np.float32) % 11 + replay * 10 + (n - 1)
        got = cp.asnumpy(a)
        assert np.array_equal(got, want), (
            f"PE {me}: graph replay {replay}: got {got[:4]}, expected {want[:4]}"
        )
        want = np.concatenate([np.arange(256) + replay + 1000 * pe for pe in range(n)])
        assert np.array_equal(cp.asnumpy(d), want), f"PE {me}: graph replay {replay}: fcollect"
        checks += 2
del graph
release(a, b, c, d)
nvshmem.barrier_all()
nvshmem.finalize()
print(f"PE {me} OK ({checks} checks, {mode})", flush=True)
