"""Ways to start PEs other than the launcher: a unique id handed around by the
test, mpi4py (initializer_method "mpi" and "emulated_mpi", and plain init()
under mpirun), torchrun's variables, and no launcher at all (one PE)."""

import pickle
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import symmem
from conftest import (
    clean_env,
    cpu_only,
    not_on_mpi,
    require_gpus,
    run_plain,
    wait_all,
    write_program,
)

# The mpi backend's PEs are the processes of one MPI job: these start plain
# processes under torchrun's variables, a unique id or none, and check the
# cpu engine's start-up; test_mpi_backend.py tests the mpi backend's.
pytestmark = not_on_mpi(
    "plain processes under launchers' variables are no MPI job; "
    "test_mpi_backend.py starts the mpi backend's"
)

# After init, every PE checks who it is, then puts into the next PE and
# checks what it got from the previous one.
RING_CHECK = """
def ring_check(expected_me, expected_n):
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    check(me == expected_me, f"my_pe {me} != {expected_me}")
    check(n == expected_n, f"n_pes {n} != {expected_n}")
    want = "gpu" if os.environ.get("SYMMEM_BACKEND") == "gpu" else "cpu"
    check(nvshmem.get_version().backend == want, f"backend {nvshmem.get_version().backend!r}")
    check(nvshmem.init_status() == nvshmem.InitStatus.STATUS_IS_INITIALIZED, "status")
    src = nvshmem.array((6,), dtype="int64")
    dst = nvshmem.array((6,), dtype="int64")
    src[:] = xp().asarray(np.arange(6) + 100 * me)
    dst[:] = -1
    nvshmem.barrier_all()
    nvshmem.put(dst, src, (me + 1) % n)
    nvshmem.barrier_all()
    prv = (me - 1) % n
    check_equal(dst, np.arange(6) + 100 * prv, "ring put")
    nvshmem.barrier_all()
    nvshmem.free_array(src)
    nvshmem.free_array(dst)
    print(f"PE {me} received from PE {prv}", flush=True)
    ok()
    nvshmem.finalize()
"""


def check_outputs(results, n):
    """Every process exited 0 and printed its OK line (in any order)."""
    seen = []
    for rc, out, err in results:
        assert rc == 0, f"rc={rc}\nstdout:\n{out}\nstderr:\n{err}"
        seen += [line for line in out.splitlines() if line.endswith(" OK")]
    assert sorted(seen) == sorted(f"PE {pe} OK" for pe in range(n)), seen


# ---------------------------------------------------------------- unique ids


def test_unique_id_round_trips():
    uid = symmem.get_unique_id()  # needs no init
    assert isinstance(uid, symmem.UniqueID)
    raw = bytes(uid)
    assert len(raw) == symmem.UniqueID.SIZE and raw != bytes(len(raw))
    assert symmem.UniqueID.from_bytes(raw) == uid
    assert bytes(symmem.UniqueID.from_bytes(raw)) == raw
    assert pickle.loads(pickle.dumps(uid)) == uid
    assert bytes(pickle.loads(pickle.dumps(uid))) == raw
    assert hash(symmem.UniqueID.from_bytes(raw)) == hash(uid)
    # two ids differ
    assert symmem.get_unique_id() != uid
    # an empty one is all zeros, ready to receive
    empty = symmem.get_unique_id(empty=True)
    assert bytes(empty) == bytes(symmem.UniqueID.SIZE)
    assert bytes(symmem.get_unique_id(empty=np.bool_(True))) == bytes(symmem.UniqueID.SIZE)
    with pytest.raises(symmem.NvshmemInvalid, match=r"get_unique_id: empty=array\(\[\], "):
        symmem.get_unique_id(empty=np.zeros(0))
    # _data: a writable uint8 NumPy view of the bytes (the seeds Bcast it as int8)
    data = empty._data
    assert isinstance(data, np.ndarray) and data.dtype == np.uint8
    assert data.flags.writeable and data.nbytes == symmem.UniqueID.SIZE
    as_int8 = data.view(np.int8)
    as_int8[:] = np.frombuffer(raw, dtype=np.int8)  # what comm.Bcast does
    assert bytes(empty) == raw and empty == uid
    empty._data[0] ^= 0xFF
    assert bytes(empty)[0] == raw[0] ^ 0xFF
    with pytest.raises(symmem.NvshmemInvalid):
        symmem.UniqueID.from_bytes(raw[:-1])


# These tests make the uid in the test process and hand it to the PEs; NVSHMEM's
# uid names a socket of the process that made it (tests/gpu/startup.py covers
# uid start-up on GPUs, with PE 0 making the uid).
uid_made_by_the_test = cpu_only(
    "the test process makes the uid for PEs it starts itself, and "
    "NVSHMEM's uid names a socket of the process that made it"
)

UID_PROGRAM = """
rank, nranks, uid_file, how = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(uid_file, "rb") as f:
    raw = f.read()
uid = pickle.loads(raw) if how == "pickle" else nvshmem.UniqueID.from_bytes(raw)
check(nvshmem.init_status() == nvshmem.InitStatus.STATUS_NOT_INITIALIZED, "status")
nvshmem.init(uid=uid, rank=rank, nranks=nranks, initializer_method="uid")
nvshmem.init(uid=uid, rank=rank, nranks=nranks, initializer_method="uid")  # harmless
ring_check(rank, nranks)
"""


@uid_made_by_the_test
@pytest.mark.parametrize("n, how", [(1, "bytes"), (2, "bytes"), (3, "pickle"), (4, "bytes")])
def test_uid_bootstrap(tmp_path, n, how):
    uid = symmem.get_unique_id()
    uid_file = tmp_path / "uid"
    uid_file.write_bytes(pickle.dumps(uid) if how == "pickle" else bytes(uid))
    prog = write_program(tmp_path, RING_CHECK + UID_PROGRAM)
    procs = [run_plain(prog, [rank, n, uid_file, how]) for rank in range(n)]
    check_outputs(wait_all(procs, timeout=60), n)


@uid_made_by_the_test
def test_two_uid_jobs_side_by_side(tmp_path):
    # Two jobs with different ids do not mix, even with the same ranks.
    prog = write_program(tmp_path, RING_CHECK + UID_PROGRAM)
    procs = []
    for job in range(2):
        uid_file = tmp_path / f"uid{job}"
        uid_file.write_bytes(bytes(symmem.get_unique_id()))
        procs += [run_plain(prog, [rank, 2, uid_file, "bytes"]) for rank in range(2)]
    results = wait_all(procs, timeout=60)
    check_outputs(results[:2], 2)
    check_outputs(results[2:], 2)


# ---------------------------------------------------------------- MPI


def mpiexec_path():
    path = Path(sys.executable).parent / "mpiexec"
    if not path.exists():
        pytest.skip(f"no mpiexec next to {sys.executable}")
    pytest.importorskip("mpi4py")
    return path


MPI_PROGRAM = """
from mpi4py import MPI
comm = MPI.COMM_WORLD
how = sys.argv[1]
if how == "mpi":
    nvshmem.init(mpi_comm=comm, initializer_method="mpi")
elif how == "emulated_mpi":
    nvshmem.init(initializer_method="emulated_mpi")       # COMM_WORLD by default
elif how == "seed_bcast":
    # the seeds' way: rank 0 makes the id, MPI broadcasts its bytes
    uid = nvshmem.get_unique_id(empty=comm.Get_rank() != 0)
    comm.Bcast(uid._data.view(np.int8), root=0)
    nvshmem.init(uid=uid, rank=comm.Get_rank(), nranks=comm.Get_size(),
                 initializer_method="uid")
else:
    nvshmem.init()                                        # mpirun's variables
ring_check(comm.Get_rank(), comm.Get_size())
"""


@pytest.mark.parametrize("how", ["mpi", "emulated_mpi", "seed_bcast", "auto"])
def test_mpi_bootstrap(tmp_path, how):
    mpiexec = mpiexec_path()
    prog = write_program(tmp_path, RING_CHECK + MPI_PROGRAM)
    env = clean_env({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    proc = subprocess.run(
        [str(mpiexec), "-n", "2", "--oversubscribe", sys.executable, str(prog), how],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    check_outputs([(proc.returncode, proc.stdout, proc.stderr)], 2)


# ---------------------------------------------------------------- torchrun

TORCHRUN_PROGRAM = """
nvshmem.init()
ring_check(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
"""


@pytest.mark.parametrize("n", [2, 3])
def test_torchrun_environment(tmp_path, n):
    require_gpus(n)
    prog = write_program(tmp_path, RING_CHECK + TORCHRUN_PROGRAM)
    port = str(random.randint(20000, 60000))
    procs = [
        run_plain(
            prog,
            env={
                "RANK": str(rank),
                "WORLD_SIZE": str(n),
                "LOCAL_RANK": str(rank),
                "LOCAL_WORLD_SIZE": str(n),
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": port,
            },
        )
        for rank in range(n)
    ]
    check_outputs(wait_all(procs, timeout=60), n)


# ---------------------------------------------------------------- no launcher


def test_no_launcher_is_one_pe(tmp_path):
    prog = write_program(
        tmp_path,
        RING_CHECK
        + """
nvshmem.init()
ring_check(0, 1)
""",
    )
    [(rc, out, err)] = wait_all([run_plain(prog)], timeout=60)
    assert rc == 0, err
    assert out.splitlines() == ["PE 0 received from PE 0", "PE 0 OK"], out + err


def test_launcher_with_one_pe(run_pes):
    # device= takes an ordinal; the cpu backend has nothing to choose
    result = run_pes(
        1,
        RING_CHECK
        + """
nvshmem.init(device=0)
ring_check(0, 1)
""",
    )
    assert result.rc == 0, str(result)
    assert result.lines(0) == ["PE 0 received from PE 0", "PE 0 OK"], str(result)


# ---------------------------------------------------------------- several hosts

PLACEMENT = """
import json
from symmem import _symmem
print(json.dumps(_symmem.launcher(backend="cpu")))
"""


@pytest.mark.parametrize(
    "variables, launcher, spans",
    [
        ({}, "", ""),
        (
            {"RANK": "1", "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2"},
            "torchrun",
            "LOCAL_WORLD_SIZE=2 < WORLD_SIZE=4",
        ),
        ({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2"}, "torchrun", ""),
        (
            {
                "OMPI_COMM_WORLD_RANK": "0",
                "OMPI_COMM_WORLD_SIZE": "8",
                "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
            },
            "mpirun",
            "OMPI_COMM_WORLD_LOCAL_SIZE=4 < OMPI_COMM_WORLD_SIZE=8",
        ),
        (
            {"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_STEP_NUM_NODES": "2"},
            "srun",
            "SLURM_STEP_NUM_NODES=2",
        ),
        (
            {
                "RANK": "1",
                "WORLD_SIZE": "2",
                "LOCAL_WORLD_SIZE": "2",
                "SYMMEM_ONE_HOST_PER_PE": "1",
            },
            "torchrun",
            "SYMMEM_ONE_HOST_PER_PE=1",
        ),
    ],
)
def test_init_knows_when_the_launcher_spreads_pes_over_hosts(tmp_path, variables, launcher, spans):
    import json

    prog = write_program(tmp_path, PLACEMENT, prelude=False)
    [(rc, out, err)] = wait_all([run_plain(prog, env=variables)], timeout=60)
    assert rc == 0, err
    job = json.loads(out)
    assert (job["launcher"], job["spans_hosts"]) == (launcher, spans), job
    assert job["rank"] == int(
        variables.get(
            "RANK", variables.get("OMPI_COMM_WORLD_RANK", variables.get("SLURM_PROCID", 0))
        )
    ), job
    assert job["backend"] == "cpu", job
    if "SYMMEM_ONE_HOST_PER_PE" in variables:  # a host of its own, for symmem's logic
        assert job["host"].endswith(f"/pe{job['rank']}"), job


@cpu_only("the gpu backend starts across hosts (test_gpu.py)")
def test_the_cpu_backend_refuses_pes_on_several_hosts_at_once(run_pes):
    result = run_pes(
        2,
        """
try:
    nvshmem.init()
except nvshmem.NvshmemError as error:
    check("the cpu backend runs on one host" in str(error), str(error))
    check("SYMMEM_ONE_HOST_PER_PE=1" in str(error), str(error))
    print(f"PE {os.environ['SYMMEM_RANK']} OK", flush=True)  # no PE number without init
""",
        env={"SYMMEM_ONE_HOST_PER_PE": "1"},
        timeout=30,
    )
    assert result.rc == 0, str(result)
    assert result.elapsed < 20, str(result)  # at once, not after the 120 s start-up wait
    for pe in range(2):
        assert result.lines(pe) == [f"PE {pe} OK"], str(result)


RENDEZVOUS = """
import time
from symmem import _rendezvous, _symmem
job = _symmem.launcher(backend="cpu")
check(job["spans_hosts"] != "", str(job))
# Two rounds, as two inits of one job: round 1 must hand over round 1's id,
# never round 0's, though PE 0 makes it late
for round in range(2):
    made = []
    def make_uid():
        made.append(1)
        return bytes(range(7 + round, 7 + round + _symmem.UNIQUE_ID_SIZE))
    if round == 1 and job["rank"] == 0:
        time.sleep(0.5)
    uid = _rendezvous.uid_across_hosts(make_uid, job)
    check(uid == bytes(range(7 + round, 7 + round + _symmem.UNIQUE_ID_SIZE)),
          f"PE {job['rank']} got {uid[:8]} in round {round}")
    check(len(made) == (job["rank"] == 0), f"make_uid called {len(made)} times")
print(f"PE {job['rank']} OK", flush=True)
"""


def test_the_unique_id_crosses_hosts_over_mpi(tmp_path):
    # mpirun's job on "several hosts": PE 0's id reaches every PE through MPI
    mpiexec = mpiexec_path()
    prog = write_program(tmp_path, RENDEZVOUS)
    env = clean_env(
        {
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "SYMMEM_ONE_HOST_PER_PE": "1",
        }
    )
    proc = subprocess.run(
        [str(mpiexec), "-n", "3", "--oversubscribe", sys.executable, str(prog)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    check_outputs([(proc.returncode, proc.stdout, proc.stderr)], 3)


def test_the_unique_id_crosses_hosts_over_torchruns_store(tmp_path):
    # torchrun's job on "several hosts": through the TCPStore at MASTER_ADDR,
    # served by torchrun's agent; then PE 0 serving it, as without the agent
    pytest.importorskip("torch.distributed")
    prog = write_program(tmp_path, RENDEZVOUS)
    env = clean_env({"SYMMEM_ONE_HOST_PER_PE": "1"})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-port",
            str(random.randint(20000, 60000)),
            str(prog),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    check_outputs([(proc.returncode, proc.stdout, proc.stderr)], 2)
    port = str(random.randint(20000, 60000))
    procs = [
        run_plain(
            prog,
            env={
                "RANK": str(rank),
                "WORLD_SIZE": "2",
                "LOCAL_RANK": "0",
                "LOCAL_WORLD_SIZE": "1",
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": port,
            },
        )
        for rank in range(2)
    ]
    results = wait_all(procs, timeout=60)
    check_outputs(results, 2)


# Each launcher's variables, malformed: init refuses them naming the variable
# and its value, where it used to start a world of one PE in each process.
MALFORMED_LAUNCHES = [
    (
        {"SYMMEM_RANK": "-1", "SYMMEM_NRANKS": "2", "SYMMEM_JOB": "j"},
        "init: SYMMEM_RANK='-1' is not a whole number >= 0",
    ),
    (
        {"SYMMEM_RANK": "x", "SYMMEM_NRANKS": "2", "SYMMEM_JOB": "j"},
        "init: SYMMEM_RANK='x' is not a whole number >= 0",
    ),
    (
        {"SYMMEM_RANK": "0", "SYMMEM_NRANKS": "-3", "SYMMEM_JOB": "j"},
        "init: SYMMEM_NRANKS='-3' is not a whole number >= 0",
    ),
    (
        {"SYMMEM_NRANKS": "-3"},
        "SYMMEM_NRANKS='-3' and SYMMEM_JOB='': python -m symmem.run sets all three",
    ),
    (
        {"SYMMEM_RANK": "0", "SYMMEM_NRANKS": "2"},
        "init: SYMMEM_RANK='0', SYMMEM_NRANKS='2' and SYMMEM_JOB=''",
    ),
    (
        {"SYMMEM_RANK": "2", "SYMMEM_NRANKS": "2", "SYMMEM_JOB": "j"},
        "init: SYMMEM_RANK=2 is outside [0, SYMMEM_NRANKS=2)",
    ),
    ({"RANK": "-1", "WORLD_SIZE": "2"}, "init: RANK='-1' is not a whole number >= 0"),
    (
        {"RANK": "0", "WORLD_SIZE": "1000000000"},
        "init: WORLD_SIZE=1000000000 is more than symmem runs (at most 1048576 PEs)",
    ),
    ({"RANK": "0", "WORLD_SIZE": "0"}, "init: WORLD_SIZE=0: a job has at least 1 PE"),
    (
        {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "two"},
        "init: LOCAL_WORLD_SIZE='two' is not a whole number >= 0",
    ),
    (
        {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "-1"},
        "init: LOCAL_RANK='-1' is not a whole number >= 0",
    ),
    (
        {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2x"},
        "init: OMPI_COMM_WORLD_SIZE='2x' is not a whole number >= 0",
    ),
    (
        {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "2"},
        "init: OMPI_COMM_WORLD_RANK=3 is outside [0, OMPI_COMM_WORLD_SIZE=2)",
    ),
    (
        {
            "OMPI_COMM_WORLD_RANK": "0",
            "OMPI_COMM_WORLD_SIZE": "2",
            "OMPI_COMM_WORLD_LOCAL_SIZE": "-2",
        },
        "init: OMPI_COMM_WORLD_LOCAL_SIZE='-2' is not a whole number >= 0",
    ),
    (
        {"SLURM_PROCID": "0", "SLURM_NTASKS": "-2"},
        "init: SLURM_NTASKS='-2' is not a whole number >= 0",
    ),
    (
        {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_STEP_NUM_NODES": "x"},
        "init: SLURM_STEP_NUM_NODES='x' is not a whole number >= 0",
    ),
    (
        {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_NTASKS_PER_NODE": "1.5"},
        "init: SLURM_NTASKS_PER_NODE='1.5' is not a whole number >= 0",
    ),
    (
        {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "a"},
        "init: SLURM_LOCALID='a' is not a whole number >= 0",
    ),
    ({"PMI_RANK": "0", "PMI_SIZE": "1e3"}, "init: PMI_SIZE='1e3' is not a whole number >= 0"),
]

MALFORMED_LAUNCH = """
import json, re
from symmem import _symmem
LAUNCHER_VARS = re.compile(sys.argv[1])
for variables, words in json.loads(sys.argv[2]):
    for name in [name for name in os.environ if LAUNCHER_VARS.match(name)]:
        del os.environ[name]
    os.environ.update(variables)
    msg = expect_raises(nvshmem.NvshmemInvalid, [words], nvshmem.init)
    check(msg.startswith("init: ") and not nvshmem._symmem.initialized(), msg)
    expect_raises(nvshmem.NvshmemInvalid, [words], _symmem.launcher)
for name in [name for name in os.environ if LAUNCHER_VARS.match(name)]:
    del os.environ[name]
uid = nvshmem.get_unique_id()
expect_raises(nvshmem.NvshmemInvalid, ["init: nranks=2097152 is outside [1, 1048576]"],
              nvshmem.init, uid=uid, rank=0, nranks=2 ** 21, initializer_method="uid")
nvshmem.init()  # unset, they leave a world of one PE
check(nvshmem.n_pes() == 1, f"n_pes {nvshmem.n_pes()}")
nvshmem.finalize()
print("OK", flush=True)
"""


def test_init_refuses_malformed_launcher_variables(tmp_path):
    import json

    from conftest import LAUNCHER_VARS

    prog = write_program(tmp_path, MALFORMED_LAUNCH)
    [(rc, out, err)] = wait_all(
        [run_plain(prog, args=[LAUNCHER_VARS.pattern, json.dumps(MALFORMED_LAUNCHES)])], timeout=60
    )
    assert rc == 0 and out.strip() == "OK", out + err
