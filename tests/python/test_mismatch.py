"""PEs never pair up in mismatched synchronisation: a collective called with
other arguments, or another collective, raises NvshmemInvalid (status
ERR_MISMATCH) on every PE, naming each PE and what it called; a PE that has
called finalize() makes the others' collectives raise at once, naming it,
even while it keeps running."""

import pytest

from conftest import assert_all_ok, cpu_only

# The fingerprint rides on the cpu engine's barriers; NVSHMEM's collectives
# carry none.
fingerprints = cpu_only("the mismatch check rides on the cpu engine's barriers")

# PE 0 makes one call and every other PE another; each case names both calls
# as the message describes them, then the job goes on: a matched reduce after
# each case gets the right sum.
MISMATCHES = """
from symmem import _symmem
nvshmem.init()
W, NODE = nvshmem.Teams.TEAM_WORLD, nvshmem.Teams.TEAM_NODE
me, n = nvshmem.my_pe(), nvshmem.n_pes()
odd = me == 0
others = "PE 1" if n == 2 else "PEs " + ", ".join(str(pe) for pe in range(1, n))
f32 = nvshmem.array((8 * n,), dtype="float32")
dst = nvshmem.array((8 * n,), dtype="float32")
i32 = nvshmem.array((8,), dtype="int32")
i32d = nvshmem.array((8,), dtype="int32")
f32[:] = me + 1
split = nvshmem.team_split_strided(W, 0, 1, n)
S = int(split)


def red(count, team=W, op="sum", src=f32):
    out = dst if src is f32 else i32d
    return lambda: nvshmem.reduce(team, out[:count], src[:count], op)


def make_array():
    nvshmem.array((4,), dtype="int8")


CASES = [
    # (what PE 0 calls, what the others call, how the message names each)
    (red(8), red(4), "reduce(sum, float32, 8 elements, team WORLD)",
     "reduce(sum, float32, 4 elements, team WORLD)"),
    (red(8, src=i32), red(8), "reduce(sum, int32, 8 elements, team WORLD)",
     "reduce(sum, float32, 8 elements, team WORLD)"),
    (red(8, op="max"), red(8), "reduce(max, float32, 8 elements, team WORLD)",
     "reduce(sum, float32, 8 elements, team WORLD)"),
    (red(8, team=NODE), red(8), "reduce(sum, float32, 8 elements, team NODE)",
     "reduce(sum, float32, 8 elements, team WORLD)"),
    (red(8), nvshmem.barrier_all, "reduce(sum, float32, 8 elements, team WORLD)",
     "barrier_all"),
    (nvshmem.barrier_all, red(8), "barrier_all",
     "reduce(sum, float32, 8 elements, team WORLD)"),
    (nvshmem.barrier_all, nvshmem.sync_all, "barrier_all", "sync_all"),
    (lambda: nvshmem.barrier(W), lambda: nvshmem.sync(W), "barrier(team WORLD)",
     "sync(team WORLD)"),
    (lambda: nvshmem.barrier(split), lambda: nvshmem.sync(split), f"barrier(team {S})",
     f"sync(team {S})"),
    (lambda: nvshmem.reduce(split, dst[:8], f32[:8], "sum"),
     lambda: nvshmem.reduce(split, dst[:8], f32[:8], "prod"),
     f"reduce(sum, float32, 8 elements, team {S})",
     f"reduce(prod, float32, 8 elements, team {S})"),
    (lambda: nvshmem.reducescatter(W, dst[:2], f32[:2 * n], "sum"),
     lambda: nvshmem.reducescatter(W, dst[:1], f32[:n], "sum"),
     "reducescatter(sum, float32, 2 elements, team WORLD)",
     "reducescatter(sum, float32, 1 element, team WORLD)"),
    (lambda: nvshmem.broadcast(W, dst[:8], f32[:8], root=1),
     lambda: nvshmem.broadcast(W, dst[:8], f32[:8], root=0),
     "broadcast(32 bytes, root 1, team WORLD)", "broadcast(32 bytes, root 0, team WORLD)"),
    (lambda: nvshmem.broadcast(W, dst[:8], f32[:8], root=0),
     lambda: nvshmem.broadcast(W, dst[:4], f32[:4], root=0),
     "broadcast(32 bytes, root 0, team WORLD)", "broadcast(16 bytes, root 0, team WORLD)"),
    (lambda: nvshmem.alltoall(W, dst[:2 * n], f32[:2 * n]),
     lambda: nvshmem.alltoall(W, dst[:n], f32[:n]),
     "alltoall(8 bytes, team WORLD)", "alltoall(4 bytes, team WORLD)"),
    (lambda: nvshmem.fcollect(W, dst[:2 * n], f32[:2]),
     lambda: nvshmem.fcollect(W, dst[:n], f32[:1]),
     "fcollect(8 bytes, team WORLD)", "fcollect(4 bytes, team WORLD)"),
    (make_array, nvshmem.barrier_all, "malloc", "barrier_all"),
    (lambda: nvshmem.free_array(i32), red(8), "free",
     "reduce(sum, float32, 8 elements, team WORLD)"),
    (lambda: nvshmem.team_split_strided(W, 0, 1, n), nvshmem.sync_all,
     "team_split(of team WORLD)", "sync_all"),
    (lambda: nvshmem.team_destroy(split), lambda: nvshmem.barrier(split),
     f"team_destroy(team {S})", f"barrier(team {S})"),
    (lambda: nvshmem.team_init(nvshmem.TeamConfig(uniqueid=b"lone"), 0, npes=n,
                               pe_idx_in_team=me), nvshmem.barrier_all,
     f"team_init({n} PEs)", "barrier_all"),
]

for k, (first, rest, first_text, rest_text) in enumerate(CASES):
    # the message starts with this PE's own call (array() names malloc "array")
    call = (first_text if odd else rest_text).partition("(")[0].replace("malloc", "array")
    words = [f"[pe {me}] {call}: PEs disagree: ", f"PE 0 called {first_text}",
             f"{others} called {rest_text}"]
    msg = expect_raises(nvshmem.NvshmemInvalid, words, first if odd else rest)
    check(msg.count(" called ") == 2, f"case {k}: two groups of PEs in {msg!r}")
    check(msg.count("[pe ") == 1, f"case {k}: one PE prefix in {msg!r}")
    try:
        (first if odd else rest)()  # once more: the same mismatch, the same status
    except nvshmem.NvshmemInvalid as error:
        check(error.status == _symmem.ERR_MISMATCH, f"case {k}: status {error.status}")
    # the job goes on: a matched collective works
    dst[:] = 0
    nvshmem.reduce(W, dst[:8], f32[:8], "sum")
    check_equal(dst[:8], np.full(8, n * (n + 1) / 2, dtype="float32"), f"sum after case {k}")

# every PE still agrees on the heap and the teams
nvshmem.team_destroy(split)
for a in (i32, i32d, f32, dst):
    nvshmem.free_array(a)
nvshmem.barrier_all()
ok()
nvshmem.finalize()
"""


@fingerprints
@pytest.mark.parametrize("n", (2, 3))
def test_every_mismatch_raises_on_every_pe(run_pes, n):
    assert_all_ok(run_pes(n, MISMATCHES, timeout=90, env={"SYMMEM_TIMEOUT": "30"}), n)


# The last PE calls finalize() while the others go on ("first": it is inside
# finalize() before they call; "during": they already wait in barrier_all).
# finalize() waits for every PE, but matches no collective: each collective of
# the others raises at once, naming it, while it is still running (its pid is
# alive after all their checks); collectives of teams without it still work;
# then they finalize too, and every PE exits 0.
FINALIZE_EARLY = """
import pathlib
from symmem import _symmem
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
W = nvshmem.Teams.TEAM_WORLD
leaver = n - 1
where, order = pathlib.Path(sys.argv[1]), sys.argv[2]


def untracked(count):
    # memory the package does not track: the leaver's finalize() has no leaks
    # to free (freeing them would be a collective the others are not in)
    return np.frombuffer(_symmem.malloc(4 * count, "buffer"), dtype="float32")


src, dst = untracked(4 * n), untracked(4 * n)
src[:] = me + 1
stay = nvshmem.team_split_strided(W, 0, 1, n - 1)   # every PE but the leaver
nvshmem.barrier_all()
if me == leaver:
    if order == "during":
        time.sleep(0.5)      # the others wait in barrier_all by now
    (where / "pid").write_text(str(os.getpid()))
    nvshmem.finalize()
    print(f"PE {leaver} OK", flush=True)
    sys.exit(0)

if order == "first":
    while not (where / "pid").exists():
        time.sleep(0.01)
    time.sleep(0.5)          # it is inside finalize() by now

LEFT = f"PE {leaver} has called finalize() and left the job"
CALLS = [
    ("barrier_all", nvshmem.barrier_all),
    ("sync_all", nvshmem.sync_all),
    ("barrier", lambda: nvshmem.barrier(W)),
    ("sync", lambda: nvshmem.sync(nvshmem.Teams.TEAM_NODE)),
    ("reduce", lambda: nvshmem.reduce(W, dst[:4], src[:4], "sum")),
    ("reducescatter", lambda: nvshmem.reducescatter(W, dst[:1], src[:n], "max")),
    ("broadcast", lambda: nvshmem.broadcast(W, dst[:4], src[:4], root=0)),
    ("alltoall", lambda: nvshmem.alltoall(W, dst[:n], src[:n])),
    ("fcollect", lambda: nvshmem.fcollect(W, dst[:n], src[:1])),
    ("array", lambda: nvshmem.array((4,), dtype="int8")),
    ("team_split", lambda: nvshmem.team_split_strided(W, 0, 1, n)),
    ("team_init", lambda: nvshmem.team_init(nvshmem.TeamConfig(uniqueid=b"all"), 0, npes=n,
                                            pe_idx_in_team=me)),
]
for call, fn in CALLS:
    msg = expect_raises(nvshmem.NvshmemError, [f"[pe {me}] {call}: {LEFT}"], fn)
    check(not isinstance(nvshmem.NvshmemError(msg), nvshmem.NvshmemInvalid), "a peer error")

# the teams without the leaver still work
if n > 2:
    dst[:] = 0
    nvshmem.reduce(stay, dst[:4], src[:4], "sum")
    check_equal(dst[:4], np.full(4, (n - 1) * n / 2, dtype="float32"), "reduce without it")
    mine = nvshmem.team_init(nvshmem.TeamConfig(uniqueid=b"stay"), 0, npes=n - 1,
                             pe_idx_in_team=me)
    nvshmem.barrier(mine)
    nvshmem.team_destroy(mine)
# all the while, the leaver has been running
os.kill(int((where / "pid").read_text()), 0)
ok()
nvshmem.finalize()
"""


@fingerprints
@pytest.mark.parametrize("order", ("first", "during"))
@pytest.mark.parametrize("n", (2, 3))
def test_finalize_while_others_call_collectives(run_pes, tmp_path, n, order):
    result = run_pes(
        n, FINALIZE_EARLY, timeout=60, env={"SYMMEM_TIMEOUT": "20"}, args=[tmp_path, order]
    )
    assert_all_ok(result, n)


@fingerprints
def test_finalize_detected_without_the_fingerprint_check(run_pes, tmp_path):
    # SYMMEM_CHECK=0 takes out the fingerprints, not the finalize() rule
    result = run_pes(
        2,
        FINALIZE_EARLY,
        timeout=60,
        env={"SYMMEM_TIMEOUT": "20", "SYMMEM_CHECK": "0"},
        args=[tmp_path, "first"],
    )
    assert_all_ok(result, 2)


# Every PE calls finalize(), some of them late, with an array still live: it
# still works (finalize() frees the array collectively, then leaves).
FINALIZE_ALL = """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
a = nvshmem.array((4,), dtype="int32")
a[:] = me
nvshmem.barrier_all()
time.sleep(0.2 * me)
nvshmem.finalize()
print(f"PE {me} OK", flush=True)
"""


@pytest.mark.parametrize("n", (2, 3))
def test_every_pe_finalizes(run_pes, n):
    assert_all_ok(run_pes(n, FINALIZE_ALL, timeout=60), n)


# SYMMEM_CHECK=0 takes the fingerprint out of the barriers: PEs in different
# barriers pair up as they did before it (the job's own risk), and matched
# collectives still work.
UNCHECKED = """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
W = nvshmem.Teams.TEAM_WORLD
src = nvshmem.array((4,), dtype="int64")
dst = nvshmem.array((4,), dtype="int64")
src[:] = me + 1
if me == 0:
    nvshmem.barrier_all()
else:
    nvshmem.sync_all()
nvshmem.barrier(W) if me == 0 else nvshmem.sync(nvshmem.Teams.TEAM_NODE)
nvshmem.reduce(W, dst, src, "sum")
check_equal(dst, np.full(4, n * (n + 1) // 2, dtype="int64"), "reduce")
nvshmem.free_array(src)
nvshmem.free_array(dst)
ok()
nvshmem.finalize()
"""


@fingerprints
def test_symmem_check_0_turns_the_check_off(run_pes):
    assert_all_ok(
        run_pes(2, UNCHECKED, timeout=60, env={"SYMMEM_CHECK": "0", "SYMMEM_TIMEOUT": "20"}), 2
    )
