"""The gpu backend's init undoes what it did when a step fails. For each
start-up step in turn, SYMMEM_GPU_FAIL_AT=<step> makes init fail where that
step would begin; each PE then checks that

  - init raised NvshmemError naming the step;
  - NVSHMEM no longer runs (nvshmemx_init_status() of the loaded
    libnvshmem_host is NOT_INITIALIZED): the unwind finalized it;
  - its GPU's free memory (cudaMemGetInfo) is back where it was before init;
  - init succeeds again without the hook, a put to the next PE delivers the
    data each PE checks, finalize works, and the free memory is back again
    (finalize gave back everything init took).

Run: python -m symmem.run -n 2 tests/gpu/startup_failures.py

Every step runs in this ONE pair of processes, one after the other, rather
than each in a fresh pair: NVSHMEM 3.x starts again after
nvshmemx_hostlib_finalize in the same process (with the unique-id bootstrap
symmem uses, finalize ends the bootstrap too and the next init makes a new
one from a new id), so "init works again afterwards" is a real check of what
the unwind left behind, and it is what a program that retries init does.
Each PE reports every problem it finds and carries on through the steps
with the others (init is collective), then fails at the end naming them all;
between rounds, while symmem is down, the PEs meet through files in /dev/shm.
"""

import ctypes
import os
import shutil
import sys
import time

import cupy as cp

import symmem as nvshmem
from symmem import _symmem  # the launcher's placement, whichever launcher

STEPS = [
    "context",
    "engine",
    "stream",
    "scratch",
    "agree_buffers",
    "watch_peers",
    "heartbeat",
    "teams",
    "call_pages",
]
# What each step takes, for messages that say what a failed unwind left held.
HOLDS = {
    "context": "a retain of the device's primary context",
    "engine": "the engine's start: NVSHMEM itself (its symmetric heap, NVSHMEM_SYMMETRIC_SIZE, "
    "its internal buffers and its bootstrap), or the symmem engine's sockets, a stream and "
    "the heap's reserved address space",
    "stream": "the backend's CUDA stream",
    "scratch": "the 1 MiB scratch buffer (cuMemAlloc)",
    "agree_buffers": "two small buffers of the symmetric heap (the symmem engine maps its "
    "first 32 MiB chunk for them, on every PE)",
    "watch_peers": "host memory only",
    "heartbeat": "nothing on one host; across hosts a thread and TCP sockets",
    "teams": "host memory only (the predefined teams' members)",
    "call_pages": "host memory and a call page in /dev/shm (unlinked at once)",
}
# How far free device memory may fall during a step without counting as a
# leak. Measured on 2 x H200 with NVSHMEM 3.4.5: NVSHMEM itself keeps up to
# one 2 MiB page of device memory each time it starts and finalizes in a
# process (failing at 'stream', where only the context and NVSHMEM are
# taken, 3 cycles cost 2 MiB, and later steps 0 to 2 MiB a cycle), and a
# reading may be one page off. So each step is allowed one page, plus one
# page for every NVSHMEM start in it. That catches NVSHMEM left running (its
# heap and buffers are hundreds of MiB; its init status is checked too) and
# any leak of more than a page a start, but not a leak of one page or less
# (symmem's 1 MiB scratch buffer), nor a leaked stream, module or retain of
# the primary context, which take no memory a reading shows; those rest on
# the unwind's code (src/backends/gpu/start.c) and on init working again.
PAGE = 2 << 20
REPEAT = 2
SETTLE_SECONDS = 5.0  # memory a peer still maps is freed once it unmaps it
MiB = float(1 << 20)
NVSHMEM_STATUS = {
    0: "NOT_INITIALIZED",
    1: "IS_BOOTSTRAPPED",
    2: "IS_INITIALIZED",
    3: "LIMITED_MPG",
    4: "FULL_MPG",
}

placement = _symmem.launcher()  # whichever launcher started the job, if one did
# the GPU symmem picks for this PE (PEs share GPUs on the symmem engine)
cp.cuda.Device(placement["local_rank"] % cp.cuda.runtime.getDeviceCount()).use()
# This PE and the job's size as NVSHMEM numbers them, from the warm-up round
# on: PEs that meet through a unique id had no launcher to say.
me, n = placement["rank"], placement["nranks"]
problems = []
MEETING = None  # where the PEs meet between rounds, while symmem is down
meetings = [0]


def agree_on_meeting_place():
    """A folder named after PE 0's pid, which every PE learns by a broadcast."""
    global MEETING
    pid = nvshmem.array((1,), dtype="int64")
    pid[:] = os.getpid()
    nvshmem.broadcast(nvshmem.Teams.TEAM_WORLD, pid, pid, root=0)
    MEETING = f"/dev/shm/symmem-test-{int(pid[0])}-startup-failures"
    os.makedirs(MEETING, exist_ok=True)
    nvshmem.free_array(pid)


def meet(timeout=120.0):
    """Returns once every PE has called meet() as often as this one. Memory
    is measured only after it: NVSHMEM maps each peer's heap, so this GPU's
    memory is free only once the peers, too, are through their unwind."""
    meetings[0] += 1
    mine = os.path.join(MEETING, f"{meetings[0]}.{me}")
    open(mine, "w").close()
    deadline = time.monotonic() + timeout
    while not all(os.path.exists(os.path.join(MEETING, f"{meetings[0]}.{pe}")) for pe in range(n)):
        if time.monotonic() > deadline:
            print(
                f"PE {me} FAILED: the other PEs did not reach meeting {meetings[0]} within "
                f"{timeout:.0f} s",
                flush=True,
            )
            sys.exit(1)
        time.sleep(0.01)
    if meetings[0] > 1:  # every PE is past the previous meeting
        os.remove(os.path.join(MEETING, f"{meetings[0] - 1}.{me}"))


def problem(text):
    problems.append(text)
    print(f"PE {me} PROBLEM: {text}", flush=True)


def free_memory():
    """This GPU's free memory, with CuPy's own cached blocks given back first."""
    cp.get_default_memory_pool().free_all_blocks()
    cp.cuda.runtime.deviceSynchronize()
    return cp.cuda.runtime.memGetInfo()[0]


def nvshmem_host_library():
    """The libnvshmem_host.so.3 the backend loaded (found, not loaded again,
    with RTLD_NOLOAD), or None."""
    names = [
        os.environ.get("SYMMEM_NVSHMEM_LIB"),
        os.environ.get("SYMMEM_NVSHMEM_WHEEL_LIB"),
        "libnvshmem_host.so.3",
    ]
    for name in names:
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        except OSError:
            continue
        if hasattr(lib, "nvshmemx_init_status"):
            lib.nvshmemx_init_status.restype = ctypes.c_int
            return lib
    return None


def put_round(tag):
    """init (no hook), a put to the next PE that each PE checks, finalize."""
    global me, n
    try:
        nvshmem.init()
    except Exception as error:  # the other PE would wait for us: stop the job
        print(
            f"PE {me} FAILED: {tag}: init without SYMMEM_GPU_FAIL_AT raised "
            f"{type(error).__name__}: {error}",
            flush=True,
        )
        sys.exit(1)
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    if MEETING is None:
        agree_on_meeting_place()
    a = nvshmem.array((1024,), dtype="int64")
    b = nvshmem.array((1024,), dtype="int64")
    a[:] = cp.arange(1024, dtype=cp.int64) + 1000 * me
    b[:] = -1
    nvshmem.barrier_all()
    nvshmem.put(b, a, (me + 1) % n)
    nvshmem.barrier_all()
    got = cp.asnumpy(b)
    prv = (me - 1) % n
    expected = list(range(1000 * prv, 1000 * prv + 1024))
    if got.tolist() != expected:
        wrong = [i for i in range(1024) if got[i] != expected[i]]
        problem(
            f"{tag}: the put from PE {prv} delivered wrong data at {len(wrong)} of 1024 "
            f"elements (first: [{wrong[0]}] = {got[wrong[0]]}, expected {expected[wrong[0]]})"
        )
    nvshmem.free_array(a)
    nvshmem.free_array(b)
    try:
        nvshmem.finalize()
    except Exception as error:
        problem(f"{tag}: finalize raised {type(error).__name__}: {error}")


def check_memory(tag, before, starts, what):
    """How much less free memory this GPU has, once every PE is here, than
    before (negative: more); a problem past one page and one a NVSHMEM start."""
    meet()
    tolerance = PAGE * (1 + starts)
    deadline = time.monotonic() + SETTLE_SECONDS
    while (held := before - free_memory()) > tolerance and time.monotonic() < deadline:
        time.sleep(0.1)
    if held > tolerance:
        problem(
            f"{tag}: GPU {cp.cuda.runtime.getDevice()} has {held / MiB:.1f} MiB less free memory than before "
            f"(tolerance {tolerance / MiB:.0f} MiB, {SETTLE_SECONDS:.0f} s to settle): "
            f"{what}. NVSHMEM maps the peers' heaps, so a peer that still holds this GPU's "
            "memory shows here too: see the other PEs' lines"
        )
    return held


def check_nvshmem_stopped(lib, tag):
    if lib is None:
        return
    status = lib.nvshmemx_init_status()
    if status != 0:
        problem(
            f"{tag}: NVSHMEM still runs after the failed init (nvshmemx_init_status() = "
            f"{status}, {NVSHMEM_STATUS.get(status, '?')}): the unwind did not call "
            "nvshmemx_hostlib_finalize"
        )


# One full round first: what stays loaded for the life of the process
# (CUDA's and NVSHMEM's code, CuPy's kernels) is in place before any baseline.
put_round("warm-up")
lib = nvshmem_host_library()
if lib is None:
    print(
        f"PE {me} NOTE: libnvshmem_host.so.3 with nvshmemx_init_status not found: "
        "NVSHMEM's state is judged by memory and by the next init alone",
        flush=True,
    )

# An unknown step is refused before anything starts, naming every step.
os.environ["SYMMEM_GPU_FAIL_AT"] = "bogus"
try:
    nvshmem.init()
    problem("SYMMEM_GPU_FAIL_AT=bogus: init succeeded")
    nvshmem.finalize()
except nvshmem.NvshmemInvalid as error:
    listed = str(error).split("is not one of ")[-1]
    if (
        "SYMMEM_GPU_FAIL_AT='bogus'" not in str(error)
        or [name.strip(" '") for name in listed.split(",")] != STEPS
    ):
        problem(f"SYMMEM_GPU_FAIL_AT=bogus: the error does not list exactly {STEPS}: {error}")
finally:
    del os.environ["SYMMEM_GPU_FAIL_AT"]

for index, step in enumerate(STEPS):
    tag = f"SYMMEM_GPU_FAIL_AT={step}"
    taken = "; ".join(f"{s}: {HOLDS[s]}" for s in STEPS[:index]) or "nothing"
    meet()
    before = free_memory()
    starts = REPEAT if index > STEPS.index("engine") else 0  # NVSHMEM started, then unwound
    for _ in range(REPEAT):
        os.environ["SYMMEM_GPU_FAIL_AT"] = step
        try:
            nvshmem.init()
        except nvshmem.NvshmemError as error:
            if f"init: failing at {step} (SYMMEM_GPU_FAIL_AT)" not in str(error):
                problem(f"{tag}: init raised an NvshmemError that does not name the step: {error}")
        except Exception as error:
            problem(f"{tag}: init raised {type(error).__name__}, not NvshmemError: {error}")
        else:
            problem(f"{tag}: init succeeded")
            nvshmem.finalize()
        finally:
            del os.environ["SYMMEM_GPU_FAIL_AT"]
        check_nvshmem_stopped(lib, tag)
    failed = check_memory(
        f"{tag}, after {REPEAT} failed inits",
        before,
        starts,
        f"the unwind left some of what the steps before '{step}' took ({taken})",
    )
    put_round(f"{tag}, the init after it")
    again = check_memory(
        f"{tag}, after the next init's finalize",
        before,
        starts + 1,
        "a whole init, put and finalize did not give back all it took "
        "(finalize's part, or NVSHMEM's)",
    )
    print(
        f"PE {me} {step}: {failed / MiB:+.1f} MiB held after {REPEAT} failed "
        f"inits, {again / MiB:+.1f} MiB after the next init and finalize",
        flush=True,
    )

meet()
if me == 0:  # the others stopped looking at the files within milliseconds
    time.sleep(1.0)
    shutil.rmtree(MEETING, ignore_errors=True)
if problems:
    print(f"PE {me} FAILED: {len(problems)} problems (listed above)", flush=True)
    sys.exit(1)
print(f"PE {me} OK (startup failures, {len(STEPS)} steps)")
