"""symmem.device.numba in @numba.njit functions on the cpu backend: every PE
runs njit code that moves data, signals, waits and does atomics itself, and
checks what it received (and the elements around it). Each program compiles
its njit functions once per PE process; the programs are few and grouped to
keep numba's compile time (seconds per PE) small."""
import pytest

from conftest import assert_all_ok, cpu_only

pytest.importorskip("numba")
pytestmark = cpu_only("@numba.njit device code runs on the cpu backend's host heap")

DEVICE = """
    import numba
    import symmem.core.device.numba as dev   # the NVSHMEM4Py import path works
    from symmem import ComparisonType as CMP, SignalOp
"""

# put/get (blocking, and nbi + quiet), p/g: several dtypes, sizes with odd
# lengths, into a slice one element in (odd byte offsets), with a guard
# element either side that must not change.
RMA = DEVICE + """
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


# Every dtype at 2 PEs; at 1 and 4 PEs two (each dtype is a compilation per PE).
@pytest.mark.parametrize("n, dtypes", [
    (1, "int8,float64"), (2, "int8,uint16,int32,int64,float32,float64"), (4, "uint16,float32")])
def test_put_get_p_g(run_pes, n, dtypes):
    assert_all_ok(run_pes(n, RMA, timeout=240, args=[dtypes]), n)


# PE 0 and PE 1 bounce a payload with put_signal (and put_signal_nbi) for a
# few thousand rounds; each side checks the whole payload of every round.
PING_PONG = DEVICE + """
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


def test_put_signal_ping_pong(run_pes):
    assert_all_ok(run_pes(2, PING_PONG, timeout=120), 2)


# Message passing: every writer stores many elements one by one (p) into its
# part of PE 0's buffer, then adds 1 to PE 0's signal; PE 0 waits for all
# writers' signals and checks every element, then lets the writers go on. A
# missing release (stores sinking below the signal) or acquire (loads hoisted
# above the wait) shows up as a stale element.
LITMUS = DEVICE + """
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


@pytest.mark.parametrize("n", [2, 3])
def test_message_passing_litmus(run_pes, n):
    assert_all_ok(run_pes(n, LITMUS, timeout=180), n)
