"""symmem.device.numba in @numba.njit functions on the cpu backend: every PE
runs njit code that moves data, signals, waits and does atomics itself, and
checks what it received (and the elements around it). Each program compiles
its njit functions once per PE process; the programs are few and grouped to
keep numba's compile time (seconds per PE) small."""

import pytest

from conftest import assert_all_ok, not_on_gpu, not_through_rma
from test_stale_views import ESCAPES

pytest.importorskip("numba")
pytestmark = [
    not_on_gpu("@numba.njit device code runs on the host heap (the cpu and mpi backends)"),
    not_through_rma(
        "njit device calls reach the PEs of this node only (to others "
        "they raise: test_mpi_backend.py's njit test)"
    ),
]

DEVICE = """
    import numba
    import symmem.core.device.numba as dev   # the NVSHMEM4Py import path works
    from symmem import ComparisonType as CMP, SignalOp
"""

# put/get (blocking, and nbi + quiet), p/g: several dtypes, sizes with odd
# lengths, into a slice one element in (odd byte offsets), with a guard
# element either side that must not change.
RMA = (
    DEVICE
    + """
    @numba.njit
    def move(dst, src, gdst, gsrc, pe, nbi):
        if nbi:
            dev.put_nbi(dst, src, pe)
            dev.get_nbi(gdst, gsrc, pe)
            dev.quiet()
        else:
            dev.put(dst, src, pe)
            dev.get(gdst, gsrc, pe)
        dev.barrier_all()

    @numba.njit
    def p_then_g(dst, value, pe):
        dev.p(dst, value, pe)
        dev.barrier_all()
        return dev.g(dst, pe)

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    right, left = (me + 1) % n, (me - 1) % n
    for dtype in sys.argv[1].split(","):
        for size in [1, 7, 1001, 65537]:
            def pattern(pe):
                return ((np.arange(size) * 7 + pe * 1000 + 1) % 120).astype(dtype)
            for nbi in (False, True):
                dst = nvshmem.array((size + 2,), dtype=dtype)
                src = nvshmem.array((size,), dtype=dtype)
                dst[:] = 0
                src[:] = pattern(me)
                got = np.zeros(size + 2, dtype=dtype)
                nvshmem.barrier_all()
                move(dst[1:size + 1], pattern(me), got[1:size + 1], src, right, nbi)
                what = f"{dtype} x {size} nbi={nbi}"
                check_equal(dst[1:size + 1], pattern(left), "put " + what)
                check(dst[0] == 0 and dst[-1] == 0, "put wrote outside dst " + what)
                check_equal(got[1:size + 1], pattern(right), "get " + what)
                check(got[0] == 0 and got[-1] == 0, "get wrote outside dst " + what)
                nvshmem.free_array(dst)
                nvshmem.free_array(src)
        one = nvshmem.array((3,), dtype=dtype)
        one[:] = 0
        nvshmem.barrier_all()
        value = p_then_g(one[1:2], (me + 5) % 100, right)
        check(value == (me + 5) % 100, f"g of {dtype} gave {value}")
        check(one[1] == (left + 5) % 100 and one[0] == 0 and one[2] == 0,
              f"p of {dtype}: {one}")
        nvshmem.free_array(one)
    check(numba.njit(lambda: (dev.my_pe(), dev.n_pes()))() == (me, n), "my_pe, n_pes")
    ok()
    nvshmem.finalize()
"""
)


# The programs that cover the API (copies into guarded slices, the checks,
# the errors) compile without LLVM's optimizer: NUMBA_OPT=0 takes a quarter
# off each PE's compiles. The memory-model programs (the ping-pong, the
# litmus test, atomics under contention, the waits, the collectives) keep
# numba's default -O3, where a missing fence or a load hoisted out of a
# wait would show.
UNOPTIMIZED = {"NUMBA_OPT": "0"}


# Every dtype at 2 PEs (right and left are one PE); at 1 PE and at 3 (three
# different PEs in the ring) two (each dtype is a compilation per PE).
@pytest.mark.parametrize(
    "n, dtypes",
    [(1, "int8,float64"), (2, "int8,uint16,int32,int64,float32,float64"), (3, "uint16,float32")],
)
def test_put_get_p_g(run_pes, n, dtypes):
    assert_all_ok(run_pes(n, RMA, timeout=240, env=UNOPTIMIZED, args=[dtypes]), n)


# PE 0 and PE 1 bounce a payload with put_signal (and put_signal_nbi) for a
# few thousand rounds; each side checks the whole payload of every round.
PING_PONG = (
    DEVICE
    + """
    ROUNDS = 3000

    @numba.njit
    def ping_pong(buf, out, sig, me, rounds):
        other = 1 - me
        for r in range(1, rounds + 1):
            if (r % 2 == 1) == (me == 0):
                out[:] = r
                if r % 4 < 2:
                    dev.put_signal(buf, out, sig, r, SignalOp.SIGNAL_SET, other)
                else:
                    dev.put_signal_nbi(buf, out, sig, r, dev.SIGNAL_SET, other)
                    dev.quiet()
            else:
                dev.signal_wait(sig, CMP.CMP_GE, r)
                for i in range(buf.size):
                    if buf[i] != r:
                        return r
        return 0

    nvshmem.init()
    me = nvshmem.my_pe()
    buf = nvshmem.array((257,), dtype="int64")
    sig = nvshmem.array((1,), dtype="uint64")
    buf[:] = 0
    sig[:] = 0
    nvshmem.barrier_all()
    bad = ping_pong(buf, np.zeros(257, dtype=np.int64), sig, me, ROUNDS)
    check(bad == 0, f"stale payload in round {bad}")
    nvshmem.barrier_all()
    nvshmem.free_array(buf)
    nvshmem.free_array(sig)
    ok()
    nvshmem.finalize()
"""
)


def test_put_signal_ping_pong(run_pes):
    assert_all_ok(run_pes(2, PING_PONG, timeout=120), 2)


# Message passing: every writer stores many elements one by one (p) into its
# part of PE 0's buffer, then adds 1 to PE 0's signal; PE 0 waits for all
# writers' signals and checks every element, then lets the writers go on. A
# missing release (stores sinking below the signal) or acquire (loads hoisted
# above the wait) shows up as a stale element.
LITMUS = (
    DEVICE
    + """
    ROUNDS, PART = 1500, 512

    @numba.njit
    def writer(data, sig, ack, me, rounds):
        part = data[(me - 1) * PART:me * PART]
        for r in range(1, rounds + 1):
            for i in range(PART):
                dev.p(part[i:i + 1], r * 1000 + i, 0)
            dev.signal_op(sig, 1, SignalOp.SIGNAL_ADD, 0)
            dev.signal_wait(ack, CMP.CMP_GE, r)

    @numba.njit
    def reader(data, sig, ack, writers, rounds):
        for r in range(1, rounds + 1):
            dev.signal_wait(sig, CMP.CMP_GE, r * writers)
            for i in range(data.size):
                if data[i] != r * 1000 + i % PART:
                    return r * 1000000 + i
            for pe in range(1, writers + 1):
                dev.signal_op(ack, r, SignalOp.SIGNAL_SET, pe)
        return 0

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    data = nvshmem.array(((n - 1) * PART,), dtype="int64")
    sig = nvshmem.array((1,), dtype="uint64")
    ack = nvshmem.array((1,), dtype="uint64")
    data[:] = 0
    sig[:] = 0
    ack[:] = 0
    nvshmem.barrier_all()
    if me == 0:
        bad = reader(data, sig, ack, n - 1, ROUNDS)
        check(bad == 0, f"stale element: round {bad // 1000000}, index {bad % 1000000}")
    else:
        writer(data, sig, ack, me, ROUNDS)
    nvshmem.barrier_all()
    for a in (data, sig, ack):
        nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""
)


@pytest.mark.parametrize("n", [2, 3])
def test_message_passing_litmus(run_pes, n):
    assert_all_ok(run_pes(n, LITMUS, timeout=180), n)


# Atomics under contention (every PE adds to one counter on PE 0; a
# compare_swap lock guards a plain get-modify-put of another counter), every
# one of the 14 on its own values (at 2 PEs, each PE on the other's copy: a
# ring of 4 would be the same calls, at two compilations a PE), and barriers
# between phases.
ATOMICS = (
    DEVICE
    + """
    ROUNDS, PHASES = 1000, 50

    @numba.njit
    def contend(counter, lock, guarded, fsum, me, rounds):
        for _ in range(rounds):
            dev.atomic_fetch_add(counter, 1, 0)
            dev.atomic_inc(counter[1:2], 0)
            dev.atomic_add(fsum, 0.5, 0)
            while dev.atomic_compare_swap(lock, 0, me + 1, 0) != 0:
                pass
            dev.p(guarded, dev.g(guarded, 0) + 1, 0)   # not atomic: the lock guards it
            dev.atomic_set(lock, 0, 0)
        dev.barrier_all()

    @numba.njit
    def phases(slots, me, n, count):
        for k in range(1, count + 1):
            for pe in range(n):
                dev.p(slots[me:me + 1], k, pe)
            dev.barrier_all()
            for pe in range(n):
                if slots[pe] != k:
                    return k
            dev.sync_all()
        return 0

    @numba.njit
    def every_atomic(x, pe):
        out = np.zeros(12, dtype=x.dtype)
        dev.atomic_set(x, 12, pe)
        out[0] = dev.atomic_fetch(x, pe)
        dev.atomic_inc(x, pe)
        out[1] = dev.atomic_fetch_inc(x, pe)        # 13 -> 14
        dev.atomic_add(x, 2, pe)
        out[2] = dev.atomic_fetch_add(x, 4, pe)     # 16 -> 20
        dev.atomic_and(x, 0b10110, pe)
        out[3] = dev.atomic_fetch_and(x, 0b110, pe)  # 20 & 22 = 20 -> 4
        dev.atomic_or(x, 0b1000, pe)
        out[4] = dev.atomic_fetch_or(x, 1, pe)      # 12 -> 13
        dev.atomic_xor(x, 0b11, pe)
        out[5] = dev.atomic_fetch_xor(x, 0b101, pe)  # 14 -> 11
        out[6] = dev.atomic_swap(x, 40, pe)         # 11 -> 40
        out[7] = dev.atomic_compare_swap(x, 41, 50, pe)  # no swap: 40
        out[8] = dev.atomic_compare_swap(x, 40, 50, pe)  # swap: 40 -> 50
        out[9] = dev.atomic_fetch(x, pe)
        return out

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    counter = nvshmem.array((2,), dtype="int64")
    lock = nvshmem.array((1,), dtype="uint32")
    guarded = nvshmem.array((1,), dtype="int64")
    fsum = nvshmem.array((1,), dtype="float64")
    slots = nvshmem.array((n,), dtype="int32")
    for a in (counter, lock, guarded, fsum, slots):
        a[:] = 0
    nvshmem.barrier_all()
    contend(counter, lock, guarded, fsum, me, ROUNDS)
    if me == 0:
        total = n * ROUNDS
        check(list(counter) == [total, total], f"counters {counter}, expected {total}")
        check(guarded[0] == total, f"the lock let updates through: {guarded[0]} != {total}")
        check(fsum[0] == 0.5 * total, f"float adds {fsum[0]}")
    bad = phases(slots, me, n, PHASES)
    check(bad == 0, f"phase {bad}: a PE passed the barrier before every p landed")
    for dtype in ("int32", "uint64") if n == 2 else ():
        x = nvshmem.array((1,), dtype=dtype)
        nvshmem.barrier_all()
        got = every_atomic(x, (me + 1) % n)
        check(list(got[:10]) == [12, 13, 16, 20, 12, 14, 11, 40, 40, 50], f"{dtype}: {got}")
        nvshmem.barrier_all()
        check(x[0] == 50, f"{dtype}: final value {x[0]}")
        nvshmem.free_array(x)
    for a in (counter, lock, guarded, fsum, slots):
        nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""
)


@pytest.mark.parametrize("n", [2, 4])
def test_atomics_and_barriers(run_pes, n):
    assert_all_ok(run_pes(n, ATOMICS, timeout=180), n)


# The calls the misuse programs below make, each in an njit function.
CALLS = (
    DEVICE
    + """
    from numba.core.errors import TypingError

    @numba.njit
    def put(dst, src, pe):
        dev.put(dst, src, pe)

    @numba.njit
    def get(dst, src, pe):
        dev.get(dst, src, pe)

    @numba.njit
    def p(dst, v, pe):
        dev.p(dst, v, pe)
"""
)

# Misuse raises the host calls' exceptions, naming the call, the value and the
# PE, before any byte moves.
ERRORS = (
    CALLS
    + """

    @numba.njit
    def add(dst, v, pe):
        dev.atomic_add(dst, v, pe)

    @numba.njit
    def put_signal(dst, src, sig, op, pe):
        dev.put_signal(dst, src, sig, 1, op, pe)

    @numba.njit
    def wait(sig, cmp, value):
        return dev.signal_wait(sig, cmp, value)

    def invalid(words, fn, *args):
        msg = expect_raises(nvshmem.NvshmemInvalid, words, fn, *args)
        check(isinstance(nvshmem.NvshmemInvalid(msg), ValueError), "a ValueError")

    invalid(["put: symmem is not initialised"], put, np.zeros(2), np.zeros(2), 0)
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    a = nvshmem.array((8,), dtype="int64")
    sig = nvshmem.array((1,), dtype="uint64")
    a[:] = 3
    sig[:] = 0
    private = np.full(8, 7, dtype=np.int64)
    src = np.arange(8, dtype=np.int64)
    nvshmem.barrier_all()
    P = f"[pe {me}] "
    invalid([P + f"put: pe {n} is out of range: there are {n} PEs"], put, a, src, n)
    invalid([P + "p: pe -1 is out of range"], p, a, 1, -1)
    invalid([P + "atomic_add: pe 99 is out of range"], add, a, 1, 99)
    invalid([P + "put: dst (address 0x", "is not memory on the symmetric heap"],
            put, private, src, 0)
    invalid([P + "get: src (address 0x", "not memory on the symmetric heap"], get, a, private, 0)
    invalid([P + "signal_wait: sig_addr", "not memory on the symmetric heap"],
            wait, np.zeros(1, dtype=np.uint64), 0, 0)
    invalid([P + "put: dst is not a contiguous array"], put, a[::2], src[:4], 0)
    invalid([P + "put_signal: signal_op=3 is not SIGNAL_SET (9) or SIGNAL_ADD (10)"],
            put_signal, a, src, sig, 3, 0)
    invalid([P + "signal_wait: cmp=9 is not a ComparisonType"], wait, sig, 9, 0)
    # an empty array has no first element to act on (its address may be the next allocation's)
    invalid([P + "p: dst is empty"], p, a[8:], 1, 0)
    invalid([P + "atomic_add: dest is empty"], add, a[:0], 1, 0)
    invalid([P + "put_signal: sig_addr is empty"], put_signal, a, src, sig[:0], 9, 0)
    invalid([P + "signal_wait: sig_addr is empty"], wait, sig[1:], 0, 0)
    nvshmem.barrier_all()
    check(list(a) == [3] * 8 and list(private) == [7] * 8 and sig[0] == 0,
          f"a refused call moved data: {a} {private} {sig}")
    expect_raises(TypingError, ["put: dst has dtype int64 but src has float64"],
                  put, a, np.zeros(8), 0)
    expect_raises(TypingError, ["signal_wait: sig_addr has dtype int64; signal_wait takes uint64"],
                  wait, a, 0, 0)
    # a pe that is not an integer is refused when the function compiles
    expect_raises(TypingError, ["put: pe must be an integer, got array(float64"],
                  put, a, src, np.zeros(2))
    expect_raises(TypingError, ["atomic_add: pe must be an integer, got float64"], add, a, 1, 1.0)
    invalid(["symmem.device.numba.put(dst, src, pe) runs inside @numba.njit functions"],
            dev.put, a, src, 0)
    # Ctrl-C (SIGINT) ends an njit wait with KeyboardInterrupt; symmem works on
    import threading
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    expect_raises(KeyboardInterrupt, ["signal_wait: interrupted"], wait, sig, 0, 1)
    nvshmem.barrier_all()
    nvshmem.free_array(a)
    nvshmem.free_array(sig)
    ok()
    nvshmem.finalize()
    invalid(["put: symmem is not initialised"], put, private, src, 0)
"""
)


def test_errors(run_pes):
    assert_all_ok(run_pes(2, ERRORS, timeout=120, env=UNOPTIMIZED), 2)


# The host calls' checks of an array itself: an array whose allocation was
# freed is refused even once a new allocation has its address (the realistic
# case: free_array(a); b = symmem.array(same size)), so nothing lands in b;
# an array the call writes must be writable (a read-only view is refused
# when the function compiles). Reads of a read-only array still work.
FREED_AND_READ_ONLY = (
    CALLS
    + ESCAPES
    + """
    @numba.njit(nogil=True)
    def put_nogil(dst, src, pe):
        dev.put(dst, src, pe)

    @numba.njit
    def put_slice(dst, src, pe):  # a view numba makes keeps the caller's array
        dev.put(dst[1:], src[1:], pe)

    @numba.njit
    def g(src, pe):
        return dev.g(src, pe)

    @numba.njit
    def fetch_add(dst, v, pe):
        return dev.atomic_fetch_add(dst, v, pe)

    @numba.njit
    def fetch(dst, pe):
        return dev.atomic_fetch(dst, pe)

    @numba.njit
    def put_signal(dst, src, sig, pe):
        dev.put_signal(dst, src, sig, 1, dev.SIGNAL_SET, pe)

    @numba.njit
    def signal_op(sig, pe):
        dev.signal_op(sig, 1, dev.SIGNAL_SET, pe)

    @numba.njit
    def peer_store(arr, pe):
        dev.get_peer_array(arr, pe)[0] = 5

    @numba.njit
    def fcollect(dst, src):
        dev.fcollect(nvshmem.Teams.TEAM_WORLD, dst, src)

    def invalid(words, fn, *args):
        msg = expect_raises(nvshmem.NvshmemInvalid, words, fn, *args)
        check(isinstance(nvshmem.NvshmemInvalid(msg), ValueError), "a ValueError")

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt = (me + 1) % n
    P = f"[pe {me}] "
    src = np.arange(8, dtype=np.int64)
    a = nvshmem.array((8,), dtype="int64")
    a_view = a[2:]                        # a view made before the free
    class Sub(np.ndarray):                # its .base is a, not the Buffer: the C walk
        pass
    a_sub = a.view(Sub)
    put(a, src, nxt)                      # compiled and run while a is live
    put(a_sub, src, nxt)
    nvshmem.barrier_all()
    nvshmem.free_array(a)
    b = nvshmem.array((8,), dtype="int64")
    check(b.ctypes.data == a.ctypes.data, "b did not get a's address")
    b[:] = -1
    gathered = nvshmem.array((8 * n,), dtype="int64")
    nvshmem.barrier_all()
    freed = ["refers to symmetric memory that was freed", "may now belong to a newer allocation"]
    invalid([P + "put: dst (address 0x"] + freed, put, a, src, nxt)
    invalid([P + "put: dst"] + freed, put_nogil, a, src, nxt)
    invalid([P + "put: dst"] + freed, put, a_view, src[:6], nxt)
    invalid([P + "put: dst"] + freed, put_slice, a, src, nxt)
    invalid([P + "put: dst"] + freed, put, a_sub, src, nxt)
    invalid([P + "put: src"] + freed, put, b, a, nxt)
    invalid([P + "get: src"] + freed, get, np.zeros(8, dtype=np.int64), a, nxt)
    invalid([P + "get: dst"] + freed, get, a, b, nxt)
    invalid([P + "p: dst"] + freed, p, a, 9, nxt)
    invalid([P + "g: src"] + freed, g, a, nxt)
    invalid([P + "atomic_fetch_add: dest"] + freed, fetch_add, a, 1, nxt)
    invalid([P + "put_signal: dst"] + freed, put_signal, a, src, b.view(np.uint64), nxt)
    invalid([P + "get_peer_array: array"] + freed, peer_store, a, nxt)
    invalid([P + "fcollect: src"] + freed, fcollect, gathered, a)
    nvshmem.barrier_all()
    check(list(b) == [-1] * 8, f"a refused call on the freed a wrote into b: {b}")
    nvshmem.barrier_all()                 # every PE has looked at its b before the put
    put(b, src, nxt)                      # b itself works
    nvshmem.barrier_all()
    check(list(b) == list(src), f"put into b: {b}")

    # views that left NumPy's chain of bases (as_strided, np.asarray(obj),
    # np.from_dlpack): traced to their Buffer as the host calls trace them
    # (test_stale_views.py), and refused once it is freed; one that leads to
    # no Buffer (an exporter of a bare address) is refused
    check_escapes("njit", put, get, p, g)
    expect_raises(nvshmem.NvshmemInvalid, [P + "p: dst (address 0x"] + UNTRACED,
                  p, np.asarray(RawExporter(b)), 7, nxt)

    # finalize retires every allocation: an array kept across a new init is refused
    kept = nvshmem.array((8,), dtype="int64")
    nvshmem.free_array(b)
    nvshmem.free_array(gathered)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # kept is a leak finalize frees
        nvshmem.finalize()
    nvshmem.init()
    again = nvshmem.array((8,), dtype="int64")
    invalid([P + "p: dst"] + freed, p, kept, 1, me)

    # read-only arrays: refused where the call writes them, when it compiles
    ro = again.view()
    ro.flags.writeable = False
    sig = nvshmem.array((1,), dtype="uint64")
    sig_ro = sig.view()
    sig_ro.flags.writeable = False
    read_only = ["is read-only, and the call writes it"]
    for fn, args, call in [(p, (ro, 1, me), "p: dst"), (put, (ro, src, me), "put: dst"),
                           (fetch_add, (ro, 1, me), "atomic_fetch_add: dest"),
                           (get, (np.frombuffer(src.tobytes(), dtype=np.int64), again, me),
                            "get: dst"),
                           (put_signal, (again, src, sig_ro, me), "put_signal: sig_addr"),
                           (signal_op, (sig_ro, me), "signal_op: sig_addr")]:
        expect_raises(TypingError, [call + " (readonly array("] + read_only, fn, *args)
    again[:] = 4
    put(again, np.frombuffer(src.tobytes(), dtype=np.int64), me)  # a read-only src is read
    check(fetch(ro, me) == 0 and g(ro, me) == 0, "reads of a read-only array")
    for x in (again, sig):
        nvshmem.free_array(x)
    ok()
    nvshmem.finalize()
"""
)


def test_freed_and_read_only_arrays_are_refused(run_pes):
    assert_all_ok(run_pes(2, FREED_AND_READ_ONLY, timeout=180, env=UNOPTIMIZED), 2)


# SYMMEM_TIMEOUT ends an njit wait with the C engine's message; the runtime
# works on afterwards.
TIMEOUT = (
    DEVICE
    + """
    @numba.njit
    def wait(sig, ivar):
        dev.signal_wait(sig, CMP.CMP_EQ, 1)

    @numba.njit
    def wait_ivar(ivar):
        dev.wait_until(ivar, CMP.CMP_GT, 0)

    nvshmem.init()
    sig = nvshmem.array((1,), dtype="uint64")
    ivar = nvshmem.array((1,), dtype="int32")
    sig[:] = 0
    ivar[:] = 0
    msg = expect_raises(nvshmem.NvshmemError, ["[pe 0] signal_wait:", "timed out after"],
                        wait, sig, ivar)
    expect_raises(nvshmem.NvshmemError, ["[pe 0] wait_until:", "timed out after",
                                         "waiting for value > 0"], wait_ivar, ivar)
    nvshmem.p(ivar, 5, 0)
    wait_ivar(ivar)
    ok()
    nvshmem.free_array(sig)
    nvshmem.free_array(ivar)
    nvshmem.finalize()
"""
)


def test_timeout_ends_njit_wait(run_pes):
    result = run_pes(1, TIMEOUT, env={"SYMMEM_TIMEOUT": "0.3"}, timeout=60)
    assert_all_ok(result, 1)


# A PE dies while the others wait in njit signal_wait: the wait ends with an
# NvshmemError naming the dead PE, and the state block's abort word is set.
DEAD_PEER = (
    DEVICE
    + """
    import ctypes
    from symmem import _symmem

    @numba.njit
    def wait(sig):
        dev.signal_wait(sig, CMP.CMP_EQ, 1)

    nvshmem.init()
    me = nvshmem.my_pe()
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    wait_compiled = wait.compile("(Array(uint64, 1, 'C'),)")
    nvshmem.barrier_all()
    if me == 2:
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        wait(sig)
    except nvshmem.NvshmemError as error:
        at = _symmem.device_state() + _symmem.DEVICE_STATE_LAYOUT["abort_flag"]
        print(f"PE {me} caught: {error}", flush=True)
        print(f"PE {me} abort word: {ctypes.c_uint32.from_address(at).value}", flush=True)
        time.sleep(1.0)
        sys.exit(0)
    print(f"PE {me} was not told that PE 2 died", flush=True)
    sys.exit(3)
"""
)


def test_dead_peer_ends_njit_wait(run_pes):
    result = run_pes(3, DEAD_PEER, timeout=60)
    assert result.rc == 137, str(result)
    for pe in (0, 1):
        lines = result.lines(pe)
        caught = [line for line in lines if line.startswith(f"PE {pe} caught: ")]
        assert len(caught) == 1, str(result)
        assert f"[pe {pe}] signal_wait: PE 2 (pid " in caught[0], caught[0]
        assert "killed by signal 9 (SIGKILL)" in caught[0], caught[0]
        assert f"PE {pe} abort word: 1" in lines, str(result)


def test_the_gpu_target_loads_where_numba_cuda_is_and_says_why_where_not():
    """numba-cuda 0.30 refers to np.row_stack, gone in NumPy 2.5: the package
    puts it back (as np.vstack) just before it loads numba.cuda."""
    import importlib.util
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "if hasattr(np, 'row_stack'): del np.row_stack  # as on NumPy 2.5\n"
        "import symmem.device.numba as dev\n"
        "print('UNAVAILABLE', dev.GPU_UNAVAILABLE)\n"
        "print('ROW_STACK', getattr(np, 'row_stack', None) is np.vstack)\n"
        "if dev.GPU_UNAVAILABLE is None:\n"
        "    from numba import cuda\n"
        "    print('DECLARED', sorted(dev._cuda.DEVICE))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    if importlib.util.find_spec("numba_cuda") is None:
        assert "UNAVAILABLE numba-cuda is not installed" in result.stdout, result.stdout
        assert "ROW_STACK False" in result.stdout  # nothing touched NumPy
    else:
        assert "UNAVAILABLE None" in result.stdout and "ROW_STACK True" in result.stdout
        for name in ("'put_block'", "'signal_wait'", "'atomic64'", "'barrier_all_warp'"):
            assert name in result.stdout, result.stdout


# Team barriers and collectives from njit code (NVSHMEM4Py's device argument
# orders), on TEAM_WORLD and on a split team of the even PEs, each checked
# against NumPy; the _block forms run the same code; a mismatch and a bad op
# raise the host calls' exceptions.
COLLECTIVES = (
    DEVICE
    + """
    from numba.core.errors import TypingError

    @numba.njit
    def all_of_them(team, out, src, gathered, bcast, scattered, a2a_dst, a2a_src, root):
        dev.barrier(team)
        dev.reduce(team, out, src, "sum")
        dev.sync_block(team)
        dev.fcollect(team, gathered, src)
        dev.broadcast_block(team, bcast, src, root)
        dev.reducescatter(team, scattered, gathered, "max")
        dev.alltoall_warp(team, a2a_dst, a2a_src)
        dev.barrier_block(team)
        return dev.team_my_pe(team), dev.team_n_pes(team)

    @numba.njit
    def reduce_count(team, out, src, count):
        dev.reduce(team, out[:count], src[:count], "sum")

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    evens = nvshmem.team_split_strided(nvshmem.Teams.TEAM_WORLD, 0, 2, (n + 1) // 2)
    for team, members in ((nvshmem.Teams.TEAM_WORLD, list(range(n))),
                          (int(evens) if evens is not None else -1, list(range(0, n, 2)))):
        k, size = len(members), 5  # arrays are world-collective: every PE makes them
        def mine(pe):
            return (np.arange(size) * 3 + pe * 10 + 1).astype("int64")
        src = nvshmem.array((size,), dtype="int64")
        src[:] = mine(me)
        out, bcast = (nvshmem.array((size,), dtype="int64") for _ in range(2))
        gathered = nvshmem.array((k * size,), dtype="int64")
        scattered = nvshmem.array((size,), dtype="int64")
        a2a_src, a2a_dst = (nvshmem.array((k * 2,), dtype="int64") for _ in range(2))
        a2a_src[:] = np.arange(k * 2) + 100 * me
        for a in (out, bcast, gathered, scattered, a2a_dst):
            a[:] = -1
        root = k - 1
        nvshmem.barrier_all()
        if me not in members:
            for a in (a2a_dst, a2a_src, scattered, gathered, bcast, out, src):
                nvshmem.free_array(a)
            continue
        got = all_of_them(team, out, src, gathered, bcast, scattered, a2a_dst, a2a_src, root)
        check(got == (members.index(me), k), f"team_my_pe, team_n_pes: {got}")
        check_equal(out, sum(mine(pe) for pe in members), "reduce sum")
        check_equal(gathered, np.concatenate([mine(pe) for pe in members]), "fcollect")
        check_equal(bcast, mine(members[root]), "broadcast")
        whole = np.max([np.concatenate([mine(q) for q in members]) for _ in members], axis=0)
        i = members.index(me)
        check_equal(scattered, whole[i * size:(i + 1) * size], "reducescatter max")
        want = np.concatenate([np.arange(k * 2)[2 * i:2 * i + 2] + 100 * pe for pe in members])
        check_equal(a2a_dst, want, "alltoall")
        for a in (a2a_dst, a2a_src, scattered, gathered, bcast, out, src):
            nvshmem.free_array(a)
    nvshmem.barrier_all()
    # the engine's one order through the device call (docs/reproducibility.md,
    # test_reproducible.py): float32 values whose sum's bits depend on the
    # order, summed member 0 first
    def spread(pe):
        r = np.random.default_rng([49, pe]).random((2, 4099))
        x = np.ldexp(1 + r[0], (r[1] * 100 - 50).astype(np.int64)) * (-1) ** pe
        return x.astype(np.float32)
    out, src = (nvshmem.array((4099,), dtype="float32") for _ in range(2))
    src[:] = spread(me)
    reduce_count(nvshmem.Teams.TEAM_WORLD, out, src, 4099)
    want = spread(0)
    for pe in range(1, n):
        want = want + spread(pe)
    check(np.array_equal(np.asarray(out).view(np.uint32), want.view(np.uint32)),
          "njit reduce sum: not in the members' order, bit for bit")
    nvshmem.free_array(out)
    nvshmem.free_array(src)
    if n > 1:
        out = nvshmem.array((8,), dtype="float32")
        src = nvshmem.array((8,), dtype="float32")
        try:
            reduce_count(nvshmem.Teams.TEAM_WORLD, out, src, 8 if me == 0 else 4)
            check(False, "a reduce with different counts passed")
        except nvshmem.NvshmemInvalid as e:
            check("reduce" in str(e) and "8 elements" in str(e) and "4 elements" in str(e),
                  f"mismatch message: {e}")
    try:
        numba.njit(lambda o, s: dev.reduce(nvshmem.Teams.TEAM_WORLD, o, s, "xor"))(
            np.zeros(2, "float32"), np.zeros(2, "float32"))
        check(False, "xor on floats compiled")
    except TypingError as e:
        check("op 'xor' takes integers" in str(e), str(e))
    ok()
    os._exit(0)  # after a mismatch the PEs are out of step: no finalize
"""
)


# At 1 PE and at 3, where the even PEs' team is 2 of 3 (at 4 it would be 2
# of 4: the same calls; test_collectives.py runs the engine at 1 to 4 PEs).
@pytest.mark.parametrize("n", [1, 3])
def test_team_collectives(run_pes, n):
    assert_all_ok(run_pes(n, COLLECTIVES, timeout=240), n)
