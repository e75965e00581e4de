"""Collectives: reduce (every op), reducescatter, alltoall,
fcollect, broadcast (every root), barrier/sync, collective_on_buffer, over
the world team, strided teams, the x and y teams of a 2-D split and the
predefined teams, for every dtype, at 1..4 PEs. Every PE checks every element
of what it got against a NumPy reference built from what each member
contributed (contributions are functions of the world PE and the index).
One launch per PE count and section; each PE prints "PE k OK"."""

import os

import pytest

from _launch import assert_all_ok, run_pes

# The predefined node teams hold every PE of the host; a PE taken for one on a
# host of its own is alone in them.
node_teams_of_one_host = pytest.mark.skipif(
    os.environ.get("SYMMEM_BACKEND") == "mpi" and os.environ.get("SYMMEM_ONE_HOST_PER_PE") == "1",
    reason="not on the mpi backend with SYMMEM_ONE_HOST_PER_PE=1: the test expects TEAM_NODE "
    "and TEAM_SHARED to hold every PE of the host, and each PE is then a host of its own "
    "(run it on the node path)",
)

N_PES = (1, 2, 3, 4)

# Contributions and references, shared by the programs below.
COMMON = """
UFUNCS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def contrib(pe, dt, count, op, salt=0):
    \"\"\"What world PE pe reduces with op: small values (no overflow in any
    dtype at 4 PEs), negative ones for signed min/max/sum, unsigned values
    with the top bit set for min/max, high bits for the bitwise ops.\"\"\"
    d = np.dtype(dt)
    k = np.arange(count, dtype=np.int64)
    if d == np.bool_:
        r = (k * 5 + pe * 3 + salt) % 4    # every residue along k, shifted per PE
        if op in ("prod", "min", "and"):
            return r != 0
        return r < 2 if op == "xor" else r == 0
    if op == "prod":
        return ((k * 7 + pe * 3 + salt) % 3 + 1).astype(d)
    if op == "sum":
        v = (k * 7 + pe * 3 + salt) % 5
        return (v + 1 if d.kind == "u" else v - 2).astype(d)
    if op in ("min", "max"):
        v = (k * 5 + pe * 3 + salt) % 11
        if d.kind == "u":
            top = np.array(np.iinfo(d).max, dtype=d) - v.astype(d)
            return np.where(v % 2 == 0, v.astype(d), top)
        return (v - 5).astype(d)
    v = (k * 37 + pe * 101 + salt * 13) % 256
    if d.itemsize > 1:
        v = v | (((k * pe + salt + 1) % 7) << (8 * d.itemsize - 4))
    return v.astype(d)


def data(pe, dt, count, salt=0):
    \"\"\"What world PE pe moves in alltoall, fcollect and broadcast.\"\"\"
    d = np.dtype(dt)
    k = np.arange(count, dtype=np.int64)
    if d == np.bool_:
        return (k + pe + salt) % 3 == 0
    if d.kind in "iu":
        return ((k * 7 + pe * 13 + salt * 5 + 1) % 100).astype(d)
    return (k * 0.5 + pe + salt * 0.25).astype(d)


def reference(pes, dt, count, op, salt=0):
    \"\"\"op over the contributions of world PEs pes, in team order.\"\"\"
    return functools.reduce(UFUNCS[op], [contrib(pe, dt, count, op, salt) for pe in pes])


def sentinel(dt):
    return np.array(True if dt == "bool" else 99).astype(dt)


def make_teams():
    \"\"\"[(name, team or None)] in the same order on every PE.\"\"\"
    W = Teams.TEAM_WORLD
    teams = [("world", W), ("node", Teams.TEAM_NODE), ("self", Teams.TEAM_SAME_MYPE_NODE)]
    n = nvshmem.n_pes()
    for name, start, stride in (("even", 0, 2), ("odd", 1, 2)):
        if start < n:
            size = (n - start + stride - 1) // stride
            teams.append((name, nvshmem.team_split_strided(W, start, stride, size,
                                                           new_team_name=name)))
    x, y = nvshmem.team_split_2d(W, 2, new_team_name="grid")
    teams += [("x2d", x), ("y2d", y)]
    return teams


def expected_members(name, me, n):
    \"\"\"The world PEs of my team called name (None where I am not in it).\"\"\"
    if name in ("world", "node"):
        return list(range(n))
    if name == "self":
        return [me]
    if name in ("even", "odd"):
        start = 0 if name == "even" else 1
        pes = list(range(start, n, 2))
        return pes if me in pes else None
    if name == "x2d":
        return list(range(me - me % 2, min(me - me % 2 + 2, n)))
    return list(range(me % 2, n, 2))  # y2d
"""

# Every collective x dtype x op x team; dst views are larger than needed and
# what lies past the result must be left alone.
ALL_COLLECTIVES = (
    COMMON
    + """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
teams = make_teams()
R, RS, A2A, FC, BC = 13, 5, 3, 4, 6   # element counts (per block where blocked)
MAXE = max(R, n * RS, n * A2A, n * FC, BC) + 2
done = 0

for name, team in teams:
    want = expected_members(name, me, n)
    if want is None:
        check(team is None, f"{name}: not a member but got {team!r}")
        continue
    check(team is not None and members(team) == want,
          f"{name}: members {members(team) if team is not None else None}, expected {want}")

def ready(team):
    # Every member has filled its buffers and checked the last result: a
    # collective may write into a peer's dst as soon as it starts (the gpu
    # backend's NVSHMEM does), as OpenSHMEM allows.
    nvshmem.sync(team)


for dt in DTYPES:
    SRC = nvshmem.array((MAXE,), dtype=dt)
    DST = nvshmem.array((MAXE,), dtype=dt)
    fill = sentinel(dt)
    for name, team in teams:
        if team is None:
            continue
        pes = members(team)
        k, i = len(pes), nvshmem.team_my_pe(team)
        check(k == nvshmem.team_n_pes(team) and pes[i] == me, f"{name}: team_my_pe")
        what = f"{name} (members {pes}) {dt}"
        for op in OPS:
            bitwise = op in ("and", "or", "xor")
            if bitwise and dt in FLOAT_DTYPES:
                # refused on each PE before any communication: only one
                # member calls it, so a PE that waited for the others would hang
                if i == k - 1:
                    SRC[:R] = 1
                    expect_invalid("reduce", nvshmem.reduce, team, DST[:R], SRC[:R], op)
                    expect_invalid("reducescatter", nvshmem.reducescatter, team,
                                   DST[:RS], SRC[:k * RS], op)
                continue
            # reduce (all-reduce)
            DST[:] = fill
            SRC[:R] = xp().asarray(contrib(me, dt, R, op, 1))
            ready(team)
            nvshmem.reduce(team, DST[:R + 2], SRC[:R], op)
            check_equal(DST[:R], reference(pes, dt, R, op, 1), f"reduce {op} {what}")
            check_equal(DST[R:], np.full(MAXE - R, fill), f"reduce {op} {what}: past the end")
            check_equal(SRC[:R], contrib(me, dt, R, op, 1), f"reduce {op} {what}: src changed")
            # in place
            SRC[:R] = xp().asarray(contrib(me, dt, R, op, 2))
            ready(team)
            nvshmem.reduce(team, SRC[:R], SRC[:R], op)
            check_equal(SRC[:R], reference(pes, dt, R, op, 2), f"in-place reduce {op} {what}")
            # reducescatter: block i of the reduction
            DST[:] = fill
            SRC[:k * RS] = xp().asarray(contrib(me, dt, k * RS, op, 3))
            ready(team)
            nvshmem.reducescatter(team, DST, SRC[:k * RS], op)
            full = reference(pes, dt, k * RS, op, 3)
            check_equal(DST[:RS], full[i * RS:(i + 1) * RS], f"reducescatter {op} {what}")
            check_equal(DST[RS:], np.full(MAXE - RS, fill),
                        f"reducescatter {op} {what}: past the end")
            done += 3
        # alltoall: block j of member i's src lands in block i of member j's dst
        DST[:] = fill
        SRC[:k * A2A] = xp().asarray(data(me, dt, k * A2A, 4))
        ready(team)
        nvshmem.alltoall(team, DST[:k * A2A + 1], SRC[:k * A2A])
        expect = np.concatenate([data(pe, dt, k * A2A, 4)[i * A2A:(i + 1) * A2A] for pe in pes])
        check_equal(DST[:k * A2A], expect, f"alltoall {what}")
        check_equal(DST[k * A2A:], np.full(MAXE - k * A2A, fill), f"alltoall {what}: past end")
        # fcollect: member j's src lands in block j of every dst
        DST[:] = fill
        SRC[:FC] = xp().asarray(data(me, dt, FC, 5))
        ready(team)
        nvshmem.fcollect(team, DST, SRC[:FC])
        expect = np.concatenate([data(pe, dt, FC, 5) for pe in pes])
        check_equal(DST[:k * FC], expect, f"fcollect {what}")
        check_equal(DST[k * FC:], np.full(MAXE - k * FC, fill), f"fcollect {what}: past end")
        # broadcast from every root (team-relative)
        for root in range(k):
            DST[:] = fill
            SRC[:BC] = xp().asarray(data(me, dt, BC, 6 + root))
            ready(team)
            nvshmem.broadcast(team, DST[:BC + 1], SRC[:BC], root=root)
            check_equal(DST[:BC], data(pes[root], dt, BC, 6 + root),
                        f"broadcast root={root} {what}")
            check_equal(DST[BC:], np.full(MAXE - BC, fill), f"broadcast {what}: past the end")
            check_equal(SRC[:BC], data(me, dt, BC, 6 + root), f"broadcast {what}: src changed")
        # broadcast in place, root given positionally
        SRC[:BC] = xp().asarray(data(me, dt, BC, 20))
        ready(team)
        nvshmem.broadcast(team, SRC[:BC], SRC[:BC], k - 1)
        check_equal(SRC[:BC], data(pes[k - 1], dt, BC, 20), f"in-place broadcast {what}")
        done += 3 + k
    nvshmem.free_array(DST)
    nvshmem.free_array(SRC)

# Large counts: the reduction goes through its chunk buffer several times,
# and each member's slice of the result spans several chunks.
W = Teams.TEAM_WORLD
BIG = 50_000
for dt, op in (("float64", "sum"), ("int32", "max"), ("uint8", "xor"), ("float16", "sum")):
    src = nvshmem.array((n * BIG,), dtype=dt)
    dst = nvshmem.array((n * BIG,), dtype=dt)
    src[:] = xp().asarray(contrib(me, dt, n * BIG, op, 7))
    ready(W)
    nvshmem.reduce(W, dst, src, op)
    check_equal(dst, reference(range(n), dt, n * BIG, op, 7), f"big reduce {op} {dt}")
    ready(W)
    nvshmem.reducescatter(W, dst[:BIG], src, op)
    check_equal(dst[:BIG], reference(range(n), dt, n * BIG, op, 7)[me * BIG:(me + 1) * BIG],
                f"big reducescatter {op} {dt}")
    nvshmem.fcollect(W, dst, src[:BIG])
    check_equal(dst, np.concatenate([contrib(pe, dt, n * BIG, op, 7)[:BIG] for pe in range(n)]),
                f"big fcollect {dt}")
    nvshmem.free_array(dst)
    nvshmem.free_array(src)

# 2-D arrays: counts come from the whole (contiguous) array
src = nvshmem.array((3, 4), dtype="int64")
dst = nvshmem.array((3, 4), dtype="int64")
src[:] = xp().asarray(np.arange(12).reshape(3, 4) * (me + 1))
nvshmem.reduce(W, dst, src, "sum")
check_equal(dst, np.arange(12).reshape(3, 4) * (n * (n + 1) // 2), "2-D reduce")
nvshmem.free_array(dst)
nvshmem.free_array(src)

# views that start inside an allocation (at different offsets in dst and src)
src = nvshmem.array((20,), dtype="int32")
dst = nvshmem.array((20,), dtype="int32")
src[:] = xp().asarray(np.arange(20) + me)
dst[:] = -1
nvshmem.reduce(W, dst[3:8], src[5:10], "sum")
expect = np.full(20, -1, np.int32)
expect[3:8] = np.arange(5, 10) * n + n * (n - 1) // 2
check_equal(dst, expect, "reduce between offset views")
nvshmem.fcollect(W, dst[1:1 + 2 * n], src[7:9])
expect[1:1 + 2 * n] = np.concatenate([np.arange(7, 9) + pe for pe in range(n)])
check_equal(dst, expect, "fcollect between offset views")
nvshmem.free_array(dst)
nvshmem.free_array(src)

for name, team in teams:
    if team is not None and int(team) >= 6:
        nvshmem.team_destroy(team)
check(done > 0, "nothing was checked")
print(f"checked {done} collectives", flush=True)
nvshmem.finalize()
ok(me)
"""
)


@node_teams_of_one_host
@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", N_PES)
def test_every_collective_dtype_op_team(tmp_path, n):
    result = run_pes(tmp_path, n, ALL_COLLECTIVES, timeout=100)
    assert_all_ok(result, n)


# barrier/sync/barrier_all/sync_all: a put to the next member is visible after
# barrier(team); sync keeps members in step; the all-forms work on the world.
BARRIERS = (
    COMMON
    + """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
teams = make_teams()
box = nvshmem.array((1,), dtype="int64")
for rnd in range(3):
    for name, team in teams:
        if team is None:
            continue
        pes = members(team)
        k, i = len(pes), nvshmem.team_my_pe(team)
        box[0] = -1
        nvshmem.sync(team)            # nobody puts before everyone has reset
        nvshmem.p(box, 1000 * rnd + me, pes[(i + 1) % k])
        nvshmem.barrier(team, stream=None)
        check(box[0] == 1000 * rnd + pes[(i - 1) % k],
              f"{name} round {rnd}: after barrier box={box[0]}, expected "
              f"{1000 * rnd + pes[(i - 1) % k]}")
        nvshmem.sync(team, None)
    box[0] = -1
    nvshmem.sync_all()
    nvshmem.put(box, np.array([me + 7 * rnd], dtype=np.int64), (me + 1) % n)
    nvshmem.barrier_all()
    check(box[0] == (me - 1) % n + 7 * rnd, f"barrier_all round {rnd}: box={box[0]}")
    nvshmem.sync_all(stream=None)
    nvshmem.barrier_all(None)
# many barriers in a row on a strided team and the world (epochs keep counting)
t = nvshmem.team_split_strided(Teams.TEAM_WORLD, 0, 1, n)
for _ in range(200):
    nvshmem.barrier(t)
    nvshmem.sync(Teams.TEAM_WORLD)
nvshmem.team_destroy(t)
nvshmem.free_array(box)
nvshmem.finalize()
ok(me)
"""
)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n", N_PES)
def test_barrier_and_sync(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, BARRIERS, timeout=45), n)


# collective_on_buffer on raw Buffers with NumPy and NVSHMEM dtype names.
ON_BUFFER = (
    COMMON
    + """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
W = Teams.TEAM_WORLD
odd = nvshmem.team_split_strided(W, 1, 2, n // 2) if n > 1 else None
NAMES = [("float32", "float32"), ("float", "float32"), ("double", "float64"),
         ("half", "float16"), ("float16", "float16"), ("int", "int32"), ("long", "int64"),
         ("int8", "int8"), ("uint8", "uint8"), ("uint64", "uint64"), ("int16", "int16"),
         ("bool", "bool")]
C = 6
runs = 0
for team in (W, odd):
    for name, dt in NAMES:
        size = np.dtype(dt).itemsize
        # allocation is collective over the world: every PE allocates
        sbuf = nvshmem.buffer(n * C * size)
        dbuf = nvshmem.buffer(n * C * size + 16)
        small = nvshmem.buffer(C * size)
        if team is not None:
            pes = members(team)
            k, i = len(pes), nvshmem.team_my_pe(team)
            s = buffer_view(sbuf, dt)
            sm = buffer_view(small, dt)
            d = buffer_view(dbuf, np.uint8)
            dview = lambda count: d[:count * size].view(dt)
            what = f"collective_on_buffer dtype={name} team {pes}"
            # reduce: the count comes from src (dest is larger)
            s[:] = xp().asarray(contrib(me, dt, n * C, "sum", 1))
            t = nvshmem.collective_on_buffer("reduce", team, dbuf, sbuf, dtype=name, op="sum")
            check(isinstance(t, float) and t == 0.0, f"{what}: returned {t!r}")
            check_equal(dview(n * C), reference(pes, dt, n * C, "sum", 1), f"{what} reduce")
            # reducescatter: src is k blocks of B
            B = n * C // k
            s[:] = xp().asarray(contrib(me, dt, n * C, "max", 2))
            nvshmem.collective_on_buffer("reducescatter", team, dbuf, sbuf, dtype=name,
                                         op="max")
            check_equal(dview(B), reference(pes, dt, n * C, "max", 2)[i * B:(i + 1) * B],
                        f"{what} reducescatter")
            # fcollect from a smaller src; enable_timing gives a float
            sm[:] = xp().asarray(data(me, dt, C, 3))
            ms = nvshmem.collective_on_buffer("fcollect", team, dbuf, small, dtype=name,
                                              enable_timing=True)
            check(isinstance(ms, float) and ms >= 0.0, f"{what}: enable_timing gave {ms!r}")
            check_equal(dview(k * C), np.concatenate([data(pe, dt, C, 3) for pe in pes]),
                        f"{what} fcollect")
            # alltoall: src is k blocks of B
            s[:] = xp().asarray(data(me, dt, n * C, 4))
            nvshmem.collective_on_buffer("alltoall", team, dbuf, sbuf, dtype=name)
            expect = np.concatenate([data(pe, dt, n * C, 4)[i * B:(i + 1) * B] for pe in pes])
            check_equal(dview(n * C), expect, f"{what} alltoall")
            # broadcast from the last member
            sm[:] = xp().asarray(data(me, dt, C, 5))
            nvshmem.collective_on_buffer("broadcast", team, dbuf, small, dtype=name,
                                         root=k - 1)
            check_equal(dview(C), data(pes[k - 1], dt, C, 5), f"{what} broadcast")
            # no dtype: the Buffer's bytes
            sm[:] = xp().asarray(data(me, dt, C, 6))
            nvshmem.collective_on_buffer("fcollect", team, dbuf, small)
            check_equal(d[:k * C * size], np.concatenate(
                [data(pe, dt, C, 6).view(np.uint8) for pe in pes]), f"{what} fcollect bytes")
            runs += 1
        nvshmem.free(small)
        nvshmem.free(dbuf)
        nvshmem.free(sbuf)
check(runs >= len(NAMES), f"only {runs} runs")
nvshmem.finalize()
ok(me)
"""
)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n", N_PES)
def test_collective_on_buffer(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, ON_BUFFER, timeout=45), n)


# Errors: each is raised by every PE that makes the call (on its own, before
# any communication), as NvshmemInvalid naming the call and the PE.
ERRORS = (
    COMMON
    + """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
W = Teams.TEAM_WORLD
src = nvshmem.array((4 * n,), dtype="float32")
dst = nvshmem.array((4 * n,), dtype="float32")
isrc = nvshmem.array((4 * n,), dtype="int32")
src[:] = 1
dst[:] = 0
# every PE checks alone, in its own turn, so that an error path that waited
# for the others would hang (and the launcher's timeout would fail the test)
for turn in range(n):
    nvshmem.barrier_all()
    if turn != me:
        continue
    for op in ("and", "or", "xor"):
        expect_invalid("reduce", nvshmem.reduce, W, dst, src, op)
        expect_invalid("reducescatter", nvshmem.reducescatter, W, dst[:4], src, op)
    for op in ("avg", None, "", 3, "sum ", "mean"):
        expect_invalid("reduce", nvshmem.reduce, W, dst, src, op)
        expect_invalid("reducescatter", nvshmem.reducescatter, W, dst[:4], src, op)
    # dst too small for what src asks for
    expect_invalid("reduce", nvshmem.reduce, W, dst[:3], src[:4], "sum")
    expect_invalid("reducescatter", nvshmem.reducescatter, W, dst[:3], src[:4 * n], "sum")
    expect_invalid("alltoall", nvshmem.alltoall, W, dst[:4 * n - 1], src[:4 * n])
    expect_invalid("fcollect", nvshmem.fcollect, W, dst[:4 * n - 1], src[:4])
    expect_invalid("broadcast", nvshmem.broadcast, W, dst[:3], src[:4], 0)
    if n > 1:  # src not a multiple of the team's size
        expect_invalid("alltoall", nvshmem.alltoall, W, dst, src[:4 * n - 1])
        expect_invalid("reducescatter", nvshmem.reducescatter, W, dst, src[:4 * n - 1], "sum")
    # dtypes that differ
    expect_invalid("reduce", nvshmem.reduce, W, dst, isrc, "sum")
    expect_invalid("fcollect", nvshmem.fcollect, W, isrc, src[:1])
    expect_invalid("alltoall", nvshmem.alltoall, W, isrc, src)
    expect_invalid("broadcast", nvshmem.broadcast, W, dst, isrc)
    expect_invalid("reducescatter", nvshmem.reducescatter, W, isrc, src, "sum")
    # bad roots
    for root in (-1, n, n + 5, "0", 1.0, True, None):
        expect_invalid("broadcast", nvshmem.broadcast, W, dst, src, root)
    # bad teams
    for team in (57, 63, 64, -1, -7, 10**12, None, "world", 1.5, True):
        expect_invalid("reduce", nvshmem.reduce, team, dst, src, "sum")
        expect_invalid("fcollect", nvshmem.fcollect, team, dst, src[:1])
        expect_invalid("broadcast", nvshmem.broadcast, team, dst, src)
        expect_invalid("alltoall", nvshmem.alltoall, team, dst, src)
        expect_invalid("reducescatter", nvshmem.reducescatter, team, dst, src, "sum")
        expect_invalid("barrier", nvshmem.barrier, team)
        expect_invalid("sync", nvshmem.sync, team)
    # memory that is not on the symmetric heap
    local = np.zeros(4 * n, dtype=np.float32)
    expect_invalid("reduce", nvshmem.reduce, W, local, src, "sum")
    expect_invalid("reduce", nvshmem.reduce, W, dst, local, "sum")
    expect_invalid("fcollect", nvshmem.fcollect, W, local, src[:1])
    expect_invalid("broadcast", nvshmem.broadcast, W, dst, local)
    # strided (non-contiguous) views
    expect_invalid("reduce", nvshmem.reduce, W, dst[::2], src[::2], "sum")
    expect_invalid("fcollect", nvshmem.fcollect, W, dst, src[::2])
    # collective_on_buffer: bad collective, dtype, op, root
    b1, b2 = nvshmem.array_get_buffer(src)[0], nvshmem.array_get_buffer(dst)[0]
    expect_invalid("collective_on_buffer", nvshmem.collective_on_buffer, "gather", W, b2, b1,
                   dtype="float")
    expect_invalid("collective_on_buffer", nvshmem.collective_on_buffer, None, W, b2, b1)
    expect_invalid("reduce", nvshmem.collective_on_buffer, "reduce", W, b2, b1,
                   dtype="complex64", op="sum")
    expect_invalid("reduce", nvshmem.collective_on_buffer, "reduce", W, b2, b1,
                   dtype="float", op="avg")
    expect_invalid("reduce", nvshmem.collective_on_buffer, "reduce", W, b2, b1,
                   dtype="float", op="and")
    expect_invalid("broadcast", nvshmem.collective_on_buffer, "broadcast", W, b2, b1,
                   dtype="float", root=n)
    # nothing above changed dst
    check_equal(dst, np.zeros(4 * n, np.float32), "dst after refused calls")
nvshmem.barrier_all()

# a team this PE is not in (None), and a destroyed team, on every PE
even = nvshmem.team_split_strided(W, 0, 2, (n + 1) // 2)
if even is None:
    expect_invalid("reduce", nvshmem.reduce, even, dst, src, "sum")
    expect_invalid("barrier", nvshmem.barrier, even)
else:
    nvshmem.reduce(even, dst, src, "sum")
    check_equal(dst, np.full(4 * n, (n + 1) // 2, np.float32), "reduce over even")
    nvshmem.team_destroy(even)
    for call, args in (("reduce", (dst, src, "sum")), ("reducescatter", (dst, src, "sum")),
                       ("alltoall", (dst, src)), ("fcollect", (dst, src[:1])),
                       ("broadcast", (dst, src, 0)), ("barrier", ()), ("sync", ())):
        msg = expect_invalid(call, getattr(nvshmem, call), even, *args)
        check(str(int(even)) in msg, f"{call}: message {msg!r} does not name the team")

# the library still works after all that
src[:] = me
nvshmem.reduce(W, dst, src, "max")
check_equal(dst, np.full(4 * n, n - 1, np.float32), "reduce after the errors")
nvshmem.free_array(isrc)
nvshmem.free_array(dst)
nvshmem.free_array(src)
nvshmem.finalize()
ok(me)
"""
)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n", N_PES)
def test_collective_errors(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, ERRORS, timeout=45), n)
