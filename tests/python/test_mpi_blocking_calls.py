"""The mpi backend's blocking MPI calls, bounded: MPI calls with no
non-blocking form (window allocations, communicator splits, MPI_Init_thread)
on a PE that dies, stops or never returns inside one. A PMPI interposer,
preloaded, makes the chosen PE do so as it enters the named call; the
others must raise naming it, within seconds, and never hang."""

import os
import re
import subprocess
import sys

import pytest

from test_mpi_backend import NODE_PATH, ONE_HOST_PER_PE, needs_mpi

pytestmark = needs_mpi


# A PMPI interposer, for the tests only: the PE whose environment names an
# MPI call in SYMMEM_TEST_DIE_IN dies (SIGKILL) as it enters that call, in
# SYMMEM_TEST_STOP_IN stops (SIGSTOP), or in SYMMEM_TEST_HANG_IN never
# returns from it, so the others are left inside that very call, which has
# no non-blocking form
# (src/backends/mpi/helper.c makes it on a thread of its own and polls).
# Not linked against libmpi (LD_PRELOAD puts it in mpirun too): it finds
# MPI's own entry point in the libmpi the backend loaded.
DIE_IN = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *real(const char *name)
{
    void *lib = dlopen("libmpi.so.40", RTLD_NOLOAD | RTLD_NOW);
    return lib ? dlsym(lib, name) : NULL;
}

static void die_in(const char *name)
{
    const char *die = getenv("SYMMEM_TEST_DIE_IN"), *stop = getenv("SYMMEM_TEST_STOP_IN");
    const char *hang = getenv("SYMMEM_TEST_HANG_IN");
    if (die != NULL && strcmp(die, name) == 0) raise(SIGKILL);
    if (stop != NULL && strcmp(stop, name) == 0) raise(SIGSTOP);
    while (hang != NULL && strcmp(hang, name) == 0) pause(); /* this thread only */
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    die_in("MPI_Init_thread");
    return ((int (*)(int *, char ***, int, int *))real("PMPI_Init_thread"))(argc, argv, required,
                                                                           provided);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    die_in("MPI_Comm_split");
    return ((int (*)(MPI_Comm, int, int, MPI_Comm *))real("PMPI_Comm_split"))(comm, color, key,
                                                                              out);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *out)
{
    die_in("MPI_Comm_create_group");
    return ((int (*)(MPI_Comm, MPI_Group, int, MPI_Comm *))real("PMPI_Comm_create_group"))(
        comm, group, tag, out);
}

int MPI_Win_allocate(MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, void *base,
                     MPI_Win *win)
{
    die_in("MPI_Win_allocate");
    return ((int (*)(MPI_Aint, int, MPI_Info, MPI_Comm, void *, MPI_Win *))real(
        "PMPI_Win_allocate"))(size, unit, info, comm, base, win);
}

int MPI_Win_allocate_shared(MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, void *base,
                            MPI_Win *win)
{
    die_in("MPI_Win_allocate_shared");
    return ((int (*)(MPI_Aint, int, MPI_Info, MPI_Comm, void *, MPI_Win *))real(
        "PMPI_Win_allocate_shared"))(size, unit, info, comm, base, win);
}
"""


@pytest.fixture(scope="module")
def die_in_shim(tmp_path_factory):
    """The interposer above, built with mpicc (compiled only, not linked
    against libmpi); its path, for LD_PRELOAD."""
    mpicc = os.path.join(os.path.dirname(sys.executable), "mpicc")
    if not os.access(mpicc, os.X_OK):
        pytest.skip("no mpicc beside this Python (Open MPI's wheel)")
    folder = tmp_path_factory.mktemp("die_in")
    (folder / "die_in.c").write_text(DIE_IN)
    obj, lib = folder / "die_in.o", folder / "die_in.so"
    subprocess.run([mpicc, "-fPIC", "-c", "-o", obj, folder / "die_in.c"], check=True)
    subprocess.run(["cc", "-shared", "-o", lib, obj, "-ldl"], check=True)
    return str(lib)


# PE 2 dies where PEs 0 and 1 are in a symmem call that makes a blocking MPI
# call (named: PE 2 dies as it enters it), or (malloc) before the call.
DIES_IN = """
    WHERE, MPI_CALL = sys.argv[1], sys.argv[2]
    rank = int(os.environ["SYMMEM_RANK"])
    started = time.monotonic()

    def pe_2_dies():
        if rank == 2 and MPI_CALL == "-":
            os.kill(os.getpid(), signal.SIGKILL)
        elif rank == 2:
            os.environ["SYMMEM_TEST_DIE_IN"] = MPI_CALL

    try:
        if WHERE == "init":
            pe_2_dies()
        nvshmem.init()
        nvshmem.barrier_all()
        if WHERE != "init":
            pe_2_dies()
            started = time.monotonic()
        if WHERE == "team_split":
            nvshmem.team_split_strided(nvshmem.Teams.TEAM_WORLD, 0, 1, 3)
        elif WHERE == "team_init":
            nvshmem.team_init(nvshmem.TeamConfig(uniqueid=12345), 0, 3, rank)
        elif WHERE == "array":  # malloc
            nvshmem.array((4,), dtype="int64")
    except nvshmem.NvshmemError as error:
        print(f"PE {rank} caught: {error}", flush=True)
        print(f"PE {rank} waited {time.monotonic() - started:.1f} s", flush=True)
        time.sleep(1.0)
        os._exit(0)
    print(f"PE {rank} was not told that PE 2 died", flush=True)
    os._exit(3)
"""


@pytest.mark.parametrize(
    "where, mpi_call, env",
    [
        ("init", "MPI_Win_allocate", ONE_HOST_PER_PE),
        ("init", "MPI_Win_allocate_shared", NODE_PATH),
        ("team_split", "MPI_Comm_split", ONE_HOST_PER_PE),
        ("team_init", "MPI_Comm_create_group", ONE_HOST_PER_PE),
        ("array", "-", ONE_HOST_PER_PE),
    ],
    ids=["init-rma", "init-node", "team_split", "team_init", "malloc"],
)
def test_a_pe_killed_in_a_blocking_mpi_call_ends_the_others(
    run_pes, die_in_shim, where, mpi_call, env
):
    env = {**env, "LD_PRELOAD": die_in_shim}
    result = run_pes(3, DIES_IN, timeout=60, env=env, args=[where, mpi_call])
    assert result.rc == 137, str(result)
    assert result.elapsed < 30, str(result)
    for pe in (0, 1):
        caught = [line for line in result.lines(pe) if line.startswith(f"PE {pe} caught: ")]
        assert len(caught) == 1, str(result)
        assert f"[pe {pe}] {where}: PE 2 (pid " in caught[0], caught[0]
        assert "killed by signal 9" in caught[0], caught[0]
        if mpi_call != "-":
            assert caught[0].endswith(f"; this PE was in {mpi_call}"), caught[0]


# PE 2 stops (SIGSTOP) as it enters MPI_Comm_split in team_split: PEs 0 and
# 1, inside it too, raise once PE 2 has been silent for SYMMEM_HEARTBEAT_S,
# or (no heartbeat limit) at SYMMEM_TIMEOUT; then PE 0 kills PE 2.
STOPS_IN = """
    nvshmem.init()
    me = nvshmem.my_pe()
    pid = nvshmem.array((1,), dtype="int64")
    pid[0] = os.getpid()
    nvshmem.barrier_all()
    got = np.zeros(1, dtype="int64")
    nvshmem.get(got, pid, remote_pe=2)
    nvshmem.barrier_all()
    if me == 2:
        os.environ["SYMMEM_TEST_STOP_IN"] = "MPI_Comm_split"
    try:
        nvshmem.team_split_strided(nvshmem.Teams.TEAM_WORLD, 0, 1, 3)
    except nvshmem.NvshmemError as error:
        print(f"PE {me} caught: {error}", flush=True)
    if me == 0:
        time.sleep(0.5)
        os.kill(int(got[0]), signal.SIGKILL)
    time.sleep(1.0)
    os._exit(0)
"""


@pytest.mark.parametrize(
    "bound, said",
    [
        ({"SYMMEM_HEARTBEAT_S": "2"}, r"team_split: PE 2 \(pid \d+\) fell silent"),
        (
            {"SYMMEM_HEARTBEAT_S": "0", "SYMMEM_TIMEOUT": "3"},
            r"team_split: timed out after 3\.\d s \(SYMMEM_TIMEOUT=3\)",
        ),
    ],
    ids=["heartbeat", "timeout"],
)
def test_a_pe_stopped_in_a_blocking_mpi_call_ends_the_others(run_pes, die_in_shim, bound, said):
    env = {**ONE_HOST_PER_PE, **bound, "LD_PRELOAD": die_in_shim}
    result = run_pes(3, STOPS_IN, timeout=60, env=env)
    assert result.rc == 137, str(result)
    assert result.elapsed < 30, str(result)
    for pe in (0, 1):
        caught = [line for line in result.lines(pe) if line.startswith(f"PE {pe} caught: ")]
        assert len(caught) == 1, str(result)
        assert re.search(said, caught[0]), caught[0]
        assert caught[0].endswith("; this PE was in MPI_Comm_split"), caught[0]


# PE 1 never returns from MPI_Init_thread (its launcher's runtime stopped
# answering, as the interposer makes it), and PE 0 waits for it inside the
# same call: MPI has no bound there, so with SYMMEM_TIMEOUT set a watchdog
# ends the process, saying why (start.c), SYMMEM_TIMEOUT and 10 s (MPI's
# own start-up) after the call began. Whichever PE's watchdog ends first
# ends the job (mpirun stops the other).
HANGS_IN_INIT = """
    rank = int(os.environ["SYMMEM_RANK"])
    if rank == 1:
        os.environ["SYMMEM_TEST_HANG_IN"] = "MPI_Init_thread"
    try:
        nvshmem.init()
        nvshmem.barrier_all()
    except nvshmem.NvshmemError as error:
        print(f"PE {rank} caught: {error}", flush=True)
        os._exit(2)
    print(f"PE {rank} was not stopped", flush=True)
"""


def test_mpi_init_that_never_returns_ends_at_symmem_timeout(run_pes, die_in_shim):
    env = {**ONE_HOST_PER_PE, "SYMMEM_TIMEOUT": "3", "LD_PRELOAD": die_in_shim}
    result = run_pes(2, HANGS_IN_INIT, timeout=60, env=env)
    assert result.rc != 0, str(result)
    assert 13 <= result.elapsed < 40, str(result)
    said = (
        r"symmem: init: MPI_Init_thread on PE [01] did not return within 13 s "
        r"\(SYMMEM_TIMEOUT=3 s, and 10 s for MPI's own start-up; it meets every process of "
        r"the job through the launcher's runtime\); ending the process"
    )
    assert re.search(said, result.stderr), str(result)
    assert "was not stopped" not in result.stdout, str(result)
