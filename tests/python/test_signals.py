"""put_signal/put_signal_nbi/signal_op/signal_wait/signal_fetch and
wait_until/test, at 1..4 PEs."""

import pytest

from conftest import assert_all_ok

N_PES = (1, 2, 3, 4)

PUT_SIGNAL = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    SET, ADD = nvshmem.SignalOp.SIGNAL_SET, nvshmem.SignalOp.SIGNAL_ADD
    C = nvshmem.ComparisonType

    sig = nvshmem.array((1,), dtype="uint64")
    sig_buf, nbytes, dtname = nvshmem.array_get_buffer(sig)
    check((nbytes, dtname) == (8, "uint64"), f"array_get_buffer(sig) = {nbytes}, {dtname}")
    sig[:] = 0
    round_ = 0
    for dt in DTYPES:
        src = nvshmem.array((6,), dtype=dt)
        dst = nvshmem.array((6,), dtype=dt)
        src[:] = xp().asarray(values(me, dt, 6))
        dst[:] = 0
        nvshmem.barrier_all()
        # put_signal with SIGNAL_SET: a new value each round; the data must be
        # there once the signal is seen. Alternate the two forms of the signal:
        # the uint64 array and its Buffer, and the two put_signal flavours.
        round_ += 1
        target = sig if round_ % 2 else sig_buf
        if round_ % 3 == 0:
            nvshmem.put_signal_nbi(dst, src, target, round_, SET, nxt)
            nvshmem.quiet()
        else:
            nvshmem.put_signal(dst, src, target, round_, SET, nxt, stream=None)
        nvshmem.signal_wait(sig, round_, C.CMP_EQ)           # positional comparison
        check_equal(dst, values(prv, dt, 6), f"{dt}: data after put_signal's signal")
        check(nvshmem.signal_fetch(sig) == round_ and sig[0] == round_, f"{dt}: signal value")
        nvshmem.barrier_all()
        nvshmem.free_array(src)
        nvshmem.free_array(dst)

    # put_signal_nbi with SIGNAL_ADD, keyword arguments, slices as dst/src.
    src = nvshmem.array((8,), dtype="float32")
    dst = nvshmem.array((8,), dtype="float32")
    src[:] = xp().asarray(np.arange(8) + 10 * me)
    dst[:] = -1
    sig[:] = 0
    nvshmem.barrier_all()
    nvshmem.put_signal_nbi(dst=dst[4:8], src=src[0:4], signal_var=sig, signal_val=5,
                           signal_op=ADD, remote_pe=nxt, stream=None)
    nvshmem.quiet()
    nvshmem.signal_wait(sig, 5, cmp=C.CMP_EQ)                # keyword comparison
    check_equal(dst, np.r_[np.full(4, -1.0), np.arange(4) + 10 * prv].astype("float32"),
                "put_signal_nbi into a slice")
    nvshmem.barrier_all()

    # A signal array of 4 elements: only its first element is the signal.
    sig4 = nvshmem.array((4,), dtype="uint64")
    sig4[:] = 7
    nvshmem.barrier_all()
    nvshmem.signal_op(sig4, 3, ADD, nxt)
    nvshmem.signal_wait(sig4, 10, C.CMP_GE)
    nvshmem.barrier_all()
    check_equal(sig4, np.array([10, 7, 7, 7], dtype="uint64"), "signal on a 4-element array")
    check(nvshmem.signal_fetch(sig4) == 10, "signal_fetch of a 4-element array")
    nvshmem.barrier_all()

    # A signal element inside a larger array: a slice as the signal.
    sig4[:] = 0
    nvshmem.barrier_all()
    nvshmem.signal_op(sig4[2:3], me + 1, SET, nxt)
    nvshmem.signal_wait(sig4[2:3], prv + 1, C.CMP_EQ)
    nvshmem.barrier_all()
    check_equal(sig4, np.array([0, 0, prv + 1, 0], dtype="uint64"), "slice as signal")
    nvshmem.barrier_all()

    for a in (src, dst, sig, sig4):
        nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", N_PES)
def test_put_signal(run_pes, n):
    assert_all_ok(run_pes(n, PUT_SIGNAL), n)


# signal_op from all PEs at once to PE 0: SIGNAL_ADD sums exactly, SIGNAL_SET
# leaves one of the values written.
SIGNAL_OP_ALL_TO_ONE = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    SET, ADD = nvshmem.SignalOp.SIGNAL_SET, nvshmem.SignalOp.SIGNAL_ADD
    C = nvshmem.ComparisonType
    K = 500

    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    nvshmem.barrier_all()
    for i in range(K):
        nvshmem.signal_op(sig, me + 1, ADD, 0)
    total = K * n * (n + 1) // 2
    if me == 0:
        nvshmem.signal_wait(sig, total, C.CMP_GE)
        got = nvshmem.signal_fetch(sig)
        check(got == total, f"SIGNAL_ADD from every PE: {got} != {total}")
    nvshmem.barrier_all()

    # Large values wrap modulo 2**64.
    sig[:] = 0
    nvshmem.barrier_all()
    nvshmem.signal_op(sig, 2**63 + me, ADD, 0)
    nvshmem.barrier_all()
    if me == 0:
        expect = (n * 2**63 + n * (n - 1) // 2) % 2**64
        check(nvshmem.signal_fetch(sig) == expect, f"SIGNAL_ADD wraps: {sig[0]} != {expect}")
    nvshmem.barrier_all()

    sig[:] = 0
    nvshmem.barrier_all()
    for i in range(K):
        nvshmem.signal_op(signal_var=sig, signal_val=100 + me, signal_op=SET, remote_pe=0,
                          stream=None)
    if me == 0:
        nvshmem.signal_wait(sig, 0, C.CMP_NE)
    nvshmem.barrier_all()
    if me == 0:
        got = nvshmem.signal_fetch(sig)
        check(got in range(100, 100 + n), f"SIGNAL_SET from every PE left {got}")
    # And SIGNAL_SET of 2**64 - 1 is stored as is.
    nvshmem.barrier_all()
    if me == n - 1:
        nvshmem.signal_op(sig, 2**64 - 1, SET, 0)
    nvshmem.barrier_all()
    if me == 0:
        check(nvshmem.signal_fetch(sig) == 2**64 - 1, "SIGNAL_SET of 2**64-1")
    nvshmem.barrier_all()
    nvshmem.free_array(sig)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", N_PES)
def test_signal_op_all_to_one(run_pes, n):
    assert_all_ok(run_pes(n, SIGNAL_OP_ALL_TO_ONE), n)


# Every comparison of signal_wait (both forms) returns at once where it holds;
# test() gives the truth table for each integer dtype.
COMPARISONS = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    C = nvshmem.ComparisonType
    truth = {C.CMP_EQ: lambda a, b: a == b, C.CMP_NE: lambda a, b: a != b,
             C.CMP_GT: lambda a, b: a > b, C.CMP_LE: lambda a, b: a <= b,
             C.CMP_LT: lambda a, b: a < b, C.CMP_GE: lambda a, b: a >= b}

    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 5
    for cmp, value in [(C.CMP_EQ, 5), (C.CMP_NE, 4), (C.CMP_GT, 4), (C.CMP_LE, 5),
                       (C.CMP_LE, 6), (C.CMP_LT, 6), (C.CMP_GE, 5), (C.CMP_GE, 0)]:
        nvshmem.signal_wait(sig, value, cmp)
        nvshmem.signal_wait(sig, value, cmp=cmp)
        nvshmem.signal_wait(sig, value, int(cmp), None)
    check(nvshmem.signal_fetch(sig) == 5, "signal_fetch")
    check(isinstance(nvshmem.signal_fetch(sig), int), "signal_fetch returns an int")
    sig[:] = np.uint64(2**64 - 1)
    nvshmem.signal_wait(sig, 2**63, C.CMP_GT)   # unsigned comparison
    check(nvshmem.signal_fetch(sig) == 2**64 - 1, "signal_fetch of 2**64-1")

    for dt in INT_DTYPES:
        ivar = nvshmem.array((3,), dtype=dt)
        info = np.iinfo(dt)
        for stored in (0, 1, int(info.max), int(info.min)):
            ivar[:] = 0
            ivar[1] = np.dtype(dt).type(stored)
            for value in (stored - 1, stored, stored + 1):
                if not info.min <= value <= info.max:
                    continue
                for cmp, f in truth.items():
                    got = nvshmem.test(ivar[1:2], cmp, value)
                    check(got is f(stored, value),
                          f"{dt}: test({stored} {cmp.name} {value}) gave {got!r}")
                    if f(stored, value):
                        nvshmem.wait_until(ivar[1:2], cmp, value)   # returns at once
        nvshmem.free_array(ivar)
    nvshmem.barrier_all()
    nvshmem.free_array(sig)
    ok()
    nvshmem.finalize()
"""


def test_comparisons(run_pes):
    assert_all_ok(run_pes(2, COMPARISONS), 2)


# wait_until/test on a flag another PE sets with p; signal_wait on a signal
# another PE sets later (the waiter really waits).
WAITING = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    C = nvshmem.ComparisonType
    SET = nvshmem.SignalOp.SIGNAL_SET

    for dt in ("int32", "int64", "uint64", "uint16"):
        flag = nvshmem.array((1,), dtype=dt)
        data = nvshmem.array((16,), dtype="int64")
        flag[:] = 0
        check(nvshmem.test(flag, C.CMP_EQ, 0) is True, f"{dt}: test before the flag")
        check(nvshmem.test(flag, C.CMP_GE, 3) is False, f"{dt}: test before the flag")
        nvshmem.barrier_all()
        if me == 0:
            time.sleep(0.2)   # the others wait meanwhile
        nvshmem.put(data, np.arange(16, dtype="int64") * (me + 1), nxt)
        nvshmem.fence()
        nvshmem.p(flag, 3, nxt)
        nvshmem.wait_until(flag, C.CMP_GE, 3)
        check(nvshmem.test(flag, C.CMP_EQ, 3) is True, f"{dt}: test after the flag")
        check(nvshmem.test(flag, C.CMP_LT, 3) is False, f"{dt}: test CMP_LT after the flag")
        check_equal(data, np.arange(16, dtype="int64") * (prv + 1), f"{dt}: data before flag")
        nvshmem.barrier_all()
        nvshmem.free_array(flag)
        nvshmem.free_array(data)

    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    nvshmem.barrier_all()
    if me == 0:
        time.sleep(0.2)
    nvshmem.signal_op(sig, 42 + me, SET, nxt)
    nvshmem.signal_wait(sig, 0, C.CMP_NE)
    check(nvshmem.signal_fetch(sig) == 42 + prv, "signal set by the previous PE")
    nvshmem.barrier_all()
    nvshmem.free_array(sig)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", N_PES)
def test_waiting(run_pes, n):
    assert_all_ok(run_pes(n, WAITING), n)
