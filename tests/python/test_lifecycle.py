"""init/finalize, init_status, get_version, my_pe/n_pes, Teams, barriers, and the
symmem.core alias, at 1..4 PEs."""

import subprocess
import sys

import pytest

import symmem
from conftest import assert_all_ok, clean_env, cpu_only, write_program

N_PES = (1, 2, 3, 4)


def test_enum_values():
    Teams, S = symmem.Teams, symmem.InitStatus
    assert [(t.name, int(t)) for t in Teams] == [
        ("TEAM_INVALID", -1),
        ("TEAM_WORLD", 0),
        ("TEAM_SHARED", 1),
        ("TEAM_NODE", 2),
        ("TEAM_SAME_MYPE_NODE", 3),
        ("TEAM_SAME_GPU", 4),
        ("TEAM_GPU_LEADERS", 5),
    ]
    assert (
        S.STATUS_NOT_INITIALIZED,
        S.STATUS_IS_BOOTSTRAPPED,
        S.STATUS_IS_INITIALIZED,
        S.STATUS_LIMITED_MPG,
        S.STATUS_FULL_MPG,
    ) == (0, 1, 2, 3, 4)
    assert hasattr(S, "STATUS_INVALID")
    assert int(S.STATUS_INVALID) not in (0, 1, 2, 3, 4)
    assert (int(symmem.SignalOp.SIGNAL_SET), int(symmem.SignalOp.SIGNAL_ADD)) == (9, 10)
    C = symmem.ComparisonType
    assert [(c.name, int(c)) for c in C] == [
        ("CMP_EQ", 0),
        ("CMP_NE", 1),
        ("CMP_GT", 2),
        ("CMP_LE", 3),
        ("CMP_LT", 4),
        ("CMP_GE", 5),
    ]


def test_status_and_version_before_init():
    # Only queries here: this process never initialises symmem.
    assert symmem.init_status() == symmem.InitStatus.STATUS_NOT_INITIALIZED
    v = symmem.get_version()
    for field in (
        "openshmem_spec_version",
        "nvshmem4py_version",
        "libnvshmem_version",
        "symmem_version",
        "backend",
    ):
        assert isinstance(getattr(v, field), str), field
    assert v.symmem_version == symmem.__version__


def test_core_alias_module():
    import symmem.core as core

    assert core.core is core
    for name in (
        "array",
        "put",
        "get",
        "init",
        "finalize",
        "signal_wait",
        "Teams",
        "NvshmemError",
        "NvshmemInvalid",
        "interop",
        "get_unique_id",
        "barrier_all",
    ):
        assert hasattr(core, name), name
        assert hasattr(core.core, name), name
    assert core.core.array is symmem.array
    assert core.put is symmem.put


LIFECYCLE = """
    import re
    N = int(sys.argv[1])
    S = nvshmem.InitStatus
    check(nvshmem.init_status() == S.STATUS_NOT_INITIALIZED, "status before init")
    check(int(nvshmem.init_status()) == 0, "status before init is 0")
    nvshmem.init()
    nvshmem.init()  # a second init is harmless
    check(nvshmem.init_status() == S.STATUS_IS_INITIALIZED, "status after init")
    check(int(nvshmem.init_status()) == 2, "STATUS_IS_INITIALIZED == 2")

    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    check(me == int(os.environ["SYMMEM_RANK"]), f"my_pe {me} != launcher rank")
    check(n == N, f"n_pes {n} != {N}")
    check(isinstance(me, int) and isinstance(n, int), "my_pe/n_pes are ints")

    v = nvshmem.get_version()
    want = os.environ.get("SYMMEM_BACKEND") if os.environ.get("SYMMEM_BACKEND") in ("gpu", "mpi") \
        else "cpu"
    check(v.backend == want, f"backend {v.backend!r}, expected {want!r}")
    if want == "gpu":  # NVSHMEM's version, as it reports it
        check(re.fullmatch(r"[0-9]+[.][0-9]+[.][0-9]+", v.libnvshmem_version),
              f"libnvshmem_version {v.libnvshmem_version!r}")
    elif want == "mpi":  # the MPI library's ("Open MPI v5.0.11")
        check(v.libnvshmem_version != "", "libnvshmem_version names the MPI")
    else:
        check(v.libnvshmem_version == "", f"libnvshmem_version {v.libnvshmem_version!r}")
    check(v.symmem_version == nvshmem.__version__, "symmem_version")
    check(v.nvshmem4py_version == v.symmem_version, "nvshmem4py_version is symmem's")
    check(isinstance(v.openshmem_spec_version, str) and v.openshmem_spec_version,
          "openshmem_spec_version")

    T = nvshmem.Teams
    check(nvshmem.team_my_pe(T.TEAM_WORLD) == me, "team_my_pe(TEAM_WORLD)")
    check(nvshmem.team_n_pes(T.TEAM_WORLD) == n, "team_n_pes(TEAM_WORLD)")
    check(nvshmem.team_my_pe(0) == me and nvshmem.team_n_pes(0) == n, "TEAM_WORLD as int")

    # Every PE writes its number into slot me of every PE's array.
    seen = nvshmem.array((n,), dtype="int64")
    seen[:] = -1
    nvshmem.barrier_all()
    for pe in range(n):
        nvshmem.p(seen[me:me + 1], me * 10 + 7, pe)
    nvshmem.barrier_all()
    check_equal(seen, np.arange(n) * 10 + 7, "every PE's number")
    nvshmem.barrier_all()  # everyone has checked before the next round writes

    # Barriers in all their forms, with data checked after each.
    for round_, (call, kwargs) in enumerate([
            (nvshmem.barrier_all, {}), (nvshmem.barrier_all, {"stream": None}),
            (nvshmem.sync_all, {}), (nvshmem.sync_all, {"stream": None})]):
        nvshmem.p(seen[me:me + 1], 100 * round_ + me, (me + 1) % n)
        nvshmem.quiet()
        call(**kwargs)
        prev = (me - 1) % n
        check(seen[prev] == 100 * round_ + prev, f"round {round_} via {call.__name__}")
        call(**kwargs)
    nvshmem.barrier_all(None)
    nvshmem.sync_all(None)

    nvshmem.free_array(seen)
    ok()
    nvshmem.finalize()
    nvshmem.finalize()  # a second finalize is harmless
    check(nvshmem.init_status() != S.STATUS_IS_INITIALIZED, "status after finalize")
"""


@pytest.mark.parametrize("n", N_PES)
def test_lifecycle(run_pes, n):
    assert_all_ok(run_pes(n, LIFECYCLE, args=[n]), n)


CORE_ALIAS = """
    import symmem.core as nvshmem
    nvshmem.init(initializer_method="auto")    # the launcher's environment, explicitly
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    if n != 3:
        raise AssertionError(f"PE {me}: n_pes {n}")
    a = nvshmem.core.array((4,), dtype="int32")
    b = nvshmem.core.array((4,), dtype="int32")
    b[:] = me + 1
    nvshmem.core.barrier_all()
    nvshmem.core.put(a, b, (me + 1) % n)
    nvshmem.core.barrier_all()
    prev = (me - 1) % n
    if not (a == prev + 1).all():
        raise AssertionError(f"PE {me}: {a}")
    nvshmem.core.free_array(a)
    nvshmem.core.free_array(b)
    print(f"PE {me} OK")
    nvshmem.core.finalize()
"""


def test_core_alias_program(run_pes):
    assert_all_ok(run_pes(3, CORE_ALIAS), 3)


FORKED_CHILD = """
    import atexit
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    counter = nvshmem.array((1,), dtype="int64")
    ring = nvshmem.array((2,), dtype="int64")
    counter[:] = 0
    ring[:] = -1
    nvshmem.barrier_all()
    if me == 0:
        # The child of a fork after init is no PE: every call names the fork,
        # and its exit (atexit's finalize included) leaves PE 0 as it was.
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            atexit.register(nvshmem.finalize)  # a common habit: must do nothing here
            said = []
            for what, call in [
                    ("put", lambda: nvshmem.put(ring, np.array([7, 7]), remote_pe=1)),
                    ("barrier_all", nvshmem.barrier_all),
                    ("atomic_add", lambda: nvshmem.atomic_add(counter, 100, 1)),
                    ("my_pe", nvshmem.my_pe),
                    ("n_pes", nvshmem.n_pes),
                    ("array", lambda: nvshmem.array((1,), dtype="int64")),
                    ("init", nvshmem.init)]:
                try:
                    call()
                    said.append(f"{what}: accepted")
                except nvshmem.NvshmemError as error:
                    said.append(f"{error.status} {error}")
            said.append(f"initialized={nvshmem._symmem.initialized()}")
            os.write(write_end, pickle.dumps(said))
            os.close(write_end)
            sys.exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            said = pickle.loads(pipe.read())
        _, status = os.waitpid(pid, 0)
        check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status}")
        for call, line in zip(["put", "barrier_all", "atomic_add", "my_pe", "n_pes",
                               "array", "init"], said):
            words = [f"{nvshmem._symmem.ERR_FORKED} {call}: this process (pid {pid}) was "
                     f"forked from PE 0 (pid {os.getpid()}) after init()",
                     "python -m symmem.run -n N"]
            check(all(word in line for word in words), f"child's {call}: {line!r}")
        check(said[-1] == "initialized=False", said[-1])
    # The PEs are as they were: a barrier, a ring of puts and a counter.
    nvshmem.barrier_all()
    nvshmem.put(ring[me % 2:me % 2 + 1], np.array([me * 10 + 1]), remote_pe=(me + 1) % n)
    for pe in range(n):
        nvshmem.atomic_add(counter, me + 1, pe)
    nvshmem.barrier_all()
    prev = (me - 1) % n
    check(ring[prev % 2] == prev * 10 + 1, f"ring {ring} from PE {prev}")
    check(ring[me % 2] == -1, f"ring {ring}: nobody else wrote into slot {me % 2}")
    check(counter[0] == n * (n + 1) // 2, f"counter {counter[0]}, expected {n * (n + 1) // 2}")
    nvshmem.free_array(counter)
    nvshmem.free_array(ring)
    ok()
    nvshmem.finalize()
"""


def test_a_child_forked_after_init_is_no_pe(run_pes):
    assert_all_ok(run_pes(2, FORKED_CHILD), 2)


def test_a_communicator_makes_pes_only_of_a_backend_of_mpi_processes():
    # The core decides by the backend's mpi_processes capability, not its
    # name (issue 48): the cpu engine refuses an MPI communicator.
    code = (
        "from symmem import _symmem\n"
        "try:\n"
        "    _symmem.init(mpi_comm=1, rank=0, nranks=1, backend='cpu')\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.startswith("NvshmemInvalid init: an MPI communicator"), result
    assert "whose PEs are MPI processes" in result.stdout
    assert "not of backend='cpu'" in result.stdout


# Issue 48: init of a one-PE job at SYMMEM_TIMEOUT=0.0001 failed five times
# in five ("cannot join ...-ctl: it kept changing") and left its control
# segment in /dev/shm. Making and joining the segment waits for no one, so
# no timeout bounds it; a PE that must wait for others says when its
# timeout was too short (test_segments.py).
TINY_TIMEOUTS = """
import glob, os, symmem
said = []
for timeout in ("0.0001", "1e-9", "0.000001s", "0.001"):
    os.environ["SYMMEM_TIMEOUT"] = timeout  # init reads it each time
    for _ in range(25):
        try:
            symmem.init()
        except symmem.NvshmemError as error:
            said.append(str(error))
        else:
            symmem.finalize()
            said.append("ok")
print("\\n".join(said))
left = glob.glob(f"/dev/shm/symmem-{os.geteuid()}-solo{os.getpid()}-*")
print("left", left)
for path in left:  # said; not left for others
    os.unlink(path)
"""


@cpu_only("the cpu backend's files in /dev/shm")
def test_one_pe_inits_at_tiny_timeouts_succeed_and_leave_nothing(tmp_path):
    prog = write_program(tmp_path, TINY_TIMEOUTS, prelude=False)
    env = clean_env({"SYMMEM_BACKEND": "cpu"})
    result = subprocess.run(
        [sys.executable, str(prog)], capture_output=True, text=True, timeout=120, env=env
    )
    rc, out, err = result.returncode, result.stdout, result.stderr
    assert rc == 0, out + err
    *outcomes, left = out.splitlines()
    assert len(outcomes) == 100 and left == "left []", out
    assert outcomes == ["ok"] * 100, [o for o in outcomes if o != "ok"][:3]
