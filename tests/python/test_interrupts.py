"""A hang can be interrupted and diagnosed, and no PE outlives its launcher.

- A signal handler that raises (Ctrl-C's KeyboardInterrupt) interrupts every
  wait: signal_wait, wait_until, barrier_all, a collective, init, finalize;
  its exception comes out unchanged. A handler that does not raise runs
  during the wait, which goes on.
- The launcher asks the PEs for their Python stacks before it kills them (on
  --timeout, and after Ctrl-C) and says where each PE was.
- SIGKILL of the launcher ends its PEs, even those that had not yet imported
  symmem when it died.
Every wait here is bounded by SYMMEM_TIMEOUT and the launcher's --timeout.
"""

import glob
import os
import pty
import select
import signal
import subprocess
import sys
import time

import pytest

from conftest import (
    ON_MPI,
    clean_env,
    not_on_gpu,
    not_on_mpi,
    require_gpus,
    run_plain,
    wait_all,
    write_program,
)

# The PEs here wait on the cpu engine's futex loop; the gpu backend's waits
# poll the GPU and are not covered here.
cpu_waits = not_on_gpu("interrupts waits the host makes (the cpu engine's, the mpi backend's)")

BOUND = {"SYMMEM_TIMEOUT": "30"}  # a broken interrupt fails, it does not hang

# PE 0 blocks in WAIT, where PE 1 never joins it; a timer sends PE 0 a
# SIGINT. PE 1 waits for PE 0's verdict in a file, then both leave without
# finalize (the PEs are out of step after an interrupted collective).
INTERRUPTED_WAIT = """
    import threading
    WAIT, DONE = sys.argv[1], sys.argv[2]
    if WAIT != "init":
        nvshmem.init()
        me = nvshmem.my_pe()
        sig = nvshmem.array((1,), dtype="uint64")
        ivar = nvshmem.array((1,), dtype="int64")
        src = nvshmem.array((4,), dtype="float64")
        dst = nvshmem.array((4,), dtype="float64")
        sig[:] = 0
        ivar[:] = 0
        nvshmem.barrier_all()
    else:
        me = int(os.environ["SYMMEM_RANK"])
    if WAIT == "finalize":  # nothing left for finalize to free collectively
        for a in (sig, ivar, src, dst):
            nvshmem.free_array(a)
    if me == 1:
        deadline = time.monotonic() + 30
        while not os.path.exists(DONE) and time.monotonic() < deadline:
            time.sleep(0.05)
        os._exit(0)
    C = nvshmem.ComparisonType
    calls = {
        "init": lambda: nvshmem.init(),
        "signal_wait": lambda: nvshmem.signal_wait(sig, 1, C.CMP_EQ),
        "wait_until": lambda: nvshmem.wait_until(ivar, C.CMP_GT, 0),
        "barrier_all": lambda: nvshmem.barrier_all(),
        "reduce": lambda: nvshmem.reduce(nvshmem.Teams.TEAM_WORLD, dst, src, "sum"),
        "finalize": lambda: nvshmem.finalize(),
    }
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    started = time.monotonic()
    try:
        calls[WAIT]()
    except KeyboardInterrupt as error:
        print(f"PE 0 {WAIT}: KeyboardInterrupt{error.args!r} after "
              f"{time.monotonic() - started:.1f} s", flush=True)
    except BaseException as error:
        print(f"PE 0 {WAIT}: {type(error).__name__}: {error}", flush=True)
    else:
        print(f"PE 0 {WAIT}: returned", flush=True)
    open(DONE, "w").close()
    os._exit(0)
"""


@cpu_waits
@pytest.mark.parametrize(
    "wait", ["init", "signal_wait", "wait_until", "barrier_all", "reduce", "finalize"]
)
def test_sigint_interrupts_a_wait(run_pes, tmp_path, wait):
    if ON_MPI and wait == "init":
        pytest.skip(
            "not on the mpi backend: init waits inside MPI's own start-up "
            "(MPI_Init_thread, the windows), which Ctrl-C cannot interrupt"
        )
    result = run_pes(2, INTERRUPTED_WAIT, env=BOUND, timeout=60, args=[wait, tmp_path / "done"])
    assert result.rc == 0, str(result)
    [line] = result.lines(0)
    assert line.startswith(f"PE 0 {wait}: KeyboardInterrupt() after "), str(result)
    assert float(line.split()[-2]) < 25, str(result)  # not SYMMEM_TIMEOUT's doing


# A handler of the program's own: one that raises interrupts the wait with
# its very exception; one that does not raise runs during the wait, which goes
# on and receives the data (PE 1 sends it only after the handler ran).
OWN_HANDLERS = """
    import threading
    nvshmem.init()
    me = nvshmem.my_pe()
    flag = sys.argv[1]
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    nvshmem.barrier_all()
    if me == 1:
        deadline = time.monotonic() + 30
        while not os.path.exists(flag) and time.monotonic() < deadline:
            time.sleep(0.05)
        nvshmem.signal_op(sig, 7, nvshmem.SignalOp.SIGNAL_SET, 0)
    else:
        class Stop(Exception):
            pass
        raised = Stop("from the handler")
        seen = []

        def quiet_handler(signum, frame):
            seen.append(int(sig[0]))
            open(flag, "w").close()

        def raising_handler(signum, frame):
            raise raised

        signal.signal(signal.SIGUSR2, raising_handler)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR2)).start()
        try:
            nvshmem.signal_wait(sig, 7, nvshmem.ComparisonType.CMP_EQ)
        except Stop as error:
            check(error is raised, f"the handler's exception, unchanged: {error!r}")
            print("PE 0 raising handler:", error, flush=True)
        signal.signal(signal.SIGUSR2, quiet_handler)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR2)).start()
        value = nvshmem.signal_wait(sig, 7, nvshmem.ComparisonType.CMP_EQ)
        check(seen == [0], f"the handler ran once, during the wait: {seen}")
        check(int(sig[0]) == 7, f"the signal after the wait: {int(sig[0])}")
        print("PE 0 quiet handler ran during the wait", flush=True)
    nvshmem.barrier_all()
    nvshmem.free_array(sig)
    ok()
    nvshmem.finalize()
"""


@cpu_waits
def test_own_signal_handlers_during_a_wait(run_pes, tmp_path):
    result = run_pes(2, OWN_HANDLERS, env=BOUND, timeout=60, args=[tmp_path / "flag"])
    assert result.rc == 0, str(result)
    assert result.lines(0) == [
        "PE 0 raising handler: from the handler",
        "PE 0 quiet handler ran during the wait",
        "PE 0 OK",
    ], str(result)
    assert result.lines(1) == ["PE 1 OK"], str(result)


# Without a launcher: Ctrl-C (here SIGINT from outside) ends a PE blocked in
# signal_wait the way it ends any Python program, with a traceback.
ALONE_IN_SIGNAL_WAIT = """
    nvshmem.init()
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    print("waiting", flush=True)
    nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)
    print("the wait returned", flush=True)
"""


@cpu_waits
def test_sigint_ends_a_pe_without_launcher(tmp_path):
    proc = run_plain(
        write_program(tmp_path, ALONE_IN_SIGNAL_WAIT), env=dict(BOUND, SYMMEM_BACKEND="cpu")
    )
    try:
        assert proc.stdout.readline() == "waiting\n"
        time.sleep(0.3)  # into the wait's sleep
        proc.send_signal(signal.SIGINT)
    finally:
        [(rc, out, err)] = wait_all([proc], timeout=30)
    assert rc == -signal.SIGINT, (rc, out, err)  # how Python ends on KeyboardInterrupt
    assert "the wait returned" not in out, out
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    assert "nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)" in err, err


# ---------------------------------------------------------------- the launcher

# Each PE blocks in a function of its own; with STACKLESS=1, PE 2 never
# imports symmem (and PEs 0 and 1 wait for it in init).
THREE_STUCK_PES = """
    import os, sys, time
    rank = int(os.environ["SYMMEM_RANK"])
    if rank == 2:
        print("job", os.environ["SYMMEM_JOB"], flush=True)
    if rank == 2 and os.environ.get("STACKLESS") == "1":
        time.sleep(120)
    import symmem as nvshmem
    nvshmem.init()  # PEs 0 and 1 stuck here
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    nvshmem.barrier_all()


    def in_barrier():
        nvshmem.barrier_all()  # PE 0 stuck here


    def in_signal_wait():
        nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)  # PE 1 stuck here


    def sleeping():
        time.sleep(120)  # PE 2 stuck here


    [in_barrier, in_signal_wait, sleeping][rank]()
"""


def line_of(program, text):
    """The 1-based number of the one line of program that holds text."""
    [number] = [i for i, line in enumerate(program.read_text().splitlines(), 1) if text in line]
    return number


def where_reported(stderr, pe):
    """What the launcher's report says about PE pe: "file, line N in function"."""
    rest = stderr.split(f"\n    PE {pe} (pid ", 1)[1]
    return rest.split("\n", 1)[0].split("): ", 1)[1]


@cpu_waits
def test_timeout_reports_where_each_pe_was(run_pes, tmp_path):
    program = write_program(tmp_path, THREE_STUCK_PES, prelude=False)
    result = run_pes(3, program, timeout=3, env=BOUND)
    assert result.rc == 124, str(result)
    assert (
        "symmem.run: timeout after 3 s: PEs still running: [0, 1, 2]; asking them for "
        "their stacks" in result.stderr
    ), str(result)
    assert "symmem.run: where each PE still running was" in result.stderr, str(result)
    for pe, function in [(0, "in_barrier"), (1, "in_signal_wait"), (2, "sleeping")]:
        line = line_of(program, f"# PE {pe} stuck here")
        err = result.lines(pe, "stderr")
        # faulthandler's dump, prefixed like all the PE's output, then the report
        assert any(text.startswith("Current thread 0x") for text in err), str(result)
        assert f'  File "{program}", line {line} in {function}' in err, str(result)
        assert where_reported(result.stderr, pe) == f"{program}, line {line} in {function}", str(
            result
        )


@cpu_waits
def test_timeout_names_a_pe_that_cannot_print_its_stack(run_pes, tmp_path):
    program = write_program(tmp_path, THREE_STUCK_PES, prelude=False)
    result = run_pes(3, program, timeout=3, env=dict(BOUND, STACKLESS="1"))
    assert result.rc == 124, str(result)
    line = line_of(program, "# PEs 0 and 1 stuck here")
    for pe in (0, 1):
        assert (
            where_reported(result.stderr, pe)
            == f"{program}, line {line} in <module> (in symmem's init)"
        ), str(result)
    assert (
        where_reported(result.stderr, 2) == "cannot print its stack (it has not imported symmem)"
    ), str(result)
    # PEs 0 and 1, stopped in init, made the control segment and their heaps
    # (1 GiB files, sparse); the launcher removes them once they have exited
    [job] = [line.split()[1] for line in result.lines(2) if line.startswith("job ")]
    assert glob.glob(f"/dev/shm/symmem-{os.geteuid()}-{job}-*") == [], str(result)


def start_launcher(n, program, args=(), env=None, timeout=60):
    """Starts the launcher on program in a session of its own (no terminal:
    a SIGINT it gets comes from us alone); returns the Popen."""
    cmd = [
        sys.executable,
        "-m",
        "symmem.run",
        "-n",
        str(n),
        "--timeout",
        str(timeout),
        str(program),
        *map(str, args),
    ]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(dict(BOUND, **(env or {}))),
        start_new_session=True,
    )


def wait_for_files(paths, timeout=30):
    deadline = time.monotonic() + timeout
    while not all(os.path.exists(p) for p in paths):
        assert time.monotonic() < deadline, f"never appeared: {paths}"
        time.sleep(0.05)


# PE 0 waits in barrier_all; PE 1 catches KeyboardInterrupt and goes on
# sleeping, so the launcher has to ask it for its stack and kill it.
CTRL_C = """
    nvshmem.init()
    rank = nvshmem.my_pe()
    nvshmem.barrier_all()


    def in_barrier():
        nvshmem.barrier_all()  # PE 0 here


    def stubborn():
        while True:
            try:
                time.sleep(120)  # PE 1 here
            except KeyboardInterrupt:
                print("PE 1 ignores Ctrl-C", flush=True)


    open(os.path.join(sys.argv[1], f"ready.{rank}"), "w").close()
    [in_barrier, stubborn][rank]()
"""


@cpu_waits
@not_on_mpi(
    "symmem.run --backend mpi hands a Ctrl-C to mpirun as SIGTERM: the PEs end "
    "without the KeyboardInterrupt tracebacks and stacks this test reads (_run_mpi.py)"
)
def test_sigint_to_the_launcher(tmp_path):
    program = write_program(tmp_path, CTRL_C)
    proc = start_launcher(2, program, args=[tmp_path])
    try:
        wait_for_files([tmp_path / "ready.0", tmp_path / "ready.1"])
        time.sleep(0.5)  # into their waits
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    report = f"rc={proc.returncode}\n--- stdout ---\n{out}\n--- stderr ---\n{err}"
    assert proc.returncode == 128 + signal.SIGINT, report
    assert "symmem.run: got SIGINT; stopping PEs [0, 1]" in err, report
    # PE 0: the KeyboardInterrupt traceback, raised in barrier_all
    assert "[pe 0] Traceback (most recent call last):" in err, report
    assert (
        f'[pe 0]   File "{program}", line {line_of(program, "# PE 0 here")}, in in_barrier' in err
    ), report
    assert "[pe 0] KeyboardInterrupt" in err, report
    # PE 1 outlived the SIGINT: its stack, then SIGKILL
    assert "[pe 1] PE 1 ignores Ctrl-C" in out, report
    assert "[pe 1] Current thread 0x" in err, report
    assert (
        where_reported(err, 1) == f"{program}, line {line_of(program, '# PE 1 here')} in stubborn"
    ), report
    assert "    PE 0 (pid " not in err, report  # PE 0 had exited


# In a terminal, Ctrl-C reaches every PE straight from the terminal (they share
# the launcher's process group): the launcher must not send a second SIGINT,
# which would interrupt the first one's traceback.
IN_A_TERMINAL = """
    nvshmem.init()
    rank = nvshmem.my_pe()
    nvshmem.barrier_all()
    open(os.path.join(sys.argv[1], f"ready.{rank}"), "w").close()
    if rank == 0:
        nvshmem.barrier_all()  # PE 0 here
    else:
        time.sleep(120)  # PE 1 here
"""


def read_until_closed(fd, timeout):
    """What a pty's master gives until the other side closes (or timeout)."""
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not select.select([fd], [], [], 0.1)[0]:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: every process of the terminal has closed it
            break
        if not data:
            break
        out += data
    return out.decode(errors="replace").replace("\r\n", "\n")


@cpu_waits
@not_on_mpi(
    "symmem.run --backend mpi hands a Ctrl-C to mpirun as SIGTERM: the PEs end "
    "without the KeyboardInterrupt tracebacks and stacks this test reads (_run_mpi.py)"
)
def test_ctrl_c_in_a_terminal(tmp_path):
    program = write_program(tmp_path, IN_A_TERMINAL)
    cmd = [
        sys.executable,
        "-m",
        "symmem.run",
        "-n",
        "2",
        "--timeout",
        "60",
        str(program),
        str(tmp_path),
    ]
    try:
        pid, master = pty.fork()  # the child's controlling terminal is a new pty
    except OSError as error:
        pytest.skip(f"no pseudo-terminal here: {error}")
    if pid == 0:
        os.execve(sys.executable, cmd, clean_env(BOUND))
    try:
        wait_for_files([tmp_path / "ready.0", tmp_path / "ready.1"])
        time.sleep(0.5)  # into their waits
        os.write(master, b"\x03")  # Ctrl-C, as typed
        out = read_until_closed(master, timeout=30).replace("^C", "")  # the echo
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(master)
    assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGINT, out
    assert "symmem.run: got SIGINT; stopping PEs [0, 1]" in out, out
    for pe in (0, 1):
        err = [
            line[len(f"[pe {pe}] ") :]
            for line in out.splitlines()
            if line.startswith(f"[pe {pe}] ")
        ]
        # one traceback, ending in one KeyboardInterrupt raised where the PE waited
        assert err.count("Traceback (most recent call last):") == 1, out
        assert err[-1] == "KeyboardInterrupt" and err.count("KeyboardInterrupt") == 1, out
        assert (
            f'  File "{program}", line {line_of(program, f"# PE {pe} here")}, in <module>' in err
        ), out
    assert "failed first" not in out, out  # stopped by Ctrl-C, not failed


def process_ended(pid, start_time):
    """Whether the process (pid, its start time) has ended: gone, a zombie,
    or its pid taken by another process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except FileNotFoundError:
        return True
    return fields[0] in "ZX" or fields[19] != start_time


def start_time(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rpartition(")")[2].split()[19]


# Each PE writes its pid, then (DELAY > 0) waits before it imports symmem,
# so that the launcher can die first; then PE 0 waits in barrier_all and
# PE 1 sleeps in Python.
OUTLIVE = """
    import os, sys, time
    folder, delay = sys.argv[1], float(sys.argv[2])
    rank = int(os.environ["SYMMEM_RANK"])
    with open(os.path.join(folder, f"pid.{rank}.tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.path.join(folder, f"pid.{rank}.tmp"), os.path.join(folder, f"pid.{rank}"))
    time.sleep(delay)
    import symmem as nvshmem
    nvshmem.init()
    nvshmem.barrier_all()
    open(os.path.join(folder, f"ready.{rank}"), "w").close()
    if rank == 0:
        nvshmem.barrier_all()
    time.sleep(120)
"""


@pytest.mark.parametrize("when", ["waiting", "before_import"])
def test_pes_die_with_a_killed_launcher(tmp_path, when):
    require_gpus(2)
    program = write_program(tmp_path, OUTLIVE, prelude=False)
    delay = 0 if when == "waiting" else 3
    proc = start_launcher(2, program, args=[tmp_path, delay])
    pids = {}
    try:
        wait_for_files([tmp_path / "pid.0", tmp_path / "pid.1"])
        pids = {int((tmp_path / f"pid.{r}").read_text()): None for r in (0, 1)}
        pids = {pid: start_time(pid) for pid in pids}
        if when == "waiting":
            wait_for_files([tmp_path / "ready.0", tmp_path / "ready.1"])
        proc.kill()  # SIGKILL: the launcher cannot pass anything on
        proc.communicate(timeout=30)
        deadline = time.monotonic() + 10 + delay
        while not all(process_ended(pid, t) for pid, t in pids.items()):
            assert time.monotonic() < deadline, f"PEs outlived the launcher: {pids}"
            time.sleep(0.05)
    finally:
        for pid, t in pids.items():
            if not process_ended(pid, t):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "ready.0").exists() or when == "waiting"
