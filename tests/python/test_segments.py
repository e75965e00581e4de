"""The cpu backend's files in /dev/shm against faults and other local users: a
nearly full /dev/shm, a job killed during init, a job spread over hosts, files
planted under a job's names, two jobs started with the same variables, and the
bytes of the control segment's header.

The PEs here start without the launcher, from torchrun's variables, with a
MASTER_PORT of their own per test: that names their files (job_name), which
the tests then look at, plant or remove."""

import functools
import glob
import mmap
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import clean_env, cpu_only, wait_all, write_program

pytestmark = cpu_only("these are the cpu backend's files in /dev/shm")

UID = os.geteuid()
ROOT = Path(__file__).resolve().parents[2]
# The control segment (src/backends/cpu/cpu.h): a header of 136 bytes of
# fields, zeros to 192, then one slot per PE, each starting with
# state (u32), pid (i32), start time (u64) and host (64 bytes).
HEADER_FIELDS, HEADER = 136, 192
MAGIC = 0x53594D4D454D4333  # "SYMMEMC3"
PE_JOINED = 1

RING = """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
tag = int(sys.argv[1]) if len(sys.argv) > 1 else 0
src = nvshmem.array((2,), dtype="int64")
dst = nvshmem.array((2,), dtype="int64")
src[:] = [tag, me]
dst[:] = -1
nvshmem.barrier_all()
nvshmem.put(dst, src, (me + 1) % n)
nvshmem.barrier_all()
if dst.tolist() != [tag, (me - 1) % n]:
    print(f"PE {me} MIXED: got {dst.tolist()}, expected {[tag, (me - 1) % n]}", flush=True)
    sys.exit(3)
nvshmem.free_array(src)
nvshmem.free_array(dst)
nvshmem.finalize()
print(f"PE {me} OK", flush=True)
"""

INIT_FAILS = """
try:
    nvshmem.init()
except nvshmem.NvshmemError as error:
    print("raised:", error, flush=True)
    sys.exit(0)
print("init returned", flush=True)
sys.exit(4)
"""

# A stand-in for torchrun: starts the given ranks of prog with RANK set, and
# like torchrun stops the others once one fails. Prints "[rank r] rc=..." and
# each rank's output.
LAUNCHER = """
import os, subprocess, sys, time
prog, n, ranks, tag = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4]
procs = {r: subprocess.Popen([sys.executable, prog, tag], env=dict(os.environ, RANK=r,
                             WORLD_SIZE=n), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True) for r in ranks}
deadline = time.monotonic() + 60
while time.monotonic() < deadline and any(p.poll() is None for p in procs.values()):
    if any(p.poll() not in (None, 0) for p in procs.values()):
        break
    time.sleep(0.05)
for p in procs.values():
    if p.poll() is None:
        p.kill()
for r, p in procs.items():
    out = p.communicate()[0]
    print(f"[rank {r}] rc={p.returncode}")
    print("".join(f"[rank {r}] {line}\\n" for line in out.splitlines()), end="")
sys.exit(0 if all(p.returncode == 0 for p in procs.values()) else 1)
"""


def job_name(port):
    """The job name bootstrap.c makes from torchrun's variables (FNV-1a)."""
    h = 1469598103934665603
    for byte in f"127.0.0.1:{port}::".encode():
        h = ((h ^ byte) * 1099511628211) % 2**64
    return f"t{h:016x}"


def ctl_path(port):
    return f"/dev/shm/symmem-{UID}-{job_name(port)}-ctl"


def job_files(port):
    return sorted(glob.glob(f"/dev/shm/symmem-{UID}-{job_name(port)}-*"))


@pytest.fixture
def port():
    """A MASTER_PORT no other test uses; the job's files go afterwards."""
    chosen = random.randint(20000, 60000)
    yield chosen
    for path in job_files(chosen):
        os.unlink(path)


def torch_env(port, rank=None, n=2, **extra):
    env = {
        "SYMMEM_BACKEND": "cpu",
        "WORLD_SIZE": str(n),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "SYMMEM_TIMEOUT": "30",
    }
    if rank is not None:
        env["RANK"] = str(rank)
    env.update(extra)
    return env


def start(program, env, args=(), command=None):
    """python program args (or command), with env and without any launcher's
    variables or secret of ours."""
    full = clean_env()
    full.pop("SYMMEM_JOB_SECRET", None)
    full.update(env)
    command = command or [sys.executable, str(program)]
    return subprocess.Popen(
        [*command, *map(str, args)],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(paths, proc, timeout=30):
    """Waits until every path (a glob) exists, while proc runs."""
    deadline = time.monotonic() + timeout
    while not all(glob.glob(p) for p in paths):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{paths} never appeared"
        time.sleep(0.02)


def start_time(pid):
    """/proc/<pid>/stat field 22, as the library records it."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return int(text[text.rindex(")") + 2 :].split()[19])


def raised(result):
    """The message of INIT_FAILS's process, which must have exited 0."""
    rc, out, err = result
    assert rc == 0, f"rc={rc}\n{out}\n{err}"
    assert out.startswith("raised: "), out + err
    return out


def check_ring(results, n):
    for rc, out, err in results:
        assert rc == 0, f"rc={rc}\n{out}\n{err}"
    lines = sorted(line for _, out, _ in results for line in out.splitlines())
    assert lines == [f"PE {pe} OK" for pe in range(n)], lines


# ---------------------------------------------------------------- 6: a full /dev/shm


@functools.lru_cache(maxsize=None)
def private_shm_refusal():
    """Why a private tmpfs cannot be mounted over /dev/shm here ("" if it can)."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /dev/shm"],
        capture_output=True,
        text=True,
    )
    return "" if probe.returncode == 0 else ("unshare -Urm + mount tmpfs: " + probe.stderr.strip())


FULL_SHM = """
try:
    nvshmem.init()
except nvshmem.NvshmemError as error:
    print("init raised:", error, flush=True)
    sys.exit(0)
try:
    a = nvshmem.array((1 << 16,), dtype="int8")
except nvshmem.NvshmemError as error:
    print("array raised:", error, flush=True)
else:
    a[:] = 1
    print("array fits", flush=True)
nvshmem.finalize()
"""


@pytest.mark.parametrize("n, fails_in, room_kib", [(3, "init", 8), (2, "array", 20)])
def test_a_nearly_full_dev_shm_is_an_error_not_a_signal(tmp_path, n, fails_in, room_kib):
    # A private 128 KiB /dev/shm with room_kib left: the control segment of 3
    # PEs (about 17 KiB) does not fit in 8, that of 2 (about 13 KiB) fits in
    # 20, and then nothing is left for a 64 KiB array. Either way every PE
    # raises.
    if private_shm_refusal():
        pytest.skip(private_shm_refusal())
    prog = write_program(tmp_path, FULL_SHM)
    fill = (
        f"{sys.executable} -c \"import os; fd = os.open('/dev/shm/filler', os.O_CREAT | "
        f"os.O_WRONLY, 0o600); os.posix_fallocate(fd, 0, {128 - room_kib} * 1024)\""
    )
    script = (
        f"mount -t tmpfs -o size=128k tmpfs /dev/shm && {fill} && exec {sys.executable} "
        f"-m symmem.run -n {n} --timeout 60 {prog}"
    )
    env = clean_env({"SYMMEM_BACKEND": "cpu", "SYMMEM_TIMEOUT": "20"})
    proc = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", script], capture_output=True, text=True, timeout=90, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SIGBUS" not in proc.stderr
    for pe in range(n):
        [line] = [l for l in proc.stdout.splitlines() if l.startswith(f"[pe {pe}] ")]
        if fails_in == "init":
            assert line.startswith(f"[pe {pe}] init raised: [pe {pe}] init: cannot reserve "), line
            assert "bytes in /dev/shm for the control segment" in line, line
            assert "No space left on device" in line, line
        else:
            assert line.startswith(f"[pe {pe}] array raised: [pe {pe}] "), line
            assert re.search(
                r"array: (cannot commit 65536 bytes of shared memory in /dev/shm: "
                r"No space left on device|PE \d could not commit 65536 bytes)",
                line,
            ), line


# ---------------------------------------------------------------- 7: stale files


def test_a_job_killed_during_init_leaves_nothing_that_blocks_the_next(tmp_path, port):
    prog = write_program(tmp_path, RING)
    first = start(prog, torch_env(port, 0))
    wait_for([ctl_path(port), ctl_path(port)[:-3] + "*-heap0"], first)  # PE 1 never comes
    first.kill()
    first.wait()
    assert len(job_files(port)) == 2, job_files(port)
    # The same variables again, from another launcher process: the files of
    # the dead job are recognised as stale and replaced.
    launcher = write_program(tmp_path, LAUNCHER, name="launcher.py", prelude=False)
    [(rc, out, err)] = wait_all([start(launcher, torch_env(port), [prog, 2, "0,1", 5])], 90)
    assert rc == 0, out + err
    assert "[rank 0] PE 0 OK" in out and "[rank 1] PE 1 OK" in out, out
    assert job_files(port) == []


@pytest.mark.parametrize("rank", [1, 0])
def test_a_pe_whose_init_times_out_leaves_no_files(tmp_path, port, rank):
    # The other PE never comes: this one made the control segment and its
    # heap, and removes both, whichever PE it is (PE 0 alone used to)
    prog = write_program(tmp_path, INIT_FAILS)
    [result] = wait_all([start(prog, torch_env(port, rank, SYMMEM_TIMEOUT="1"))], 30)
    # the elapsed time it names is at least SYMMEM_TIMEOUT, more on a busy machine
    said = raised(result)
    assert re.search(
        rf"\[pe {rank}\] init: timed out after \d+\.\d s; PEs that never started: {1 - rank}", said
    ), result
    # which bound expired, and what to do
    assert "SYMMEM_TIMEOUT=1 s bounds init's wait for every PE to start as well" in said, said
    assert job_files(port) == []


def test_a_live_job_is_not_stale_and_a_lost_claim_changes_nothing(tmp_path, port):
    prog = write_program(tmp_path, RING)
    first = start(prog, torch_env(port, 0))
    wait_for([ctl_path(port), ctl_path(port)[:-3] + "*-heap0"], first)
    # A second PE 0 of the same launcher: the slot is taken by a running process.
    second = raised(wait_all([start(write_program(tmp_path, INIT_FAILS), torch_env(port, 0))])[0])
    assert (
        f"init: PE 0 of job {job_name(port)} is already taken by process {first.pid} "
        "(running): two processes were started as PE 0"
    ) in second, second
    # The first one's slot is intact: with PE 1 the job runs.
    check_ring(wait_all([first, start(prog, torch_env(port, 1))], 60), 2)
    assert job_files(port) == []


# ---------------------------------------------------------------- 12: several hosts

SPANNING = {
    "torchrun": (
        {
            "RANK": "0",
            "WORLD_SIZE": "4",
            "LOCAL_RANK": "0",
            "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "10.0.0.1",
            "MASTER_PORT": "29500",
        },
        "LOCAL_WORLD_SIZE=2 < WORLD_SIZE=4",
    ),
    "mpirun": (
        {
            "OMPI_COMM_WORLD_RANK": "1",
            "OMPI_COMM_WORLD_SIZE": "4",
            "OMPI_COMM_WORLD_LOCAL_RANK": "1",
            "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
            "PMIX_NAMESPACE": "prterun-x-1@1",
        },
        "OMPI_COMM_WORLD_LOCAL_SIZE=2 < OMPI_COMM_WORLD_SIZE=4",
    ),
    "srun": (
        {
            "SLURM_PROCID": "0",
            "SLURM_NTASKS": "4",
            "SLURM_LOCALID": "0",
            "SLURM_STEP_NUM_NODES": "2",
            "SLURM_JOB_ID": "77",
            "SLURM_STEP_ID": "0",
        },
        "SLURM_STEP_NUM_NODES=2",
    ),
    "srun --ntasks-per-node": (
        {
            "SLURM_PROCID": "3",
            "SLURM_NTASKS": "4",
            "SLURM_NTASKS_PER_NODE": "2",
            "SLURM_JOB_ID": "78",
            "SLURM_STEP_ID": "0",
        },
        "SLURM_NTASKS_PER_NODE=2 < SLURM_NTASKS=4",
    ),
}


@pytest.mark.parametrize("launcher", sorted(SPANNING))
def test_a_job_over_several_hosts_fails_at_once(tmp_path, launcher):
    # Without SYMMEM_TIMEOUT init would wait 120 s for the other hosts' PEs;
    # wait_all gives up long before.
    env, why = SPANNING[launcher]
    prog = write_program(tmp_path, INIT_FAILS)
    msg = raised(wait_all([start(prog, dict(env, SYMMEM_BACKEND="cpu"))], timeout=60)[0])
    assert (
        "init: the cpu backend runs on one host, but the launcher starts this job's 4 PEs "
        f"on several ({why})."
    ) in msg, msg
    assert "use the gpu backend (SYMMEM_BACKEND=gpu, NVSHMEM) for PEs on several hosts" in msg


# ---------------------------------------------------------------- 13: planted files


def plant(path, kind, target):
    """Puts something at path that symmem must not use."""
    if kind == "symlink":
        target.write_bytes(b"\0" * 8192)
        os.symlink(target, path)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    else:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.write(fd, b"\xab" * (64 if kind == "64 bytes" else 8192))
        os.fchmod(fd, 0o600 if kind == "64 bytes" else 0o666)
        if kind == "another user's":
            os.fchown(fd, 65534, 65534)
        os.close(fd)


PLANTED_CTL = {
    "open to others": "has mode 0666: other users may read or write it",
    "another user's": f"belongs to uid 65534, not to this user (uid {UID})",
    "64 bytes": "is not one of this version of symmem (64 bytes)",
    "symlink": "is a symbolic link; symmem does not follow it",
    "fifo": "is not a regular file",
}


@pytest.mark.parametrize("kind", sorted(PLANTED_CTL))
def test_a_planted_control_segment_is_refused(tmp_path, port, kind):
    if kind == "another user's" and UID != 0:
        pytest.skip("making a file of another user needs root")
    path = ctl_path(port)
    plant(path, kind, tmp_path / "target")
    before = Path(path).read_bytes() if kind != "fifo" else b""
    msg = raised(wait_all([start(write_program(tmp_path, INIT_FAILS), torch_env(port, 0))])[0])
    assert f"init: the control segment {path} {PLANTED_CTL[kind]}" in msg, msg
    assert f"rm {path}" in msg, msg
    # nothing was written into it, or through it
    assert kind == "fifo" or Path(path).read_bytes() == before
    assert os.path.lexists(path)


def play_pe_1(port, proc, kind, target):
    """Takes PE 1's slot in the control segment as the library would, for
    this test process, with kind planted as PE 1's heap; returns its name."""
    wait_for([ctl_path(port), ctl_path(port)[:-3] + "*-heap0"], proc)
    with open(ctl_path(port), "r+b") as f, mmap.mmap(f.fileno(), 0) as ctl:
        nonce = ctl[32:72].rstrip(b"\0").decode()
        heap1 = f"/dev/shm/symmem-{UID}-{job_name(port)}-{nonce}-heap1"
        plant(heap1, kind, target)
        slot = HEADER + (len(ctl) - HEADER) // 2
        struct.pack_into("<iQ", ctl, slot + 4, os.getpid(), start_time(os.getpid()))
        ctl[slot + 16 : slot + 80] = socket.gethostname().encode().ljust(64, b"\0")
        struct.pack_into("<I", ctl, slot, PE_JOINED)  # last, as the library publishes
    return heap1


PLANTED_HEAP = {
    "symlink": "is a symbolic link; symmem does not follow it",
    "open to others": "has mode 0666: other users may read or write it",
    "64 bytes": f"has 64 bytes, not the {1 << 20} expected",
}


@pytest.mark.parametrize("kind", sorted(PLANTED_HEAP))
def test_a_planted_peer_heap_is_refused(tmp_path, port, kind):
    # PE 0 is real; this test plays PE 1, whose heap is something planted.
    pe0 = start(write_program(tmp_path, INIT_FAILS), torch_env(port, 0, SYMMEM_SYMMETRIC_SIZE="1M"))
    heap1 = play_pe_1(port, pe0, kind, tmp_path / "target")
    msg = raised(wait_all([pe0])[0])
    assert f"init: PE 1's heap {heap1} {PLANTED_HEAP[kind]}" in msg, msg
    if kind == "symlink":
        assert (tmp_path / "target").read_bytes() == b"\0" * 8192


def test_a_file_planted_at_our_heap_is_not_used(tmp_path, port):
    # PE 1's heap name is taken before PE 1 starts: PE 1 refuses to use it,
    # and PE 0, waiting for it, learns at once that PE 1 failed.
    pe0 = start(write_program(tmp_path, INIT_FAILS), torch_env(port, 0))
    wait_for([ctl_path(port), ctl_path(port)[:-3] + "*-heap0"], pe0)
    nonce = Path(ctl_path(port)).read_bytes()[32:72].rstrip(b"\0").decode()
    heap1 = f"/dev/shm/symmem-{UID}-{job_name(port)}-{nonce}-heap1"
    os.symlink(tmp_path / "target", heap1)
    pe1 = start(write_program(tmp_path, INIT_FAILS), torch_env(port, 1))
    msg0, msg1 = (raised(r) for r in wait_all([pe0, pe1]))
    assert f"init: cannot create the heap {heap1}: File exists" in msg1, msg1
    assert f"init: PE 1 (pid {pe1.pid}) failed to start" in msg0, msg0
    assert not (tmp_path / "target").exists()


def run_jobs(launcher, prog, envs, ranks=("0,1", "0,1"), tags=(1, 2)):
    """Starts one stand-in launcher per env at once, for the ranks and with
    the data tag of its own; returns their results."""
    procs = [start(launcher, env, [prog, 2, r, tag]) for env, r, tag in zip(envs, ranks, tags)]
    return wait_all(procs, 90)


CLEAR_FAILURES = (
    "another job with the same name",
    "is already taken by process",
    "failed to start",
    "PEs that never started",
)


def test_two_jobs_with_the_same_variables_never_mix(tmp_path, port):
    prog = write_program(tmp_path, RING)
    launcher = write_program(tmp_path, LAUNCHER, name="launcher.py", prelude=False)
    for _ in range(3):
        results = run_jobs(launcher, prog, [torch_env(port)] * 2)
        assert not any("MIXED" in out for _, out, _ in results), results
        assert any(rc == 0 for rc, _, _ in results), results
        for rc, out, err in results:
            if rc == 0:
                assert "[rank 0] PE 0 OK" in out and "[rank 1] PE 1 OK" in out, out
            else:
                assert "PE 0 OK" not in out and "PE 1 OK" not in out, out
                assert any(words in out for words in CLEAR_FAILURES), out + err


def test_jobs_with_different_secrets_run_side_by_side(tmp_path, port):
    prog = write_program(tmp_path, RING)
    launcher = write_program(tmp_path, LAUNCHER, name="launcher.py", prelude=False)
    results = run_jobs(
        launcher, prog, [torch_env(port, SYMMEM_JOB_SECRET=secret) for secret in ("one", "two")]
    )
    for rc, out, err in results:
        assert rc == 0, out + err
        assert "[rank 0] PE 0 OK" in out and "[rank 1] PE 1 OK" in out, out


def test_one_job_from_two_launchers_needs_a_shared_secret(tmp_path, port):
    prog = write_program(tmp_path, RING)
    launcher = write_program(tmp_path, LAUNCHER, name="launcher.py", prelude=False)
    # PE 0 and PE 1 started by different processes (two shells): refused...
    results = run_jobs(launcher, prog, [torch_env(port, SYMMEM_TIMEOUT="5")] * 2, ("0", "1"))
    text = "".join(out for _, out, _ in results)
    assert all(rc != 0 for rc, _, _ in results) and "OK" not in text, results
    assert (
        f"init: another job with the same name {job_name(port)} is starting on this host" in text
    ), text
    assert "set the same SYMMEM_JOB_SECRET in all of them" in text, text
    # ... unless they share a secret.
    results = run_jobs(
        launcher, prog, [torch_env(port, SYMMEM_JOB_SECRET="s3")] * 2, ("0", "1"), tags=(7, 7)
    )
    assert [rc for rc, _, _ in results] == [0, 0], results


def test_the_launcher_gives_each_job_a_secret(run_pes):
    result = run_pes(2, 'print(os.environ["SYMMEM_JOB_SECRET"])')
    assert result.rc == 0, str(result)
    secrets_seen = {line for pe in (0, 1) for line in result.lines(pe)}
    assert len(secrets_seen) == 1 and re.fullmatch(r"[0-9a-f]{32}", secrets_seen.pop()), result


# ---------------------------------------------------------------- 14: the header's bytes


def test_the_control_segment_header_has_no_stray_bytes(tmp_path, port):
    pe0 = start(write_program(tmp_path, RING), torch_env(port, 0, 3))
    wait_for([ctl_path(port), ctl_path(port)[:-3] + "*-heap0"], pe0)
    data = Path(ctl_path(port)).read_bytes()
    pe0_start = start_time(pe0.pid)
    pe0.kill()
    pe0.wait()
    assert struct.unpack_from("<QiiQQ", data) == (MAGIC, 3, pe0.pid, pe0_start, 1 << 30)
    assert re.fullmatch(rb"[0-9a-f]{32}\0{8}", data[32:72]), data[32:72]
    key = data[72:HEADER_FIELDS]
    assert re.fullmatch(rb"launcher \d+ \d+\0+", key), key
    if "RANK" not in os.environ:  # then this process started the PE
        assert key.startswith(f"launcher {os.getpid()} {start_time(os.getpid())}\0".encode())
    assert data[HEADER_FIELDS:HEADER] == bytes(HEADER - HEADER_FIELDS)
    slot_size = (len(data) - HEADER) // 3
    slot0 = data[HEADER : HEADER + 128]
    assert struct.unpack_from("<Ii", slot0) == (PE_JOINED, pe0.pid)
    assert slot0[16:128] == socket.gethostname().encode().ljust(112, b"\0")
    for pe in (1, 2):  # not claimed: zeros up to the doorbell (which PE 0 rang)
        at = HEADER + pe * slot_size
        assert data[at : at + 128] == bytes(128), pe


def test_valgrind_finds_no_uninitialised_bytes_written(tmp_path, port):
    program = ROOT / "build" / "examples" / "ring"
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    if not program.exists():
        pytest.skip(f"{program} is not built (make builds it)")
    # LD_PRELOAD="": valgrind cannot run a process with the AddressSanitizer
    # runtime make test-sanitize preloads (ring is the plain build anyway).
    procs = [
        start(
            None,
            torch_env(port, rank, LD_PRELOAD=""),
            command=["valgrind", "-q", "--error-exitcode=99", str(program)],
        )
        for rank in (0, 1)
    ]
    for rc, out, err in wait_all(procs, 120):
        assert rc == 0 and "uninitialised" not in err, f"rc={rc}\n{out}\n{err}"
        assert re.match(r"PE [01] of 2 received [01] from PE [01]", out), out
