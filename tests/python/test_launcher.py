"""Tests for the launcher, python -m symmem.run.

The launcher is run as a script (python3 .../symmem/run.py) so that these
tests do not depend on the compiled part of the package.
"""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import not_on_mpi

# symmem.run's own launcher (job names, reports, timeouts with the PEs'
# stacks); with the mpi backend mpirun starts the PEs (_run_mpi.py), whose
# reports test_mpi_backend.py and test_faults.py check.
pytestmark = not_on_mpi("tests symmem.run's own launcher; mpirun starts the mpi backend's PEs")

ROOT = Path(__file__).resolve().parents[2]
RUN_PY = ROOT / "python" / "symmem" / "run.py"


def launch(args, timeout=20, env=None, **kw):
    """Run the launcher with args; returns the CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, str(RUN_PY), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        **kw,
    )


def write_script(tmp_path, body, name="prog.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def lines_of(stream, rank):
    """The lines PE rank wrote on stream, without the prefix."""
    prefix = "[pe %d] " % rank
    return [line[len(prefix) :] for line in stream.splitlines() if line.startswith(prefix)]


def timed_launch(args, **kw):
    start = time.monotonic()
    result = launch(args, **kw)
    return result, time.monotonic() - start


# ---------------------------------------------------------------- basics

HELLO = """
    import os
    print("hello from", os.environ["SYMMEM_RANK"], "of",
          os.environ["SYMMEM_NRANKS"])
    print("job", os.environ["SYMMEM_JOB"])
"""


def test_hello_three_pes(tmp_path):
    script = write_script(tmp_path, HELLO)
    result = launch(["-n", 3, script])
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    for line in result.stdout.splitlines():
        assert re.match(r"\[pe [0-2]\] ", line), line
    jobs = set()
    for rank in range(3):
        out = lines_of(result.stdout, rank)
        assert "hello from %d of 3" % rank in out
        jobs.update(line.split()[1] for line in out if line.startswith("job"))
    assert len(jobs) == 1
    job = jobs.pop()
    assert re.fullmatch(r"j[0-9a-f]{16}", job)

    again = launch(["-n", 3, script])
    assert again.returncode == 0
    assert "job " + job not in again.stdout


def test_environment(tmp_path):
    script = write_script(
        tmp_path,
        """
        import os
        keys = ["SYMMEM_RANK", "SYMMEM_NRANKS", "SYMMEM_LOCAL_RANK",
                "SYMMEM_BACKEND", "PYTHONUNBUFFERED", "LOCAL_RANK"]
        print(" ".join("%s=%s" % (k, os.environ.get(k)) for k in keys))
        print("status_dir", os.path.isdir(os.environ["SYMMEM_STATUS_DIR"]))
    """,
    )
    env = {k: v for k, v in os.environ.items() if k != "LOCAL_RANK"}
    result = subprocess.run(
        [sys.executable, str(RUN_PY), "-n", "2", "--backend", "cpu", str(script)],
        capture_output=True,
        text=True,
        timeout=20,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    for rank in range(2):
        assert lines_of(result.stdout, rank) == [
            "SYMMEM_RANK=%d SYMMEM_NRANKS=2 SYMMEM_LOCAL_RANK=%d "
            "SYMMEM_BACKEND=cpu PYTHONUNBUFFERED=1 LOCAL_RANK=%d" % (rank, rank, rank),
            "status_dir True",
        ]


TORCH_STYLE = """
    import os
    names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
             "SYMMEM_RANK", "SYMMEM_NRANKS"]
    print(" ".join("%s=%s" % (k, os.environ.get(k)) for k in names))
"""

# What an outer torchrun (or a shell that ran one) leaves in the environment.
OUTER_TORCHRUN = {
    "RANK": "7",
    "LOCAL_RANK": "5",
    "WORLD_SIZE": "9",
    "LOCAL_WORLD_SIZE": "8",
    "MASTER_ADDR": "127.0.0.1",
    "MASTER_PORT": "29512",
    "TORCHELASTIC_RUN_ID": "outer",
}


@pytest.mark.parametrize("n, outer", [(1, {}), (3, {}), (4, OUTER_TORCHRUN)])
def test_torch_style_variables(tmp_path, n, outer):
    # Every PE sees its own numbers under torch's names too, the launcher's
    # replacing whatever an outer launcher set.
    script = write_script(tmp_path, TORCH_STYLE)
    result = launch(["-n", n, script], env=outer)
    assert result.returncode == 0, result.stderr
    for rank in range(n):
        assert lines_of(result.stdout, rank) == [
            "RANK=%d LOCAL_RANK=%d WORLD_SIZE=%d LOCAL_WORLD_SIZE=%d "
            "SYMMEM_RANK=%d SYMMEM_NRANKS=%d" % (rank, rank, n, n, rank, n)
        ], result.stdout
    assert "[pe %d] " % n not in result.stdout


# Each PE says how symmem sees it, then puts its rank into the next PE and
# prints what it got from the previous one: the PEs met.
RENDEZVOUS = """
    import os
    import numpy as np
    import symmem as nvshmem
    from symmem import _symmem
    job = _symmem.launcher()
    print("launcher", job["launcher"], job["rank"], job["nranks"],
          job["local_rank"], job["local_size"],
          job["job"].startswith(os.environ["SYMMEM_JOB"] + "-"))
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    src = nvshmem.array((2,), dtype="int64")
    dst = nvshmem.array((2,), dtype="int64")
    on_gpu = nvshmem.get_version().backend == "gpu"
    if on_gpu:
        import cupy as xp  # the gpu backend's symmetric arrays are CuPy's
    else:
        xp = np
    src[:] = xp.asarray([me, int(os.environ["RANK"])])
    dst[:] = -1
    nvshmem.barrier_all()
    nvshmem.put(dst, src, (me + 1) % n)
    nvshmem.barrier_all()
    got = dst.get() if on_gpu else dst
    print("pe", me, "of", n, "got", [int(v) for v in got])
    nvshmem.free_array(src)
    nvshmem.free_array(dst)
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", [2, 3])
def test_pe_with_torch_style_variables_uses_the_launchers_rendezvous(tmp_path, n):
    # RANK and WORLD_SIZE are how symmem recognises torchrun; a PE of
    # symmem.run has them too (and an outer torchrun's MASTER_ADDR), and still
    # meets its peers through symmem.run's job, not as a torchrun job.
    probe = subprocess.run([sys.executable, "-c", "import symmem"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("package symmem does not import yet")
    from conftest import require_gpus

    require_gpus(n)
    script = write_script(tmp_path, RENDEZVOUS)
    result = launch(["-n", n, "--timeout", 60, script], env=OUTER_TORCHRUN, timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in range(n):
        prev = (rank - 1) % n
        assert lines_of(result.stdout, rank) == [
            "launcher symmem.run %d %d %d %d True" % (rank, n, rank, n),
            "pe %d of %d got [%d, %d]" % (rank, n, prev, prev),
        ], result.stdout


def test_code_form_passes_args():
    result = launch(["-n", 2, "-c", "import sys; print(sys.argv[1:])", "a", "-n", "5"])
    assert result.returncode == 0, result.stderr
    for rank in range(2):
        assert lines_of(result.stdout, rank) == ["['a', '-n', '5']"]


def test_module_form_passes_args(tmp_path):
    write_script(
        tmp_path,
        """
        import os, sys
        print(os.environ["SYMMEM_RANK"], sys.argv[1:])
    """,
        name="mymod.py",
    )
    result = launch(["-n", 2, "-m", "mymod", "x", "--y"], env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    for rank in range(2):
        assert lines_of(result.stdout, rank) == ["%d ['x', '--y']" % rank]


def test_script_args_and_stderr_prefix(tmp_path):
    script = write_script(
        tmp_path,
        """
        import sys
        print("args", sys.argv[1:])
        print("to stderr", file=sys.stderr)
    """,
    )
    result = launch(["--npes", 1, script, "-n", "3", "--timeout", "x"])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[pe 0] args ['-n', '3', '--timeout', 'x']\n"
    assert result.stderr == "[pe 0] to stderr\n"


def test_partial_last_line():
    result = launch(["-n", 2, "-c", "import sys; sys.stdout.write('line\\nno newline')"])
    assert result.returncode == 0, result.stderr
    for rank in range(2):
        assert lines_of(result.stdout, rank) == ["line", "no newline"]


def test_no_prefix():
    result = launch(["-n", 1, "--no-prefix", "-c", "print('plain')"])
    assert result.returncode == 0
    assert result.stdout == "plain\n"


# ---------------------------------------------------------------- failures


def failing_script(tmp_path, failure):
    """PE 1 does `failure` once every PE has started (a failure during
    start-up ends it: test_launcher_limits.py); the other PEs sleep for a
    minute."""
    return write_script(
        tmp_path,
        """
        import glob, os, sys, time
        folder, n = os.environ["SYMMEM_STATUS_DIR"], int(os.environ["SYMMEM_NRANKS"])
        open(os.path.join(folder, "started." + os.environ["SYMMEM_RANK"]), "w").close()
        if os.environ["SYMMEM_RANK"] == "1":
            while len(glob.glob(os.path.join(folder, "started.*"))) < n:
                time.sleep(0.01)
            %s
        time.sleep(60)
    """
        % failure,
    )


def test_exit_code_of_first_failure(tmp_path):
    script = failing_script(tmp_path, "sys.exit(3)")
    result, elapsed = timed_launch(["-n", 3, "--grace", 1, script])
    assert result.returncode == 3
    assert elapsed < 1 + 3
    assert "PE 1 (pid " in result.stderr
    assert "failed first: exited with code 3" in result.stderr
    assert "stopped PE 0, PE 2" in result.stderr


def test_uncaught_exception(tmp_path):
    script = failing_script(tmp_path, "raise ValueError('boom')")
    result, elapsed = timed_launch(["-n", 3, "--grace", 1, script])
    assert result.returncode == 1
    assert elapsed < 1 + 3
    report = result.stderr[result.stderr.index("symmem.run: PE 1") :]
    assert "failed first: exited with code 1" in report
    assert "last lines of PE 1's stderr" in report
    assert "    ValueError: boom" in report
    # The traceback was also forwarded as the PE's own output.
    assert "[pe 1] ValueError: boom" in result.stderr


def test_killed_by_signal(tmp_path):
    script = failing_script(tmp_path, "os.kill(os.getpid(), 9)")
    result, elapsed = timed_launch(["-n", 2, "--grace", 1, script])
    assert result.returncode == 128 + 9
    assert elapsed < 1 + 3
    assert "PE 1" in result.stderr
    assert "killed by signal 9 (SIGKILL)" in result.stderr


def test_others_exit_by_themselves_within_grace(tmp_path):
    # PE 1 fails; PE 0 notices (here: just exits 1 soon after) before the
    # grace period ends, so it is counted as failed, not stopped.
    script = write_script(
        tmp_path,
        """
        import os, sys, time
        if os.environ["SYMMEM_RANK"] == "1":
            sys.exit(3)
        time.sleep(0.5)
        sys.exit(1)
    """,
    )
    result, elapsed = timed_launch(["-n", 2, "--grace", 5, script])
    assert result.returncode == 3
    assert elapsed < 4
    assert "PE 1 (pid" in result.stderr
    assert "2 of 2 PEs failed (PE 0, PE 1)" in result.stderr
    assert "stopped" not in result.stderr


def test_status_file_of_failed_pe(tmp_path):
    script = write_script(
        tmp_path,
        """
        import os, sys, time
        if os.environ["SYMMEM_RANK"] == "1":
            sys.exit(5)
        path = os.path.join(os.environ["SYMMEM_STATUS_DIR"], "1")
        deadline = time.monotonic() + 5
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(path) as f:
            print("status of PE 1:", f.read().strip())
    """,
    )
    result = launch(["-n", 2, "--grace", 6, script])
    assert result.returncode == 5
    assert lines_of(result.stdout, 0) == ["status of PE 1: exited with code 5"]
    assert "PE 1 (pid" in result.stderr


def test_status_file_before_pid_disappears(tmp_path):
    # A peer that sees a dead PE's pid gone (reaped, not a zombie) must find
    # its status file already written; and reaping must be prompt.
    pid_file = tmp_path / "pid1"
    script = write_script(
        tmp_path,
        """
        import os, sys, time
        status = os.path.join(os.environ["SYMMEM_STATUS_DIR"], "1")
        if os.environ["SYMMEM_RANK"] == "1":
            with open(%r + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(%r + ".tmp", %r)
            time.sleep(0.5)
            os.kill(os.getpid(), 9)
        while not os.path.exists(%r):
            time.sleep(0.01)
        pid = int(open(%r).read())
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.001)
        print("file there:", os.path.exists(status))
        print("content:", open(status).read().strip())
    """
        % ((str(pid_file),) * 5),
    )
    result = launch(["-n", 2, "--grace", 5, script])
    assert result.returncode == 137
    assert lines_of(result.stdout, 0) == [
        "file there: True",
        "content: was killed by signal 9 (SIGKILL)",
    ]


def test_status_files_for_successful_pes(tmp_path):
    # The status dir is removed at exit, so PE 0 looks at PE 1's file.
    script = write_script(
        tmp_path,
        """
        import os, time
        if os.environ["SYMMEM_RANK"] == "0":
            path = os.path.join(os.environ["SYMMEM_STATUS_DIR"], "1")
            while not os.path.exists(path):
                time.sleep(0.01)
            print(open(path).read().strip())
            print(sorted(os.listdir(os.environ["SYMMEM_STATUS_DIR"])))
            print("dir", os.environ["SYMMEM_STATUS_DIR"])
    """,
    )
    result = launch(["-n", 2, script])
    assert result.returncode == 0, result.stderr
    out = lines_of(result.stdout, 0)
    assert out[:2] == ["exited with code 0", "['1']"]
    status_dir = out[2].split(" ", 1)[1]
    assert not os.path.exists(status_dir)


def test_timeout():
    result, elapsed = timed_launch(["-n", 2, "--timeout", 1, "-c", "import time; time.sleep(60)"])
    assert result.returncode == 124
    assert elapsed < 5
    assert "timeout after 1 s: PEs still running: [0, 1]" in result.stderr


def test_timeout_says_a_pe_is_stopped():
    # PE 1 stops itself (SIGSTOP): it can print no stack, and the report says
    # why instead of "printed no stack"; SIGKILL still ends it
    result, elapsed = timed_launch(
        [
            "-n",
            2,
            "--timeout",
            1,
            "-c",
            "import os, signal, time\n"
            "if os.environ['SYMMEM_RANK'] == '1': os.kill(os.getpid(), signal.SIGSTOP)\n"
            "time.sleep(60)",
        ]
    )
    assert result.returncode == 124, result.stderr
    assert re.search(
        r"^    PE 1 is stopped \(SIGSTOP / state T; pid (\d+)\): it prints no "
        r"stack until it continues \(kill -CONT \1\)$",
        result.stderr,
        re.M,
    ), result.stderr
    assert re.search(r"^    PE 0 \(pid \d+\): cannot print its stack", result.stderr, re.M), (
        result.stderr
    )
    assert elapsed < 10, elapsed


def test_sigterm_to_launcher_stops_pes():
    proc = subprocess.Popen(
        [
            sys.executable,
            str(RUN_PY),
            "-n",
            "2",
            "-c",
            "import os, time; print('pid', os.getpid()); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        pids = [int(proc.stdout.readline().split()[-1]) for _ in range(2)]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# ---------------------------------------------------------------- usage


def test_missing_script(tmp_path):
    result = launch(["-n", 2, tmp_path / "nope.py"])
    assert result.returncode == 2
    assert "no such program file" in result.stderr
    assert "nope.py" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["-n", 2],
        ["-n", 0, "-c", "pass"],
        ["-n", "two", "-c", "pass"],
        ["--backend", "tpu", "-c", "pass"],
        ["--timeout", "-1", "-c", "pass"],
        ["--bogus", "-c", "pass"],
        ["-m"],
        ["-c"],
    ],
)
def test_bad_usage(args):
    result = launch(args)
    assert result.returncode == 2
    assert "usage:" in result.stderr


@pytest.mark.parametrize("option", ["-n", "-np", "--npes", "--nproc-per-node", "--nproc_per_node"])
def test_other_launchers_names_for_n(option):
    # mpirun's -np and torchrun's --nproc-per-node, as words and with =
    forms = [[option, "3"]] + ([["%s=3" % option]] if option.startswith("--") else [])
    for args in forms:
        result = launch([*args, "-c", "import os; print(os.environ['SYMMEM_NRANKS'])"])
        assert result.returncode == 0, result.stderr
        assert sorted(result.stdout.splitlines()) == ["[pe %d] 3" % pe for pe in range(3)]


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["-np", "p", "-c", "pass"],
            "argument -n/--npes/-np/--nproc-per-node/--nproc_per_node: "
            "N must be a whole number >= 1, got 'p'",
        ),
        (["-n", "0", "-c", "pass"], "N must be a whole number >= 1, got '0'"),
        (
            ["--timeout", "soon", "-c", "pass"],
            "argument --timeout: S must be a number of seconds >= 0, got 'soon'",
        ),
        (["--grace", "nan", "-c", "pass"], "S must be a number of seconds >= 0, got 'nan'"),
    ],
)
def test_usage_errors_use_the_options_names(args, words):
    result = launch(args)
    assert result.returncode == 2
    assert words in result.stderr, result.stderr
    assert "_positive_int" not in result.stderr and "_seconds" not in result.stderr


def test_the_symmem_run_script():
    # pyproject.toml's [project.scripts]: installed beside the interpreter
    script = Path(sys.executable).parent / "symmem-run"
    if not script.exists():
        pytest.skip("symmem-run is not installed (pip install -e . installs it)")
    result = subprocess.run(
        [str(script), "-np", "2", "-c", "print('hi')"], capture_output=True, text=True, timeout=20
    )
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["[pe 0] hi", "[pe 1] hi"]
    result = subprocess.run(
        [str(script), "-n", "0", "-c", "pass"], capture_output=True, text=True, timeout=20
    )
    assert result.returncode == 2 and result.stderr.startswith("usage: symmem-run "), result.stderr


def test_run_as_module():
    # python -m symmem.run needs the package to import; skip while the
    # compiled part is not built.
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    probe = subprocess.run([sys.executable, "-c", "import symmem"], env=env, capture_output=True)
    if probe.returncode != 0:
        pytest.skip("package symmem does not import yet")
    result = subprocess.run(
        [sys.executable, "-m", "symmem.run", "-n", "2", "-c", "print('hi')"],
        env=env,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["[pe 0] hi", "[pe 1] hi"]
