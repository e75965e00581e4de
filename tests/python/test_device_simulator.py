"""@numba.cuda.jit programs using symmem.device.numba, unchanged, under
numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1) on the cpu backend: each
CUDA thread is a Python thread and each device call symmem's host call
(python/symmem/device/numba/_simulator.py). Every PE checks what it got
and the elements around it. Skipped where numba-cuda is not installed (CI
installs only the test extras)."""

import importlib.util

import pytest

from conftest import assert_all_ok, cpu_only

if importlib.util.find_spec("numba_cuda") is None:
    pytest.skip("numba-cuda is not installed", allow_module_level=True)

pytestmark = cpu_only("numba-cuda's simulator runs kernels on the cpu backend's NumPy arrays")

SIM = {"NUMBA_ENABLE_CUDASIM": "1"}
HEAD = """
import symmem.device.numba as dev
from numba import cuda
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
check(dev.GPU_UNAVAILABLE is None, dev.GPU_UNAVAILABLE)
"""

RMA = (
    HEAD
    + """
N = 64  # two warps
def src_of(pe):
    return np.arange(N + 50, dtype=np.int64) * 3 + 1000 * pe
src = nvshmem.array((N + 50,), dtype="int64")
dst = nvshmem.array((N + 50,), dtype="int64")
pdst = nvshmem.array((N,), dtype="int32")
src[:] = src_of(me)
dst[:] = -1
pdst[:] = -1
priv = np.arange(N, dtype=np.int64) + 100 * me  # private: copied in, as on a GPU
got = np.full(N + 48, -1, dtype=np.int64)        # private: written back after the kernel
gvals = np.zeros(N, dtype=np.int64)
nvshmem.barrier_all()

@cuda.jit
def rma(dst, src, pdst, priv, got, gvals, pe):
    i = cuda.threadIdx.x
    w = i // 32
    dev.put_block(dst[1:17], src[1:17], pe)                                   # [1, 17)
    dev.put_warp(dst[17 + 16 * w:33 + 16 * w], src[17 + 16 * w:33 + 16 * w], pe)  # [17, 49)
    dev.put_nbi(dst[49 + i:50 + i], priv[i:i + 1], pe)                        # [49, 49 + N)
    dev.p(pdst[i:i + 1], 7 * i + dev.my_pe(), pe)
    dev.quiet()
    dev.barrier_all_block()
    dev.get_block(got[0:16], src[1:17], pe)
    dev.get_warp(got[16 + 16 * w:32 + 16 * w], src[17 + 16 * w:33 + 16 * w], pe)
    dev.get_nbi(got[48 + i:49 + i], src[49 + i:50 + i], pe)
    dev.quiet()
    gvals[i] = dev.g(src[i:i + 1], pe)

rma[1, N](dst, src, pdst, priv, got, gvals, nxt)
nvshmem.barrier_all()
want = np.full(N + 50, -1, dtype=np.int64)
want[1:49] = src_of(prv)[1:49]
want[49:49 + N] = np.arange(N) + 100 * prv
check_equal(dst, want, "put at every scope (and the guards around)")
check_equal(pdst, (7 * np.arange(N) + prv).astype(np.int32), "p")
check_equal(got, src_of(nxt)[1:49 + N], "get at every scope, into a private array")
check_equal(gvals, src_of(nxt)[:N], "g")
for a in (src, dst, pdst):
    nvshmem.free_array(a)
ok()
nvshmem.finalize()
"""
)

RING = (
    HEAD
    + """
R = 40
src = nvshmem.array((R + 1,), dtype="int64")
dst = nvshmem.array((R + 1,), dtype="int64")
big_src = nvshmem.array((R + 1, 32), dtype="float32")
big_dst = nvshmem.array((R + 1, 32), dtype="float32")
sig = nvshmem.array((1,), dtype="uint64")
sig2 = nvshmem.array((1,), dtype="uint64")
src[:] = np.arange(R + 1) + 1000 * me
big_src[:] = np.arange(32, dtype=np.float32) + 0.5 * me
dst[:] = -1
big_dst[:] = -1
sig[:] = 0
sig2[:] = 0
nvshmem.barrier_all()

@cuda.jit
def ring(dst, src, sig, rounds, pe):  # one thread: each round's data in a slot of its own
    for r in range(1, rounds + 1):
        dev.put_signal(dst[r:r + 1], src[r:r + 1], sig, r, dev.SIGNAL_SET, pe)
        dev.signal_wait(sig, dev.CMP_GE, r)

@cuda.jit
def ring_block(dst, src, sig, rounds, pe):  # every thread of the block, SIGNAL_ADD
    for r in range(1, rounds + 1):
        dev.put_signal_nbi_block(dst[r], src[r], sig, 1, dev.SIGNAL_ADD, pe)
        seen = dev.signal_wait(sig, dev.CMP_GE, r)
        if seen < r:
            dst[0, cuda.threadIdx.x] = -2  # the check below sees it

ring[1, 1](dst, src, sig, R, nxt)
ring_block[1, 32](big_dst, big_src, sig2, R, nxt)
nvshmem.barrier_all()
check_equal(dst[1:], np.arange(1, R + 1) + 1000 * prv, "put_signal ring")
check(dst[0] == -1, f"guard {dst[0]}")
check(int(sig[0]) == R and int(sig2[0]) == R, f"signals {sig[0]} {sig2[0]}")
want = np.tile(np.arange(32, dtype=np.float32) + 0.5 * prv, (R, 1))
check_equal(big_dst[1:], want, "put_signal_nbi_block ring")
check((big_dst[0] == -1).all(), f"row 0: {big_dst[0]}")
ok()
nvshmem.finalize()
"""
)

ATOMICS = (
    HEAD
    + """
T = 32
counter = nvshmem.array((1,), dtype="int64")
tickets = nvshmem.array((1,), dtype="int64")
lock = nvshmem.array((1,), dtype="int64")
shared = nvshmem.array((1,), dtype="int64")
bits = nvshmem.array((1,), dtype="uint32")
for a in (counter, tickets, lock, shared, bits):
    a[:] = 0
mine = np.full(2 * T, -1, dtype=np.int64)
nvshmem.barrier_all()

@cuda.jit
def contend(counter, tickets, bits, mine):
    i = cuda.grid(1)
    dev.atomic_add(counter, 2, 0)
    mine[i] = dev.atomic_fetch_inc(tickets, 0)
    dev.atomic_or(bits, 1 << (i % 32), 0)

@cuda.jit
def locked(lock, shared):  # a compare_swap lock on PE 0 around a plain read-modify-write
    while dev.atomic_compare_swap(lock, 0, 1, 0) != 0:
        pass
    dev.p(shared, dev.g(shared, 0) + 1, 0)
    dev.quiet()
    dev.atomic_set(lock, 0, 0)

contend[2, T](counter, tickets, bits, mine)
locked[1, 8](lock, shared)
nvshmem.barrier_all()
everyone = nvshmem.array((2 * T * n,), dtype="int64")
mine_sym = nvshmem.array((2 * T,), dtype="int64")
mine_sym[:] = mine
nvshmem.fcollect(nvshmem.Teams.TEAM_WORLD, everyone, mine_sym)
check_equal(np.sort(everyone), np.arange(2 * T * n), "fetch_inc tickets: each once")
if me == 0:
    check(counter[0] == 2 * 2 * T * n, f"counter {counter[0]}")
    check(bits[0] == 0xFFFFFFFF, f"bits {bits[0]:#x}")
    check(shared[0] == 8 * n, f"locked increments {shared[0]}")
    check(lock[0] == 0, f"lock {lock[0]}")
ok()
nvshmem.finalize()
"""
)

BARRIERS = (
    HEAD
    + """
P, T = 15, 8
slots = nvshmem.array((T,), dtype="int64")
slots[:] = -1
seen = np.zeros((P, T), dtype=np.int64)
nvshmem.barrier_all()

@cuda.jit
def phases(slots, seen, pe, phases):
    i = cuda.threadIdx.x
    for k in range(phases):
        dev.p(slots[i:i + 1], k * 100 + dev.my_pe(), pe)
        dev.barrier_all_block()          # everyone's phase-k stores are here
        seen[k, i] = slots[i]
        dev.sync_all_block()             # nobody writes phase k + 1 before all have read

@cuda.jit
def one_thread(slots, pe):
    dev.p(slots[0:1], 7000 + dev.my_pe(), pe)
    dev.barrier_all()
    dev.sync_all()

phases[1, T](slots, seen, nxt, P)
check_equal(seen, np.repeat(np.arange(P) * 100 + prv, T).reshape(P, T), "barriers between phases")
one_thread[1, 1](slots, nxt)
check(slots[0] == 7000 + prv, f"thread-scope barrier_all: {slots[0]}")
nvshmem.barrier_all()
ok()
nvshmem.finalize()
"""
)

MISUSE = (
    HEAD
    + """
a = nvshmem.array((4,), dtype="int64")
f = nvshmem.array((4,), dtype="float64")

@cuda.jit
def mismatch(a, f, pe):
    dev.put(a, f, pe)

@cuda.jit
def keywords(a, pe):
    dev.put(dst=a[1:2], src=a[0:1], pe=pe)

@cuda.jit
def bad_keyword(a, pe):
    dev.put(a, a, target=pe)

expect_raises(nvshmem.NvshmemInvalid, [f"[pe {me}] put: dst has dtype int64 but src has "
              "float64"], mismatch[1, 1], a, f, nxt)
expect_raises(nvshmem.NvshmemInvalid, [f"[pe {me}] put: dst", "is not on the symmetric heap"],
              mismatch[1, 1], np.zeros(4, dtype=np.float64), f, nxt)
expect_raises(nvshmem.NvshmemInvalid, [f"[pe {me}] put: remote_pe={n} is outside [0, {n})"],
              keywords[1, 1], a, n)
expect_raises(nvshmem.NvshmemInvalid, ["put(dst, src, pe): unexpected or out-of-order keyword "
              "argument 'target'"], bad_keyword[1, 1], a, nxt)
expect_raises(nvshmem.NvshmemInvalid, ["symmem.device.numba.put(dst, src, pe) runs inside "
              "@numba.njit functions (cpu backend) and @numba.cuda.jit kernels"], dev.put, a, a,
              0)
a[:] = [5, 6, 7, 8]
nvshmem.barrier_all()
keywords[1, 1](a, nxt)
nvshmem.barrier_all()
check_equal(a, [5, 5, 7, 8], "put with keywords")
ok()
nvshmem.finalize()
"""
)

# Team collectives with the device calls' counts, team queries and
# get_peer_array, against NumPy.
COLLECTIVES = (
    HEAD
    + """
W = dev.Teams.TEAM_WORLD
src = nvshmem.array((2 * n,), dtype="int64")
red = nvshmem.array((3,), dtype="int64")
gathered = nvshmem.array((2 * n,), dtype="int64")
bcast = nvshmem.array((2,), dtype="int64")
who = np.zeros(3, dtype=np.int64)
src[:] = np.arange(2 * n) + 10 * me
red[:] = -1
nvshmem.barrier_all()

@cuda.jit
def collectives(src, red, gathered, bcast, who, pe):
    if cuda.threadIdx.x == 0:
        dev.reduce(W, red[:2], src, "sum")      # min(dst, src) = 2 elements
    dev.fcollect_block(W, gathered, src[:2])
    dev.broadcast_warp(W, bcast, src, 1 % dev.n_pes())
    dev.barrier_block(W)
    if cuda.threadIdx.x == 0:
        who[0] = dev.team_my_pe(W)
        who[1] = dev.team_n_pes(W)
        who[2] = dev.get_peer_array(src, pe)[0]

collectives[1, 4](src, red, gathered, bcast, who, nxt)
every = [np.arange(2 * n) + 10 * pe for pe in range(n)]
check_equal(red, [sum(e[0] for e in every), sum(e[1] for e in every), -1], "reduce")
check_equal(gathered, np.concatenate([e[:2] for e in every]), "fcollect_block")
check_equal(bcast, every[1 % n][:2], "broadcast_warp")
check_equal(who, [me, n, 10 * nxt], "team_my_pe, team_n_pes, get_peer_array")
nvshmem.barrier_all()
ok()
nvshmem.finalize()
"""
)

EVERY_NAME = (
    HEAD
    + """
from symmem.device.numba import _stubs
names = [x for x in dev.__all__
         if callable(getattr(dev, x)) and not isinstance(getattr(dev, x), type)]
check(len(names) >= 70, names)
missing = [x for x in names if x not in _stubs.SIMULATED]
check(not missing, f"no simulated function for {missing}")
ok()
nvshmem.finalize()
"""
)


@pytest.mark.parametrize(
    "program", ["RMA", "RING", "ATOMICS", "BARRIERS", "MISUSE", "COLLECTIVES", "EVERY_NAME"]
)
def test_an_unchanged_cuda_jit_program_runs_in_the_simulator_at_2_pes(run_pes, program):
    result = run_pes(2, globals()[program], env=SIM, timeout=120)
    assert_all_ok(result, 2)
