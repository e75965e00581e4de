"""How many PEs symmem.run starts, and its start-up's end: -n is at most
what init accepts, far more PEs than cores is said, and a signal or a PE's
failure while the PEs are still being started ends the job at once, every
PE started stopped and reaped, the job's files removed (issue 48).

The jobs here ask for MAX_PES PEs, whose start-up takes minutes, so each
event certainly comes while the launcher is still starting PEs; a PE past
the first three is /bin/sh exiting at once (cheap), the first three wait.
Bounds on time are hang guards only."""

import glob
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from conftest import clean_env, not_on_mpi
from symmem import _run_command_line as command_line

pytestmark = not_on_mpi("tests symmem.run's own launcher; mpirun starts the mpi backend's PEs")

MAX_PES = command_line.MAX_PES
HANG_GUARD = 120


@pytest.fixture
def launcher():
    """launcher(*args) starts symmem.run in a session of its own (no
    terminal: it passes Ctrl-C on to the PEs); whatever of it is left at the
    test's end (a failed test) is killed, PEs included."""
    started = []

    def start(*args):
        proc = subprocess.Popen(
            [sys.executable, "-m", "symmem.run", *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(),
            start_new_session=True,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()


def wait_for(patterns, proc):
    """Until each glob pattern matches (a hang guard, no timing assertion)."""
    deadline = time.monotonic() + HANG_GUARD
    while not all(glob.glob(str(p)) for p in patterns):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"never appeared: {patterns}"
        time.sleep(0.02)


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def pids(folder):
    """{rank: pid} of the PEs that wrote pid.<rank> into folder."""
    return {
        int(p.name[4:]): int(p.read_text())
        for p in folder.iterdir()
        if p.name.startswith("pid.") and p.name[4:].isdigit()
    }


# ---- the count


@pytest.mark.parametrize("count", [MAX_PES + 1, 99999999999999])
@pytest.mark.parametrize("option", ["-n", "-np"])
def test_a_count_beyond_what_init_accepts_is_refused(launcher, count, option):
    proc = launcher(option, count, "-c", "print('started')")
    out, err = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 2 and out == "", out + err
    assert f"N={count} is more than init accepts (at most {MAX_PES} PEs; this host has " in err
    assert " cores and " in err or " core and " in err, err


def test_init_accepts_as_many_pes_as_the_launcher_and_no_more():
    # MAX_PES is the C core's SYMMEM_MAX_PES (src/core/bootstrap.h)
    code = "from symmem import _symmem; print(_symmem.launcher()['nranks'])"
    for nranks, accepted in ((MAX_PES, True), (MAX_PES + 1, False)):
        env = clean_env({"SYMMEM_JOB": "limit", "SYMMEM_RANK": "0", "SYMMEM_NRANKS": str(nranks)})
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
        )
        if accepted:
            assert result.stdout.split() == [str(MAX_PES)], result.stderr
        else:
            assert f"(at most {MAX_PES} PEs)" in result.stderr, result.stderr


def test_far_beyond_the_cores_is_said_with_the_host_s_cores_and_gpus():
    assert command_line.far_beyond(command_line.FAR_PER_CORE * 2, 2, 0) is None
    words = command_line.far_beyond(command_line.FAR_PER_CORE * 2 + 1, 2, 1)
    assert words.startswith(
        f"{command_line.FAR_PER_CORE * 2 + 1} PEs is far beyond this host's 2 cores and 1 GPU "
        f"(far: more than {command_line.FAR_PER_CORE} PEs a core)"
    ), words
    assert command_line.host_cores() >= 1 and command_line.host_gpus() >= 0


# ---- the start-up's end

# Ranks 0 to 2 write their pid (pid.<rank>) into the folder $1 and wait; the
# others exit at once.
FAILING = """
    [ "$SYMMEM_RANK" -ge 3 ] && exit 0
    echo $$ > "$1/pid.$SYMMEM_RANK.tmp" && mv "$1/pid.$SYMMEM_RANK.tmp" "$1/pid.$SYMMEM_RANK"
    if [ "$SYMMEM_RANK" -eq 0 ]; then
        # fail once PEs 1 and 2 run
        while [ ! -e "$1/pid.1" ] || [ ! -e "$1/pid.2" ]; do sleep 0.01; done
        exit 3
    fi
    exec sleep 600
"""


def test_a_pe_that_fails_during_start_up_ends_the_job_at_once(launcher, tmp_path):
    script = tmp_path / "failing.sh"
    script.write_text(textwrap.dedent(FAILING))
    folder = tmp_path / "pids"
    folder.mkdir()
    proc = launcher("-n", MAX_PES, "/bin/sh", script, folder)
    out, err = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 3, err
    started = pids(folder)
    assert sorted(started) == [0, 1, 2], err
    assert f"{MAX_PES} PEs is far beyond this host's " in err
    assert "PE 0 failed while starting the PEs: PEs " in err, err
    assert f"PE 0 (pid {started[0]}) failed first: exited with code 3" in err, err
    summary = next(line for line in err.splitlines() if " PEs failed (PE 0)" in line)
    assert "stopped PE 1, PE 2" in summary and "after the failure during start-up" in summary
    assert summary.endswith(f" of {MAX_PES} never started"), summary
    assert all(gone(pid) for pid in started.values()), started


# Ranks 0 to 2 go into init for a job of 4 PEs (PE 3 never joins), so they
# wait there, their files in /dev/shm; PE 0 says the job's name (job).
IN_INIT = """
    [ "$SYMMEM_RANK" -ge 3 ] && exit 0
    [ "$SYMMEM_RANK" -eq 0 ] && echo "$SYMMEM_JOB" > "$1/job"
    SYMMEM_NRANKS=4 exec "{python}" "$2" "$1"
"""
WAITING = """
    import os, sys
    path = os.path.join(sys.argv[1], "pid." + os.environ["SYMMEM_RANK"])
    with open(path + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(path + ".tmp", path)
    import symmem
    symmem.init()
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_start_up_stops_every_pe_and_removes_the_job_s_files(
    launcher, tmp_path, signum
):
    script = tmp_path / "in_init.sh"
    script.write_text(textwrap.dedent(IN_INIT).format(python=sys.executable))
    program = tmp_path / "waiting.py"
    program.write_text(textwrap.dedent(WAITING))
    folder = tmp_path / "pids"
    folder.mkdir()
    proc = launcher("-n", MAX_PES, "/bin/sh", script, folder, program)
    wait_for([folder / f"pid.{rank}" for rank in range(3)] + [folder / "job"], proc)
    job = (folder / "job").read_text().strip()
    shm = f"/dev/shm/symmem-{os.geteuid()}-{job}-*"
    wait_for([shm], proc)  # a PE is in init
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=HANG_GUARD)
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, err
    assert f"got {name} while starting the PEs: PEs " in err and " never started" in err, err
    assert f"got {name}; stopping PEs [0, 1, 2" in err, err
    started = pids(folder)
    assert sorted(started) == [0, 1, 2] and all(gone(pid) for pid in started.values()), started
    assert glob.glob(shm) == [], "the job's files are left in /dev/shm"
    assert glob.glob(os.path.join(tempfile.gettempdir(), f"symmem-{job}-*")) == []
