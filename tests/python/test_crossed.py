"""Crossed collectives on the cpu engine: PEs that wait for each other in
collectives of different teams (PE 0 in barrier_all while PE 1 is in a
barrier of a split team, both in both) raise NvshmemInvalid (ERR_MISMATCH) on
every PE of the deadlock, naming each PE and its call, instead of waiting
for SYMMEM_TIMEOUT; the job can go on. PEs that only wait for a peer busy
elsewhere (it will come), PEs of disjoint teams, and a PE that waits for a
deadlock it is not in, raise nothing (src/backends/cpu/crossed.c)."""

import pytest

from conftest import assert_all_ok, cpu_only

crossed_only = cpu_only("the crossed check reads the cpu engine's control segment")

RULE = "(every PE must make the same collective calls, with the same arguments, in the same order)"

# PE 0 makes one call and every other PE another, on two teams of every PE:
# each PE raises the same words (but its own call first), and then matched
# collectives on both channels work.
CROSSED = f"""
from symmem import _symmem
RULE = {RULE!r}
nvshmem.init()
W = nvshmem.Teams.TEAM_WORLD
me, n = nvshmem.my_pe(), nvshmem.n_pes()
others = "PE 1" if n == 2 else "PEs " + ", ".join(str(pe) for pe in range(1, n))
src = nvshmem.array((4 * n,), dtype="float32")
dst = nvshmem.array((4 * n,), dtype="float32")
src[:] = me + 1
S = nvshmem.team_split_strided(W, 0, 1, n)
S2 = nvshmem.team_split_strided(W, 0, 1, n)
s, s2 = int(S), int(S2)


def make_array():
    nvshmem.array((4,), dtype="int8")


CASES = [
    # (what PE 0 calls, what the others call, how the message names each)
    (nvshmem.barrier_all, lambda: nvshmem.barrier(S), "barrier_all", f"barrier(team {{s}})"),
    (lambda: nvshmem.reduce(W, dst[:4], src[:4], "sum"),
     lambda: nvshmem.reduce(S, dst[:4], src[:4], "sum"),
     "reduce(sum, float32, 4 elements, team WORLD)", f"reduce(sum, float32, 4 elements, team {{s}})"),
    (lambda: nvshmem.sync(S), lambda: nvshmem.barrier(S2), f"sync(team {{s}})",
     f"barrier(team {{s2}})"),
    (lambda: nvshmem.fcollect(S, dst[:n], src[:1]), lambda: nvshmem.alltoall(W, dst[:n], src[:n]),
     f"fcollect(4 bytes, team {{s}})", "alltoall(4 bytes, team WORLD)"),
    (lambda: nvshmem.broadcast(S2, dst[:4], src[:4], root=0),
     lambda: nvshmem.reducescatter(S, dst[:1], src[:n], "max"),
     f"broadcast(16 bytes, root 0, team {{s2}})", f"reducescatter(max, float32, 1 element, team {{s}})"),
    (make_array, lambda: nvshmem.barrier(S), "malloc", f"barrier(team {{s}})"),
    (lambda: nvshmem.team_split_strided(W, 0, 1, n), lambda: nvshmem.sync(S),
     "team_split(of team WORLD)", f"sync(team {{s}})"),
]

for k, (first, rest, first_text, rest_text) in enumerate(CASES):
    mine = first if me == 0 else rest
    call = (first_text if me == 0 else rest_text).partition("(")[0].replace("malloc", "array")
    expected = (f"[pe {{me}}] {{call}}: PEs disagree: PE 0 called {{first_text}}, {{others}} called "
                f"{{rest_text}} {{RULE}}")
    try:
        mine()
        raise AssertionError(f"PE {{me}}: case {{k}}: nothing raised")
    except nvshmem.NvshmemInvalid as error:
        check(str(error) == expected, f"case {{k}}: {{str(error)!r}} != {{expected!r}}")
        check(error.status == _symmem.ERR_MISMATCH, f"case {{k}}: status {{error.status}}")
    # the job goes on, on both channels
    dst[:] = 0
    nvshmem.reduce(W, dst[:4], src[:4], "sum")
    check_equal(dst[:4], np.full(4, n * (n + 1) / 2, dtype="float32"), f"WORLD after case {{k}}")
    dst[:] = 0
    nvshmem.reduce(S, dst[:4], src[:4], "max")
    check_equal(dst[:4], np.full(4, n, dtype="float32"), f"split team after case {{k}}")
    nvshmem.barrier(S2)

nvshmem.team_destroy(S)
nvshmem.team_destroy(S2)
nvshmem.free_array(src)
nvshmem.free_array(dst)
nvshmem.barrier_all()
ok()
nvshmem.finalize()
"""


@crossed_only
@pytest.mark.parametrize("n,check", ((2, "1"), (3, "1"), (4, "1"), (2, "0")))
def test_crossed_collectives_raise_on_every_pe(run_pes, n, check):
    # SYMMEM_CHECK=0 takes out the fingerprints, not this check: it only turns
    # a certain hang into an error, and costs nothing before a wait's first poll
    result = run_pes(n, CROSSED, timeout=120, env={"SYMMEM_TIMEOUT": "30", "SYMMEM_CHECK": check})
    assert_all_ok(result, n)


# A ring: PE k waits in a barrier of the pair team {k, k+1}, so each waits for
# the next. Every PE names all of them; then barriers of the pair teams in
# one order for all, and a sum on TEAM_WORLD.
RING = f"""
from symmem import _symmem
RULE = {RULE!r}
nvshmem.init()
W = nvshmem.Teams.TEAM_WORLD
me, n = nvshmem.my_pe(), nvshmem.n_pes()
pairs = [nvshmem.team_split_strided(W, k, 1, 2) for k in range(n - 1)]
pairs.append(nvshmem.team_split_strided(W, 0, n - 1, 2))   # {{0, n-1}}
mine = [k for k in range(n) if me in (k, (k + 1) % n)]
handles = nvshmem.array((n,), dtype="int64")
every = nvshmem.array((n,), dtype="int64")
handles[:] = -1
for k in mine:
    handles[k] = int(pairs[k])
nvshmem.reduce(W, every, handles, "max")
names = ", ".join(f"PE {{k}} called barrier(team {{every[k]}})" for k in range(n))
try:
    nvshmem.barrier(pairs[me])
    raise AssertionError(f"PE {{me}}: nothing raised")
except nvshmem.NvshmemInvalid as error:
    expected = f"[pe {{me}}] barrier: PEs disagree: {{names}} {{RULE}}"
    check(str(error) == expected, f"{{str(error)!r}} != {{expected!r}}")
    check(error.status == _symmem.ERR_MISMATCH, f"status {{error.status}}")
seen = every.copy()
for k in mine:
    nvshmem.barrier(pairs[k])
every[:] = -1
nvshmem.reduce(W, every, handles, "max")
check_equal(every, seen, "the pair teams' handles, again")
for k in mine:
    nvshmem.team_destroy(pairs[k])
nvshmem.free_array(handles)
nvshmem.free_array(every)
ok()
nvshmem.finalize()
"""


@crossed_only
@pytest.mark.parametrize("n", (3, 4))
def test_a_ring_of_crossed_barriers_raises_on_every_pe(run_pes, n):
    assert_all_ok(run_pes(n, RING, timeout=90, env={"SYMMEM_TIMEOUT": "30"}), n)


# PE 0 waits in barrier_all for PEs 1 and 2, which wait for each other (PE 1
# in a barrier of their team, PE 2 in barrier_all): they raise, naming the
# two of them only; PE 0 is not in the deadlock and keeps waiting, until they
# call barrier_all too.
BYSTANDER = f"""
RULE = {RULE!r}
nvshmem.init()
W = nvshmem.Teams.TEAM_WORLD
me = nvshmem.my_pe()
T = nvshmem.team_split_strided(W, 1, 1, 2)    # PEs 1 and 2
src = nvshmem.array((4,), dtype="int64")
dst = nvshmem.array((4,), dtype="int64")
src[:] = me + 1
if me == 0:
    nvshmem.barrier_all()                     # returns: no error here
else:
    expected = (f"[pe {{me}}] {{'barrier' if me == 1 else 'barrier_all'}}: PEs disagree: "
                f"PE 1 called barrier(team {{int(T)}}), PE 2 called barrier_all {{RULE}}")
    expect_raises(nvshmem.NvshmemInvalid, [expected],
                  (lambda: nvshmem.barrier(T)) if me == 1 else nvshmem.barrier_all)
    nvshmem.barrier_all()                     # meets PE 0's
    nvshmem.reduce(T, dst, src, "sum")
    check_equal(dst, np.full(4, 5, dtype="int64"), "sum on the pair")
nvshmem.reduce(W, dst, src, "sum")
check_equal(dst, np.full(4, 6, dtype="int64"), "sum on TEAM_WORLD")
nvshmem.free_array(src)
nvshmem.free_array(dst)
ok()
nvshmem.finalize()
"""


@crossed_only
def test_a_pe_that_waits_for_a_deadlock_it_is_not_in_keeps_waiting(run_pes):
    assert_all_ok(run_pes(3, BYSTANDER, timeout=60, env={"SYMMEM_TIMEOUT": "30"}), 3)


# No deadlock, no error, though PEs wait (past the check's first poll) in
# collectives of other teams:
#  - the x teams of a 2-D split, {0, 1} and {2, 3}, share one channel and go
#    on at their own pace (the pair {2, 3} a barrier ahead, one PE of each
#    pair late each round);
#  - a chain: PE 0 in barrier_all waits for PE 1, in a barrier of {1, 2, 3}
#    waiting for PE 2, in a barrier of {2, 3} waiting for PE 3, which comes
#    late: nobody waits for PE 0, so nothing is reported, and all go on.
NO_DEADLOCK = """
nvshmem.init()
W = nvshmem.Teams.TEAM_WORLD
me = nvshmem.my_pe()
X, Y = nvshmem.team_split_2d(W, 2)
src = nvshmem.array((4,), dtype="int64")
dst = nvshmem.array((4,), dtype="int64")
src[:] = me + 1
if me >= 2:
    nvshmem.barrier(X)
for r in range(3):
    if me % 2 == r % 2:
        time.sleep(0.3)
    nvshmem.barrier(X)
    nvshmem.reduce(X, dst, src, "sum")
    check_equal(dst, np.full(4, 3 if me < 2 else 7, dtype="int64"), f"x team, round {r}")
T = nvshmem.team_split_strided(W, 1, 1, 3)      # 1, 2, 3
U = nvshmem.team_split_strided(W, 2, 1, 2)      # 2, 3
if me == 3:
    time.sleep(0.5)
if me >= 2:
    nvshmem.barrier(U)
if me >= 1:
    nvshmem.barrier(T)
nvshmem.barrier_all()
nvshmem.reduce(W, dst, src, "sum")
check_equal(dst, np.full(4, 10, dtype="int64"), "sum on TEAM_WORLD")
nvshmem.free_array(src)
nvshmem.free_array(dst)
ok()
nvshmem.finalize()
"""


@crossed_only
def test_waits_on_other_teams_that_are_no_deadlock_raise_nothing(run_pes):
    assert_all_ok(run_pes(4, NO_DEADLOCK, timeout=90, env={"SYMMEM_TIMEOUT": "30"}), 4)


# A PE that raised goes straight to finalize(): its peer still raises the
# crossed collectives (finalize waits until it has), not "PE 0 has called
# finalize()".
THEN_FINALIZE = f"""
RULE = {RULE!r}
nvshmem.init()
W = nvshmem.Teams.TEAM_WORLD
me = nvshmem.my_pe()
S = nvshmem.team_split_strided(W, 0, 1, 2)
expected = (f"[pe {{me}}] {{'barrier_all' if me == 0 else 'barrier'}}: PEs disagree: PE 0 called "
            f"barrier_all, PE 1 called barrier(team {{int(S)}}) {{RULE}}")
if me == 1:
    time.sleep(0.3)    # PE 0 waits first; whichever raises first goes on to finalize
expect_raises(nvshmem.NvshmemInvalid, [expected],
              nvshmem.barrier_all if me == 0 else (lambda: nvshmem.barrier(S)))
ok()
nvshmem.finalize()
"""


@crossed_only
def test_the_peer_raises_the_crossed_calls_before_finalize(run_pes):
    assert_all_ok(run_pes(2, THEN_FINALIZE, timeout=60, env={"SYMMEM_TIMEOUT": "30"}), 2)


# PE 0 waits in barrier_all for PEs 1 and 2, PE 1 in a barrier of {0, 1} for
# PE 0, and PE 2 in a signal wait for PE 1: PEs 0 and 1 are deadlocked, but
# also wait for PE 2, which is in no barrier and may come. They raise after
# about a second all the same; then PE 1 signals PE 2 and all go on.
OUTSIDE = f"""
RULE = {RULE!r}
nvshmem.init()
W = nvshmem.Teams.TEAM_WORLD
me = nvshmem.my_pe()
P = nvshmem.team_split_strided(W, 0, 1, 2)    # PEs 0 and 1
sig = nvshmem.array((1,), dtype="uint64")
sig[:] = 0
nvshmem.barrier_all()
if me == 2:
    nvshmem.signal_wait(sig, nvshmem.ComparisonType.CMP_EQ, 1)
else:
    expected = (f"[pe {{me}}] {{'barrier_all' if me == 0 else 'barrier'}}: PEs disagree: PE 0 "
                f"called barrier_all, PE 1 called barrier(team {{int(P)}}) {{RULE}}")
    expect_raises(nvshmem.NvshmemInvalid, [expected],
                  nvshmem.barrier_all if me == 0 else (lambda: nvshmem.barrier(P)))
    if me == 1:
        nvshmem.signal_op(sig, 1, nvshmem.SignalOp.SIGNAL_SET, 2)
nvshmem.barrier_all()
if me < 2:
    nvshmem.barrier(P)
nvshmem.free_array(sig)
ok()
nvshmem.finalize()
"""


@crossed_only
def test_a_deadlock_that_also_waits_for_a_pe_outside_it_is_reported(run_pes):
    assert_all_ok(run_pes(3, OUTSIDE, timeout=60, env={"SYMMEM_TIMEOUT": "30"}), 3)
