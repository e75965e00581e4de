"""A dead or stuck PE turns into an NvshmemError naming it, never a hang."""

import re

from conftest import ON_MPI, assert_all_ok, cpu_only, not_on_gpu

# The cpu engine watches the other PEs while it waits; the gpu backend waits on
# the GPU, where only SYMMEM_TIMEOUT bounds a wait.
dead_peer_detection = not_on_gpu(
    "relies on the host noticing, while it waits, that a peer "
    "has died (the cpu engine and the mpi backend)"
)

# The PEs that survive catch the error, print it and exit 0; the launcher then
# exits with the dead PE's status (137 = killed by SIGKILL).
KILLED_WHILE_OTHERS_WAIT = """
    WAIT = sys.argv[1]
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    nvshmem.barrier_all()
    if me == 2:
        time.sleep(0.3)           # the others are waiting by now
        os.kill(os.getpid(), signal.SIGKILL)
    started = time.monotonic()
    try:
        if WAIT == "barrier_all":
            nvshmem.barrier_all()
        else:
            nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)
    except nvshmem.NvshmemError as error:
        print(f"PE {me} caught: {error}", flush=True)
        print(f"PE {me} waited {time.monotonic() - started:.1f} s", flush=True)
        # Linger so that the other waiting PE (which polls for dead peers 10 times
        # a second) sees PE 2's death before it could see this PE's exit.
        time.sleep(1.0)
        sys.exit(0)
    print(f"PE {me} was not told that PE 2 died", flush=True)
    sys.exit(3)
"""


def check_killed(result, call):
    assert result.rc == 137, str(result)
    assert result.elapsed < 20, str(result)
    report = result.stderr
    assert "PE 2 (pid" in report and "killed by signal 9" in report, report
    for pe in (0, 1):
        caught = [line for line in result.lines(pe) if line.startswith(f"PE {pe} caught: ")]
        assert len(caught) == 1, str(result)
        msg = caught[0]
        assert f"[pe {pe}] {call}: PE 2 (pid " in msg, msg
        assert "killed by signal 9 (SIGKILL)" in msg, msg
        assert "was not told" not in result.stdout
    return [line for pe in (0, 1) for line in result.lines(pe)]


@dead_peer_detection
def test_pe_killed_during_barrier(run_pes):
    result = run_pes(3, KILLED_WHILE_OTHERS_WAIT, timeout=40, args=["barrier_all"])
    lines = check_killed(result, "barrier_all")
    # the cpu engine's barrier says who has not arrived: PE 2 only
    for line in lines:
        if "caught" in line and not ON_MPI:
            assert re.search(r"PEs not arrived: 2$", line), line


@dead_peer_detection
def test_pe_killed_during_signal_wait(run_pes):
    result = run_pes(3, KILLED_WHILE_OTHERS_WAIT, timeout=40, args=["signal_wait"])
    check_killed(result, "signal_wait")


# An uncaught exception on one PE while the others sit in barrier_all: the
# others are told, and the launcher exits non-zero without waiting for a timeout.
EXCEPTION_WHILE_OTHERS_WAIT = """
    nvshmem.init()
    me = nvshmem.my_pe()
    nvshmem.barrier_all()
    if me == 1:
        time.sleep(0.3)
        raise ValueError("boom on PE 1")
    nvshmem.barrier_all()
    print(f"PE {me} passed a barrier without PE 1", flush=True)
"""


@dead_peer_detection
def test_uncaught_exception_does_not_hang(run_pes):
    result = run_pes(3, EXCEPTION_WHILE_OTHERS_WAIT, timeout=60)
    assert result.rc != 0 and result.rc != 124, str(result)
    assert result.elapsed < 20, str(result)
    assert "passed a barrier" not in result.stdout, str(result)
    assert "symmem.run: PE 1 (pid" in result.stderr, result.stderr
    assert "ValueError: boom on PE 1" in result.stderr, result.stderr
    # The PEs that waited were told: PE 0 that PE 1 exited (it looks at PE 1 first);
    # PE 2 that PE 1 exited, or PE 0 if PE 0 had already exited by then.
    err0 = "\n".join(result.lines(0, "stderr"))
    assert "NvshmemError: [pe 0] barrier_all: PE 1 (pid" in err0, result.stderr
    assert "exited with code 1" in err0, result.stderr
    err2 = "\n".join(result.lines(2, "stderr"))
    assert re.search(r"NvshmemError: \[pe 2\] barrier_all: PE [01] \(pid", err2), result.stderr


# SYMMEM_TIMEOUT bounds a barrier that a sleeping PE does not reach.
TIMEOUT_IN_BARRIER = """
    nvshmem.init()
    me = nvshmem.my_pe()
    flag = sys.argv[1]
    nvshmem.barrier_all()
    if me == 1:
        deadline = time.monotonic() + 10      # sleeps 10 s, or until PE 0 is done
        while time.monotonic() < deadline and not os.path.exists(flag):
            time.sleep(0.05)
        print(f"PE 1 woke after PE 0 was done: {os.path.exists(flag)}", flush=True)
        os._exit(0)
    started = time.monotonic()
    try:
        nvshmem.barrier_all()
    except nvshmem.NvshmemError as error:
        print(f"PE 0 caught: {error}", flush=True)
        print(f"PE 0 waited {time.monotonic() - started:.1f} s", flush=True)
    else:
        print("PE 0 passed the barrier alone", flush=True)
    open(flag, "w").close()
    os._exit(0)
"""


@cpu_only("checks the cpu engine's barrier timeout, which names the PEs that have not arrived")
def test_timeout_in_barrier(run_pes, tmp_path):
    result = run_pes(
        2, TIMEOUT_IN_BARRIER, env={"SYMMEM_TIMEOUT": "1"}, timeout=40, args=[tmp_path / "done"]
    )
    assert result.rc == 0, str(result)
    assert result.elapsed < 20, str(result)
    caught = [line for line in result.lines(0) if line.startswith("PE 0 caught: ")]
    assert len(caught) == 1, str(result)
    msg = caught[0]
    assert "[pe 0] barrier_all:" in msg and "timed out" in msg, msg
    assert "not arrived: 1" in msg, msg
    assert result.lines(1) == ["PE 1 woke after PE 0 was done: True"], str(result)


# A timeout in finalize() while it frees what the program leaked names
# finalize (it used to read "free: timed out", a call the program never
# made); the leak stays tracked, and finalize() again, with PE 1 there,
# frees it and ends the runtime on both PEs.
TIMEOUT_IN_FINALIZE = """
    nvshmem.init()
    me = nvshmem.my_pe()
    flag = sys.argv[1]
    leaked = nvshmem.array((4,), dtype="int64")
    leaked[:] = me
    nvshmem.barrier_all()
    warnings.simplefilter("ignore", RuntimeWarning)  # the leak's warning
    if me == 1:
        while not os.path.exists(flag):  # until PE 0's finalize has timed out
            time.sleep(0.01)
    else:
        msg = expect_raises(nvshmem.NvshmemError, [
            f"[pe 0] finalize: freeing the Buffer at 0x{address(leaked):x} (32 bytes): "
            "timed out after ", " s; PEs not arrived: 1"], nvshmem.finalize)  # 1.0 s or more
        check("free:" not in msg, msg)
        open(flag, "w").close()
    nvshmem.finalize()
    check(nvshmem.init_status() == nvshmem.InitStatus.STATUS_IS_BOOTSTRAPPED, "finalized")
    print(f"PE {me} OK", flush=True)
"""


@cpu_only("times the cpu engine's free in finalize")
def test_timeout_in_finalize_names_finalize(run_pes, tmp_path):
    result = run_pes(
        2,
        TIMEOUT_IN_FINALIZE,
        env={"SYMMEM_TIMEOUT": "1"},
        timeout=40,
        args=[tmp_path / "timed_out"],
    )
    assert_all_ok(result, 2)


# SYMMEM_TIMEOUT also bounds signal_wait and wait_until; a PE alone.
TIMEOUT_IN_WAITS = """
    nvshmem.init()
    C = nvshmem.ComparisonType
    sig = nvshmem.array((1,), dtype="uint64")
    ivar = nvshmem.array((1,), dtype="int32")
    sig[:] = 0
    ivar[:] = 0
    expect_raises(nvshmem.NvshmemError, ["[pe 0] signal_wait:", "timed out"],
                  nvshmem.signal_wait, sig, 1, C.CMP_EQ)
    expect_raises(nvshmem.NvshmemError, ["[pe 0] wait_until:", "timed out"],
                  nvshmem.wait_until, ivar, C.CMP_GT, 0)
    # the runtime still works after the timeouts
    nvshmem.signal_op(sig, 1, nvshmem.SignalOp.SIGNAL_SET, 0)
    nvshmem.signal_wait(sig, 1, C.CMP_EQ)
    nvshmem.p(ivar, 5, 0)
    nvshmem.wait_until(ivar, C.CMP_GT, 0)
    nvshmem.barrier_all()
    check(nvshmem.signal_fetch(sig) == 1 and ivar[0] == 5, "values after the timeouts")
    nvshmem.free_array(sig)
    nvshmem.free_array(ivar)
    ok()
    nvshmem.finalize()
"""


@not_on_gpu(
    "after a timed-out wait the cpu engine works on; on the gpu backend the wait stays "
    "queued on the stream, ahead of everything after it"
)
def test_timeout_in_waits(run_pes):
    result = run_pes(1, TIMEOUT_IN_WAITS, env={"SYMMEM_TIMEOUT": "0.3"}, timeout=30)
    assert_all_ok(result, 1)
    assert result.elapsed < 15, str(result)
