"""Starts the gpu backend the way argv[1] says and checks a put ring.

    python -m symmem.run -n 2 tests/gpu/startup.py launcher
    mpirun -np 2 python tests/gpu/startup.py mpi          (or emulated_mpi)
    torchrun --nproc-per-node 2 tests/gpu/startup.py torchrun
    python tests/gpu/startup.py uid <rank> <nranks> <uid file>
    mpirun -np 2 python tests/gpu/startup.py mpirun       (plain init under mpirun)

With SYMMEM_ONE_HOST_PER_PE=1 each PE counts as on a host of its own: init
hands NVSHMEM's id over the launcher's rendezvous (torchrun's TCPStore, MPI).

Every way, the predefined teams must hold the PEs NVSHMEM's teams hold
(asked through the NVSHMEM library the backend loaded; on the symmem engine,
the PEs where they are: every PE on one host, each GPU's), and a reduce on each
must sum its members' numbers.

With uid, the PEs meet through the file (uid_init.py). Under torchrun and
mpirun the job then starts a second time in the same processes.
"""

import ctypes
import os
import sys

import cupy as cp

import symmem as nvshmem
from symmem import _symmem
from uid_init import init_from_file

method = sys.argv[1]
if method in ("mpi", "emulated_mpi"):
    from mpi4py import MPI

    nvshmem.init(mpi_comm=MPI.COMM_WORLD, initializer_method=method)
elif method == "uid":
    init_from_file(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
else:
    nvshmem.init()

me, n = nvshmem.my_pe(), nvshmem.n_pes()
assert nvshmem.get_version().backend == "gpu"
a = nvshmem.array((256,), dtype="int32")
b = nvshmem.array((256,), dtype="int32")
a[:] = me
b[:] = -1
nvshmem.barrier_all()
nvshmem.put(b, a, (me + 1) % n)
nvshmem.barrier_all()
assert bool((b == (me - 1) % n).all()), f"PE {me} got {b[:4]}"


def nvshmem_library():
    """The libnvshmem_host the gpu backend loaded, opened again (not loaded anew)."""
    with open("/proc/self/maps") as maps:
        path = next(line.split()[-1] for line in maps if "libnvshmem_host" in line)
    return ctypes.CDLL(path, mode=os.RTLD_NOLOAD)


def symmem_engine_teams():
    """The predefined teams' members on the symmem engine, from where each
    PE's heap is: one host (WORLD, SHARED, NODE: every PE), and the PEs of
    each GPU (SAME_GPU: this one's; GPU_LEADERS: the first of each)."""
    ours = nvshmem.array((1,), dtype="int64")
    gpus = nvshmem.array((n,), dtype="int64")
    ours[:] = cp.cuda.runtime.getDevice()
    nvshmem.fcollect(nvshmem.Teams.TEAM_WORLD, gpus, ours, stream=None)
    on = [int(x) for x in gpus.get()]
    nvshmem.free_array(ours)
    nvshmem.free_array(gpus)
    leaders = [p for p in range(n) if on.index(on[p]) == p]
    return {
        "TEAM_WORLD": list(range(n)),
        "TEAM_SHARED": list(range(n)),
        "TEAM_NODE": list(range(n)),
        "TEAM_SAME_MYPE_NODE": [me],
        "TEAM_SAME_GPU": [p for p in range(n) if on[p] == on[me]],
        "TEAM_GPU_LEADERS": leaders if me in leaders else [],
    }


# the teams as the engine placed them: NVSHMEM's own, asked through its library
expected = symmem_engine_teams() if nvshmem.get_version().engine == "symmem" else None
lib = nvshmem_library() if expected is None else None
teams = {}
# world-collective allocations, made by every PE whatever teams it is in
src = nvshmem.array((3,), dtype="int64")
dst = nvshmem.array((3,), dtype="int64")
for team in (
    nvshmem.Teams.TEAM_WORLD,
    nvshmem.Teams.TEAM_SHARED,
    nvshmem.Teams.TEAM_NODE,
    nvshmem.Teams.TEAM_SAME_MYPE_NODE,
    nvshmem.Teams.TEAM_SAME_GPU,
    nvshmem.Teams.TEAM_GPU_LEADERS,
):
    if expected is not None and not expected[team.name]:
        # not in it (GPU_LEADERS, this PE not its GPU's first): a query raises
        try:
            nvshmem.team_n_pes(team)
        except nvshmem.NvshmemInvalid as e:
            assert "not a member" in str(e), e
            continue
        raise AssertionError(f"PE {me}: {team.name} answered, but this PE is not in it")
    size = nvshmem.team_n_pes(team)
    members = [nvshmem.team_translate_pe(team, i, nvshmem.Teams.TEAM_WORLD) for i in range(size)]
    if expected is not None:
        assert members == expected[team.name], f"PE {me}: {team.name} holds {members}"
        assert nvshmem.team_my_pe(team) == members.index(me), team.name
    else:
        theirs = [
            lib.nvshmem_team_translate_pe(int(team), i, 0)
            for i in range(lib.nvshmem_team_n_pes(int(team)))
        ]
        assert members == theirs, f"PE {me}: {team.name} holds {members}, NVSHMEM's {theirs}"
        assert nvshmem.team_my_pe(team) == lib.nvshmem_team_my_pe(int(team)) >= 0, team.name
    src[:] = me + 1
    nvshmem.reduce(team, dst, src, "sum", stream=None)
    assert int(dst[2]) == sum(m + 1 for m in members), f"PE {me}: {team.name} sum {dst}"
    teams[team.name.replace("TEAM_", "")] = members
device = cp.cuda.runtime.getDevice()
nvshmem.free_array(src)
nvshmem.free_array(dst)
nvshmem.free_array(a)
nvshmem.free_array(b)
nvshmem.finalize()
spans = _symmem.launcher()["spans_hosts"] if method != "uid" else ""
print(f"PE {me} of {n} OK via {method} on cuda:{device} (hosts: {spans or 'one'})")
print(f"PE {me} teams: {teams}")
if method in ("torchrun", "mpirun"):
    # the job's second init hands over a new id (under a key of its own in
    # torchrun's store) and meets again
    nvshmem.init()
    nvshmem.barrier_all()
    nvshmem.finalize()
    print(f"PE {me} started again via {method}")
