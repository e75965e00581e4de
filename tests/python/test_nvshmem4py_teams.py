"""NVSHMEM4Py's team registry on real PEs: Teams.<name> for each team a PE
made, Teams.keys(), team_destroy by name, NVSHMEM4Py's default names, a
name given twice, refused names, TeamUniqueId as NVSHMEM4Py's teams_test
reads it, and a strided split reaching beyond a split parent. Each PE
checks the data a collective over the named team gives it."""

import pytest

from _launch import assert_all_ok, run_pes

PREDEFINED = [
    "TEAM_INVALID",
    "TEAM_WORLD",
    "TEAM_SHARED",
    "TEAM_NODE",
    "TEAM_SAME_MYPE_NODE",
    "TEAM_SAME_GPU",
    "TEAM_GPU_LEADERS",
]

NAMES = f"""
W = Teams.TEAM_WORLD
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
box = nvshmem.array((1,), dtype="int64")
acc = nvshmem.array((1,), dtype="int64")
BASE = {PREDEFINED!r}
check(Teams.keys() == BASE, f"keys before any team: {{Teams.keys()}}")


def team_sum(team):
    \"\"\"The sum of the world PE numbers of team's members, by a reduce over it.\"\"\"
    box[0] = me
    nvshmem.reduce(team, acc, box, "sum")
    return int(host(acc)[0])


# ---- a named split: every lookup NVSHMEM4Py's Teams has ----
evens = nvshmem.team_split_strided(W, 0, 2, (n + 1) // 2, new_team_name="EVENS")
if me % 2 == 0:
    check(Teams.EVENS is evens and Teams["EVENS"] is evens and evens.name == "EVENS", "lookup")
    check("EVENS" in Teams and int(evens) in Teams and evens in Teams, "in Teams")
    check(Teams.keys() == BASE + ["EVENS"], f"keys {{Teams.keys()}}")
    check(list(Teams)[-1] is evens and Teams.values()[-1] is evens, "iteration")
    check(Teams.items()[-1] == ("EVENS", evens) and len(Teams) == 8, "items")
    check(team_sum(Teams.EVENS) == sum(range(0, n, 2)), "a reduce over Teams.EVENS")
    check(nvshmem.team_n_pes(Teams["EVENS"]) == (n + 1) // 2, "team_n_pes")
else:
    check(evens is None and "EVENS" not in Teams and not hasattr(Teams, "EVENS"), "outside")
    expect_raises(AttributeError, ["EVENS"], getattr, Teams, "EVENS")
    expect_raises(KeyError, ["EVENS"], Teams.__getitem__, "EVENS")
    check(Teams.keys() == BASE, "non-members name nothing")

# ---- NVSHMEM4Py's default names ----
t = nvshmem.team_split_strided(W, 0, 1, n)
check(t.name == f"TEAM_{{int(t)}}" and getattr(Teams, t.name) is t, f"default name {{t!r}}")
x, y = nvshmem.team_split_2d(W, 2)
check(x.name == f"TEAM_X_{{int(x)}}" and y.name == f"TEAM_Y_{{int(y)}}", f"2-D {{x!r}} {{y!r}}")
check(Teams[x.name] is x and Teams[y.name] is y, "2-D default names are in Teams")
gx, gy = nvshmem.team_split_2d(W, 2, new_team_name="GRID")
check(Teams.GRID_X is gx and Teams.GRID_Y is gy, "GRID_X, GRID_Y")
check(team_sum(Teams.GRID_X) == sum(range(me - me % 2, min(me - me % 2 + 2, n))), "x sum")
check(team_sum(Teams.GRID_Y) == sum(range(me % 2, n, 2)), "y sum")

# ---- team_destroy: NVSHMEM4Py's test_team_destroy and its negative cases ----
config = nvshmem.TeamConfig()
config.version = 2
config.num_contexts = 1
config.uniqueid = 12348
team = nvshmem.team_init(config, 0, n, me, new_team_name="TEST_TEAM")
check("TEST_TEAM" in Teams.keys() and team_sum(Teams.TEST_TEAM) == n * (n - 1) // 2, "TEST")
nvshmem.team_destroy(Teams.TEST_TEAM)
check("TEST_TEAM" not in Teams, "destroyed by handle: the name goes")
config.uniqueid = 12349
nvshmem.team_init(config, 0, n, me, new_team_name="NEG_TEST_TEAM")
nvshmem.team_destroy("NEG_TEST_TEAM")
check("NEG_TEST_TEAM" not in Teams, "destroyed by name")
msg = expect_invalid("team_destroy", nvshmem.team_destroy, "NEG_TEST_TEAM")
check("team='NEG_TEST_TEAM' names no live team" in msg, msg)
expect_invalid("team_destroy", nvshmem.team_destroy, "NON_EXISTENT_TEAM")
expect_invalid("team_destroy", nvshmem.team_destroy, "TEAM_WORLD")  # predefined: kept
for name in ("GRID_Y", "GRID_X"):
    nvshmem.team_destroy(name)
for team in (y, x, t):
    nvshmem.team_destroy(team)
if me % 2 == 0:
    nvshmem.team_destroy("EVENS")
check(Teams.keys() == BASE, f"all destroyed: {{Teams.keys()}}")

# ---- a name given twice: a warning, both teams live, the name moves ----
a = nvshmem.team_split_strided(W, 0, 1, n, new_team_name="SAME")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    b = nvshmem.team_split_strided(W, 0, 1, n, new_team_name="SAME")
words = [str(w.message) for w in caught if issubclass(w.category, nvshmem.NvshmemWarning)]
check(len(words) == 1, f"warnings {{words}}")
for word in ("team_split_strided:", "new_team_name='SAME'", f"[pe {{me}}]", str(int(b))):
    check(word in words[0], f"warning {{words[0]!r}} lacks {{word!r}}")
check(Teams.SAME is b and int(a) != int(b) and team_sum(a) == team_sum(b), "both live")
nvshmem.team_destroy(a)
check(Teams.SAME is b, "destroying the old team leaves the name with the new one")
nvshmem.team_destroy("SAME")
check(Teams.keys() == BASE, "SAME gone")

# ---- names refused before the collective: each PE by itself ----
for bad in ("TEAM_WORLD", "TEAM_NODE", "", 5, b"X"):
    msg = expect_invalid("team_split_strided", nvshmem.team_split_strided, W, 0, 1, n,
                         new_team_name=bad)
    check(f"new_team_name={{bad!r}}" in msg, msg)
    expect_invalid("team_split_2d", nvshmem.team_split_2d, W, 1, new_team_name=bad)
    expect_invalid("team_init", nvshmem.team_init, config, 0, n, me, new_team_name=bad)
check(Teams.keys() == BASE, "a refused name made no team")
t = nvshmem.team_split_strided(W, 0, 1, n, new_team_name="AFTER")
check(team_sum(Teams.AFTER) == n * (n - 1) // 2, "a split after the refusals")

# ---- finalize forgets every name ----
nvshmem.finalize()
check(Teams.keys() == BASE and not hasattr(Teams, "AFTER"), "finalize forgets the names")
ok(me)
"""


@pytest.mark.timeout(90)
@pytest.mark.parametrize("n", (1, 2, 3, 4))
def test_teams_by_name(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, "import warnings\n" + NAMES, timeout=60), n)


# NVSHMEM4Py's test_team_unique_id, then a team_init whose PEs meet on one
# TeamUniqueId: half of them pass the object, half its .value.
UNIQUE_ID = """
W = Teams.TEAM_WORLD
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
unique_id1 = nvshmem.get_team_unique_id()
check(unique_id1 is not None and hasattr(unique_id1, "value"), "value attribute")
check(isinstance(unique_id1, nvshmem.TeamUniqueId) and 0 <= unique_id1.value < 2**64, "uint64")
check(nvshmem.get_team_unique_id().value != unique_id1.value, "two ids differ")
src = nvshmem.array((1,), dtype="uint64")
got = nvshmem.array((1,), dtype="uint64")
src[0] = unique_id1.value
nvshmem.broadcast(W, got, src, root=0)
shared = nvshmem.TeamUniqueId(int(host(got)[0]))
config = nvshmem.TeamConfig(version=2, num_contexts=1,
                            uniqueid=shared if me % 2 else shared.value)
team = nvshmem.team_init(config, 0, n, n - 1 - me)
check(nvshmem.team_my_pe(team) == n - 1 - me and nvshmem.team_n_pes(team) == n, "placement")
mine = nvshmem.array((2,), dtype="int64")
everyone = nvshmem.array((2 * n,), dtype="int64")
mine[:] = xp().asarray([me, 10 * me])
nvshmem.fcollect(team, everyone, mine)
check(host(everyone).tolist() == [v for p in reversed(range(n)) for v in (p, 10 * p)],
      f"fcollect over the team: {host(everyone).tolist()}")
nvshmem.team_destroy(team.name)
nvshmem.finalize()
ok(me)
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n", (1, 2, 3))
def test_team_unique_id_meets(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, UNIQUE_ID, timeout=45), n)


# A strided split of a split parent whose last member lies beyond the parent
# but inside the world: NVSHMEM checks only the world and makes the team;
# symmem raises on each member PE, naming the PE it would reach.
BEYOND = """
W = Teams.TEAM_WORLD
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
pair = nvshmem.team_split_strided(W, 0, 1, 2, new_team_name="PAIR")
if pair is not None:
    for start, stride, size, last in ((0, 2, 2, 2), (1, 1, 2, 2), (0, n, 2, n)):
        msg = expect_invalid("team_split_strided", nvshmem.team_split_strided, pair, start,
                             stride, size, new_team_name="FAR")
        for word in (f"start={start}", f"stride={stride}", f"size={size}", f"reaches PE {last}",
                     "beyond the parent's 2 PEs"):
            check(word in msg, f"{msg!r} lacks {word!r}")
    check("FAR" not in Teams, "no team was made")
    inside = nvshmem.team_split_strided(pair, 1, 1, 1)
    check(inside is None or nvshmem.team_n_pes(inside) == 1, "a split inside the pair")
    if inside is not None:
        nvshmem.team_destroy(inside)
    nvshmem.team_destroy("PAIR")
nvshmem.barrier_all()
nvshmem.finalize()
ok(me)
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n", (3, 4))
def test_strided_split_beyond_a_split_parent(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, BEYOND, timeout=45), n)
