"""A careless user's input (issue 11, items 1-4): every mistake raises the
documented exception (NvshmemInvalid, a ValueError) naming the call and the
argument, once prefixed with the PE, and leaves every PE's memory as it was.

1. An array over a freed allocation is refused even once its address belongs
   to a newer allocation (the generation its Buffer recorded is retired).
2. Only numbers in native byte order move: object, structured, void, string
   and datetime data and swapped byte orders are refused for every argument,
   read-only destinations too, and array() refuses such dtypes before it
   allocates anything.
3. The atomics' offset= is checked exactly.
4. No exception outside the contract: malformed interfaces, __dlpack__
   arguments, the atomics' missing arguments, UniqueID.from_bytes, the seeds'
   put form with a NumPy integer, test()'s comparison value, the prefix.
"""

import pytest

from conftest import assert_all_ok, cpu_only, not_on_gpu, not_through_rma

COMMON = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt = (me + 1) % n
    INV = nvshmem.NvshmemInvalid
    C, S = nvshmem.ComparisonType, nvshmem.SignalOp
    W = nvshmem.Teams.TEAM_WORLD
    P = f"[pe {me}]"

    def refused(call, arg, fn, *args, **kwargs):
        \"\"\"fn must raise NvshmemInvalid (a ValueError) naming the PE once, the call and arg.\"\"\"
        msg = expect_raises(INV, [P, f"{call}: {arg}"], fn, *args, **kwargs)
        check(msg.count("[pe ") == 1, f"{call}: one [pe N] prefix in {msg!r}")
        check(isinstance(INV(msg), ValueError), "NvshmemInvalid is a ValueError")
        return msg
"""

# ---------------------------------------------------------------- item 1

FREED = (
    COMMON
    + """
    FREED = "refers to symmetric memory that was freed"
    a = nvshmem.array((8,), dtype="int64")
    sig = nvshmem.array((1,), dtype="uint64")
    abuf = nvshmem.buffer(64)
    old_a, old_sig, old_buf = address(a), address(sig), abuf.handle
    view = a[2:]                       # a view of a freed array is refused as well
    peer = nvshmem.get_peer_array(a, nxt)
    dl = np.from_dlpack(abuf).view("int64") if xp() is np else a  # over a DLPack capsule
    nvshmem.free_array(a)
    nvshmem.free_array(sig)
    nvshmem.free(abuf)
    # The next allocations of the same sizes get the same addresses.
    b = nvshmem.array((8,), dtype="int64")
    bsig = nvshmem.array((1,), dtype="uint64")
    bbuf = nvshmem.buffer(64)
    if xp() is np:
        check(address(b) == old_a and address(bsig) == old_sig and bbuf.handle == old_buf,
              "the allocator handed the freed addresses out again")
    b[:] = xp().asarray(values(me, "int64"))
    bsig[:] = 7
    buffer_view(bbuf)[:] = 9
    nvshmem.barrier_all()

    src = np.arange(8, dtype="int64")
    out = np.zeros(8, dtype="int64")
    one = np.ones(8, dtype="int64")
    for call, arg, fn, args in [
            ("put", "dst", nvshmem.put, (a, src, nxt)),
            ("put", "dst", nvshmem.put, (view, src[:6], nxt)),
            ("put", "src", nvshmem.put, (b, a, nxt)),     # a freed array as the private side
            ("put", "dst", nvshmem.put, (a, src, 4, nxt)),
            ("get", "src", nvshmem.get, (out, a, nxt)),
            ("get", "dst", nvshmem.get, (a, b, nxt)),
            ("put_nbi", "dst", nvshmem.put_nbi, (a, src, nxt)),
            ("get_nbi", "src", nvshmem.get_nbi, (out, a, nxt)),
            ("put", "dst", nvshmem.put, (abuf, src, nxt)),  # the Buffer itself
            ("put", "dst", nvshmem.put, (peer, src, nxt)),  # a peer view of it
            ("put", "dst", nvshmem.put, (dl, src, nxt)),
            ("p", "dst", nvshmem.p, (a, 5, nxt)),
            ("g", "src", nvshmem.g, (a, nxt)),
            ("test", "ivar", nvshmem.test, (a, C.CMP_EQ, 0)),
            ("wait_until", "ivar", nvshmem.wait_until, (a, C.CMP_EQ, 0)),
            ("signal_fetch", "signal_var", nvshmem.signal_fetch, (sig,)),
            ("signal_wait", "signal_var", nvshmem.signal_wait, (sig, 0, C.CMP_EQ)),
            ("signal_op", "signal_var", nvshmem.signal_op, (sig, 1, S.SIGNAL_SET, nxt)),
            ("put_signal", "dst", nvshmem.put_signal, (a, src, bsig, 1, S.SIGNAL_SET, nxt)),
            ("put_signal", "signal_var", nvshmem.put_signal, (b, src, sig, 1, S.SIGNAL_SET, nxt)),
            ("put_signal_nbi", "dst", nvshmem.put_signal_nbi,
             (a, src, bsig, 1, S.SIGNAL_ADD, nxt)),
            ("reduce", "dst", nvshmem.reduce, (W, a, one, "sum")),
            ("reduce", "src", nvshmem.reduce, (W, b, a, "sum")),
            ("reducescatter", "dst", nvshmem.reducescatter, (W, a, np.ones(8 * n, "int64"), "sum")),
            ("broadcast", "dst", nvshmem.broadcast, (W, a, one, 0)),
            ("alltoall", "src", nvshmem.alltoall, (W, b[:n], a[:n])),
            ("fcollect", "dst", nvshmem.fcollect, (W, a, one[:1])),
            ("reduce", "dst", nvshmem.collective_on_buffer,
             ("reduce", W, abuf, bbuf, "int64", "sum")),
            ("get_peer_buffer", "", nvshmem.get_peer_buffer, (abuf, nxt)),
            ("array_get_buffer", "array", nvshmem.array_get_buffer, (a,)),
            ("free_array", "array", nvshmem.free_array, (a,)),
            ]:
        msg = refused(call, arg, fn, *args)
        check(call in ("get_peer_buffer", "array_get_buffer", "free_array") or FREED in msg,
              f"{call}: {msg!r}")
    for name, operands in nvshmem._symmem.ATOMIC_OPS:
        msg = refused(name, "target", getattr(nvshmem, name), a, *[1] * len(operands))
        check(FREED in msg, f"{name}: {msg!r}")

    # Nothing reached the new allocations, on any PE.
    nvshmem.barrier_all()
    check_equal(host(b), values(me, "int64"), "b after the refused calls")
    check(int(host(bsig)[0]) == 7, f"bsig after the refused calls: {host(bsig)}")
    check_equal(host(buffer_view(bbuf)), np.full(64, 9, dtype="uint8"), "bbuf")
    nvshmem.free_array(b)
    nvshmem.free_array(bsig)
    nvshmem.free(bbuf)
    ok()
    nvshmem.finalize()
"""
)


@not_through_rma("it reads the peers' arrays through get_peer_array")
@pytest.mark.parametrize("n", (2, 3))
def test_freed_arrays_are_refused_after_reuse(run_pes, n):
    assert_all_ok(run_pes(n, FREED), n)


FINALIZED = (
    COMMON
    + """
    FREED = "refers to symmetric memory that was freed (free, free_array, free_tensor or finalize"
    kept = nvshmem._symmem.malloc(64)       # not tracked: finalize does not free it
    arr = nvshmem.array((8,), dtype="int64")
    # size 0 has no address, but its Buffer ends with its runtime all the same
    empty, nothing = nvshmem.array((0,), dtype="int32"), nvshmem.buffer(0)
    kept0 = nvshmem._symmem.malloc(0)
    bufs = {"empty": nvshmem.array_get_buffer(empty)[0], "nothing": nothing, "kept0": kept0}
    nvshmem.finalize()
    nvshmem.init()
    fresh = nvshmem.array((8,), dtype="int64")
    fresh[:] = 3
    nvshmem.barrier_all()
    refused("put", "dst", nvshmem.put, kept, np.zeros(64, dtype="uint8"), nxt)
    refused("put", "dst", nvshmem.put, arr, np.zeros(8, dtype="int64"), nxt)
    refused("atomic_add", "target", nvshmem.atomic_add, arr, 1, nxt)
    check(kept.freed and arr.base.freed, "finalize retired what it ended")
    for what, obj in (("empty", empty), ("nothing", nothing), ("kept0", kept0)):
        buf = bufs[what]
        check(buf.freed, f"{what}: finalize retired it")
        refused("put", "dst " + FREED, nvshmem.put, obj, np.zeros(0, dtype="uint8"), nxt)
        refused("get", "src " + FREED, nvshmem.get, np.zeros(0, dtype="uint8"), obj, nxt)
        refused("get_peer_buffer", "the Buffer was freed", nvshmem.get_peer_buffer, buf, nxt)
        refused("Buffer", "the memory at 0x0 was freed", memoryview, buf)
    refused("reduce", "dst " + FREED, nvshmem.reduce, W, empty, empty, "sum")
    refused("free_array", "array is on a Buffer that was already freed", nvshmem.free_array,
            empty)
    # the C module's free refuses what finalize ended, whatever its size (an
    # address may belong to a newer allocation by then, which it would free)
    for buf in (nothing, kept0, kept):
        refused("free", f"Buffer at {hex(buf.handle)} ({buf.size} bytes) was already freed",
                nvshmem._symmem.free, buf)
    nvshmem.barrier_all()
    check_equal(host(fresh), np.full(8, 3, dtype="int64"), "fresh after the refused calls")
    nvshmem.free_array(fresh)
    ok()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arr: finalize reports the leak
        nvshmem.finalize()
"""
)


@not_on_gpu("reads NumPy arrays' .base and re-initialises the cpu backend")
def test_memory_kept_across_finalize_is_refused(run_pes):
    assert_all_ok(run_pes(2, FINALIZED), 2)


TORCH = (
    COMMON
    + """
    import torch
    t = nvshmem.tensor((8,), dtype=torch.int64)
    view = t[2:]
    nvshmem.free_tensor(t)
    u = nvshmem.tensor((8,), dtype=torch.int64)
    check(u.data_ptr() == t.data_ptr(), "the allocator handed t's address out again")
    u[:] = torch.arange(8) + 100 * me
    nvshmem.barrier_all()
    refused("put", "dst", nvshmem.put, t, torch.zeros(8, dtype=torch.int64), nxt)
    refused("put", "dst", nvshmem.put, view, torch.zeros(6, dtype=torch.int64), nxt)
    refused("get", "src", nvshmem.get, torch.zeros(8, dtype=torch.int64), t, nxt)
    refused("atomic_add", "target", nvshmem.atomic_add, t, 1, nxt)
    refused("reduce", "dst", nvshmem.reduce, W, t, u, "sum")
    nvshmem.barrier_all()
    check(torch.equal(u, torch.arange(8) + 100 * me), f"u after the refused calls: {u}")
    nvshmem.free_tensor(u)
    ok()
    nvshmem.finalize()
"""
)


@not_on_gpu("torch CPU tensors over the cpu backend's heap")
def test_freed_tensors_are_refused_after_reuse(run_pes):
    pytest.importorskip("torch")
    assert_all_ok(run_pes(2, TORCH), 2)


# ---------------------------------------------------------------- item 2


FORMATS = (
    COMMON
    + """
    NOT_NUMBERS, SWAPPED = "which is not numbers", "not this machine's"
    READ_ONLY = "is read-only, and the call writes it"
    a = nvshmem.array((8,), dtype="int64")
    b = nvshmem.array((8,), dtype="int64")
    sig = nvshmem.array((1,), dtype="uint64")
    a[:] = 5
    b[:] = 6
    sig[:] = 0
    nvshmem.barrier_all()
    pair = np.dtype([("x", "i4"), ("y", "i4")])
    objects = np.array([object(), "s", 3, None, 1.5, [1], (2,), {}], dtype=object)
    kept = list(objects)
    swapped = np.arange(8, dtype=">i8")
    ro = np.zeros(8, dtype="int64")
    ro.flags.writeable = False
    sym_ro = a.view()                  # a read-only view of symmetric memory
    sym_ro.flags.writeable = False

    class Interface:                   # memory through __array_interface__ (the resolver)
        def __init__(self, arr):
            self.arr, self.__array_interface__ = arr, arr.__array_interface__

    bad = [
        # (call, arg, what the message says, fn, args): every role of every argument
        ("get", "dst", NOT_NUMBERS, nvshmem.get, (objects, a, nxt)),
        ("put", "src", NOT_NUMBERS, nvshmem.put, (a, objects, nxt)),
        ("put", "src", NOT_NUMBERS, nvshmem.put, (a, np.zeros(4, dtype=pair), nxt)),
        ("put", "src", NOT_NUMBERS, nvshmem.put, (a, np.zeros(8, dtype="V8"), nxt)),
        ("put", "src", NOT_NUMBERS, nvshmem.put, (a, np.zeros(8, dtype="S8"), nxt)),
        ("put", "src", NOT_NUMBERS, nvshmem.put, (a, np.zeros(8, dtype="M8[s]"), nxt)),
        ("put", "src", SWAPPED, nvshmem.put, (a, swapped, nxt)),
        ("put", "src", SWAPPED, nvshmem.put, (a, Interface(swapped), nxt)),
        ("put", "src", NOT_NUMBERS, nvshmem.put, (a, Interface(objects), nxt)),
        ("put", "dst", NOT_NUMBERS, nvshmem.put, (a.view(pair), np.zeros(4, dtype=pair), nxt)),
        ("put", "dst", NOT_NUMBERS, nvshmem.put, (a.view("V8"), b, nxt)),
        ("put", "dst", SWAPPED, nvshmem.put, (a.view(">i8"), b, nxt)),
        ("get", "src", SWAPPED, nvshmem.get, (np.zeros(8, "int64"), a.view(">i8"), nxt)),
        ("p", "dst", NOT_NUMBERS, nvshmem.p, (a.view(pair), 1, nxt)),
        ("g", "src", NOT_NUMBERS, nvshmem.g, (a.view("V8"), nxt)),
        ("atomic_add", "target", SWAPPED, nvshmem.atomic_add, (a.view(">i8"), 1, nxt)),
        ("atomic_fetch", "target", NOT_NUMBERS, nvshmem.atomic_fetch, (a.view(pair), nxt)),
        ("test", "ivar", SWAPPED, nvshmem.test, (a.view(">i8"), C.CMP_EQ, 0)),
        ("signal_op", "signal_var", NOT_NUMBERS, nvshmem.signal_op,
         (sig.view("V8"), 1, S.SIGNAL_SET, nxt)),
        ("reduce", "src", SWAPPED, nvshmem.reduce, (W, b, swapped, "sum")),
        ("reduce", "dst", SWAPPED, nvshmem.reduce, (W, a.view(">i8"), b, "sum")),
        ("broadcast", "src", NOT_NUMBERS, nvshmem.broadcast, (W, a, objects, 0)),
        ("fcollect", "dst", NOT_NUMBERS, nvshmem.fcollect, (W, a.view(pair), b[:1])),
        # read-only destinations: whatever the call writes
        ("get", "dst", READ_ONLY, nvshmem.get, (ro, a, nxt)),
        ("get_nbi", "dst", READ_ONLY, nvshmem.get_nbi, (ro, a, nxt)),
        ("put", "dst", READ_ONLY, nvshmem.put, (sym_ro, b, nxt)),
        ("p", "dst", READ_ONLY, nvshmem.p, (sym_ro, 1, nxt)),
        ("reduce", "dst", READ_ONLY, nvshmem.reduce, (W, sym_ro, b, "sum")),
        ("reducescatter", "dst", READ_ONLY, nvshmem.reducescatter,
         (W, sym_ro[:1], np.ones(n, "int64"), "sum")),
        ("broadcast", "dst", READ_ONLY, nvshmem.broadcast, (W, sym_ro, b, 0)),
        ("alltoall", "dst", READ_ONLY, nvshmem.alltoall, (W, sym_ro[:n], b[:n])),
        ("fcollect", "dst", READ_ONLY, nvshmem.fcollect, (W, sym_ro, b[:1])),
        ("atomic_add", "target", READ_ONLY, nvshmem.atomic_add, (sym_ro, 1, nxt)),
        ("atomic_fetch_inc", "target", READ_ONLY, nvshmem.atomic_fetch_inc, (sym_ro, me)),
        ("atomic_compare_swap", "target", READ_ONLY, nvshmem.atomic_compare_swap,
         (sym_ro, 5, 1, nxt)),
    ]
    for call, arg, words, fn, args in bad:
        msg = refused(call, arg, fn, *args)
        check(words in msg, f"{call}({arg}): {msg!r} lacks {words!r}")
    # What is only read may be read-only.
    nvshmem.put(b, ro, nxt)
    check(nvshmem.atomic_fetch(sym_ro, me) == 5, "atomic_fetch of a read-only view")
    check(nvshmem.test(sym_ro, C.CMP_EQ, 5), "test of a read-only view")
    nvshmem.barrier_all()
    check(all(x is y for x, y in zip(objects, kept)), "the object array's pointers are intact")
    check_equal(host(a), np.full(8, 5, dtype="int64"), "a after the refused calls")
    check_equal(host(b), np.zeros(8, dtype="int64"), "b: the put of a read-only src landed")
    check(int(host(sig)[0]) == 0, "sig after the refused calls")

    for arr in (a, b, sig):
        nvshmem.free_array(arr)
    ok()
    nvshmem.finalize()
"""
)


@not_on_gpu("NumPy's object, structured, void and read-only host arrays")
@pytest.mark.parametrize("n", (1, 2))
def test_formats_byte_order_and_read_only(run_pes, n):
    assert_all_ok(run_pes(n, FORMATS), n)


DTYPES_REFUSED = (
    COMMON
    + """
    # array() and bytearray() refuse a dtype that is not numbers before they
    # allocate (collectively): nothing is left live, finalize finds no leak.
    pair = np.dtype([("x", "i4"), ("y", "i4")])
    for dtype in (object, pair, "V8", "U3", "S4", "M8[s]", ">i4", ">f8"):
        for factory in ("array", "bytearray"):
            msg = refused(factory, "dtype=", getattr(nvshmem, factory), (4,), dtype=dtype)
            check("not numbers" in msg, msg)
    check(not nvshmem._memory._live, f"allocations left behind: {nvshmem._memory._live}")
    a = nvshmem.array((4,), dtype="int32")    # and the heap still works
    a[:] = me
    nvshmem.barrier_all()
    check(nvshmem.g(a, nxt) == nxt, "g after the refusals")
    nvshmem.barrier_all()
    nvshmem.free_array(a)
    ok()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nvshmem.finalize()
    check(not caught, f"finalize found leaks: {[str(w.message) for w in caught]}")
"""
)


@pytest.mark.parametrize("n", (1, 2))
def test_array_refuses_dtypes_before_allocating(run_pes, n):
    assert_all_ok(run_pes(n, DTYPES_REFUSED), n)


# ---------------------------------------------------------------- item 3


OFFSETS = (
    COMMON
    + """
    a = nvshmem.array((8,), dtype="int64")
    a[:] = xp().asarray(values(me, "int64"))
    nvshmem.barrier_all()
    view = a[2:6]                      # 4 elements of 8 bytes
    for offset in (-1, 4, 2**61 - 1, 2**61, 2**62, 2**63 - 1, 2**63, 2**64 + 2, -2**63,
                   -2**64, np.int64(-1), np.uint64(2**63), np.uint64(2**64 - 1)):
        for name, operands in nvshmem._symmem.ATOMIC_OPS:
            msg = refused(name, f"offset={int(offset)} is outside [0, 4)",
                          getattr(nvshmem, name), view, *[1] * len(operands), nxt,
                          offset=offset)
            check("4 elements of int64" in msg, msg)
    for offset in (1.0, "1", None, True):
        refused("atomic_add", "offset must be an int", nvshmem.atomic_add, view, 1, offset=offset)
    check(nvshmem.atomic_fetch_add(view, 10, nxt, offset=3) == values(nxt, "int64")[5],
          "offset=3, the last element, is taken")
    nvshmem.barrier_all()
    want = values(me, "int64")
    want[5] += 10
    check_equal(host(a), want, "only element 3 of the view changed")
    nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""
)


@pytest.mark.parametrize("n", (1, 2))
def test_atomic_offsets_are_checked_exactly(run_pes, n):
    assert_all_ok(run_pes(n, OFFSETS), n)


# ---------------------------------------------------------------- item 4


CONTRACT = (
    COMMON
    + """
    a = nvshmem.array((8,), dtype="int64")
    a[:] = 0
    buf = nvshmem.buffer(16)
    nvshmem.barrier_all()

    # A malformed __array_interface__ (the resolver): NvshmemInvalid saying what is wrong.
    class Interface:
        def __init__(self, interface):
            self.__array_interface__ = interface
    good = np.zeros(8, dtype="int64").__array_interface__
    for interface, words in [({"shape": (8,)}, "lacks 'data', 'typestr'"),
                             ({**good, "data": None}, "is not (address, readonly)"),
                             ({**good, "shape": "8"}, "is not a tuple of sizes"),
                             ({**good, "shape": (-1,)}, "is not a tuple of sizes"),
                             ({**good, "typestr": "<q9"}, "is not a dtype"),
                             ({**good, "strides": (8, 8)}, "do not match its shape"),
                             ("not a dict", "not a dict")]:
        msg = refused("put", "src", nvshmem.put, a, Interface(interface), nxt)
        check(words in msg, f"{interface!r}: {msg!r}")

    # Objects whose protocols fail: their error, as NvshmemInvalid naming call and argument.
    class Exporter:
        @property
        def __array_interface__(self):
            raise RuntimeError("no buffer today")
    class Stream:
        def __cuda_stream__(self):
            raise RuntimeError("no stream today")
    msg = refused("get", "dst", nvshmem.get, Exporter(), a, nxt)
    check("no buffer today" in msg, msg)
    refused("put", "stream", nvshmem.put, a, a, nxt, stream=Stream())
    refused("put", "remote_pe must be an int", nvshmem.put, a, a, np.array([0, 1]))
    refused("signal_op", "signal_val must be an int", nvshmem.signal_op,
            nvshmem.array_get_buffer(a)[0], np.array([1, 2]), S.SIGNAL_SET, nxt)

    # Buffer.__dlpack__: max_version a (major, minor) tuple of ints, copy a bool.
    for max_version in (1, "1.0", (1,), (1, 0, 0), ("1", "0"), (-1, 0), [1, 0]):
        refused("__dlpack__", "max_version=", buf.__dlpack__, max_version=max_version)
    refused("__dlpack__", "copy must be", buf.__dlpack__, copy="yes")
    check(np.from_dlpack(buf).nbytes == 16, "np.from_dlpack of a Buffer still works")
    buf.__dlpack__(max_version=(1, 0))

    # The atomics: a missing, extra or None argument is NvshmemInvalid naming it.
    refused("atomic_add", "missing required argument 'value'", nvshmem.atomic_add, a)
    refused("atomic_fetch", "missing required argument 'target'", nvshmem.atomic_fetch)
    refused("atomic_compare_swap", "missing required argument 'value'",
            nvshmem.atomic_compare_swap, a, 0)
    refused("atomic_add", "takes at most 3 positional arguments", nvshmem.atomic_add,
            a, 1, nxt, 0)
    refused("atomic_inc", "unexpected keyword argument 'value'", nvshmem.atomic_inc, a, value=1)
    refused("atomic_add", "value of type NoneType", nvshmem.atomic_add, a, None)
    refused("atomic_compare_swap", "cond of type NoneType", nvshmem.atomic_compare_swap,
            a, None, 1)
    refused("atomic_set", "remote_pe must be an int", nvshmem.atomic_set, a, 1, None)
    refused("atomic_swap", "target of type NoneType", nvshmem.atomic_swap, None, 1)
    refused("atomic_add", "dtype='object'", nvshmem.atomic_add, a, 1, dtype=object)
    check(nvshmem.atomic_fetch_add(a, 2, remote_pe=nxt, offset=1, dtype=np.int64) == 0,
          "keywords and a NumPy dtype still work")

    # The seeds' put(dst, src, count, pe) with a NumPy integer pe: count elements to pe.
    nvshmem.barrier_all()
    nvshmem.put(a, np.arange(8, dtype="int64") + 10, 3, np.int64(nxt))
    nvshmem.barrier_all()
    check_equal(host(a), np.array([10, 11, 12, 0, 0, 0, 0, 0]), "put(dst, src, 3, np.int64(pe))")

    # test() and wait_until() compare exactly: a value the element cannot hold is refused.
    i8 = nvshmem.array((1,), dtype="int8")
    u64 = nvshmem.array((1,), dtype="uint64")
    i8[:] = 0
    u64[:] = xp().asarray([2**64 - 1], dtype="uint64")
    for value in (256, -129, 2**64):
        msg = refused("test", f"value={value} does not fit in int8", nvshmem.test,
                      i8, C.CMP_EQ, value)
    refused("wait_until", "value=300 does not fit in int8", nvshmem.wait_until, i8, C.CMP_LT, 300)
    refused("test", "value=-1 does not fit in uint64", nvshmem.test, u64, C.CMP_EQ, -1)
    refused("test", "value must be an int, got float", nvshmem.test, i8, C.CMP_EQ, 0.5)
    check(nvshmem.test(i8, C.CMP_EQ, 0) and nvshmem.test(i8, C.CMP_GT, -128)
          and not nvshmem.test(i8, C.CMP_EQ, 127), "test of an int8 in range")
    check(nvshmem.test(u64, C.CMP_EQ, 2**64 - 1) and nvshmem.test(u64, C.CMP_GT, 2**63),
          "test of a uint64 above 2**63")
    nvshmem.wait_until(u64, C.CMP_EQ, np.uint64(2**64 - 1))

    # UniqueID.from_bytes takes bytes only: None, an int or a str is no id.
    if nvshmem.get_version().backend != "mpi":  # whose PEs meet through MPI, not an id
        uid = nvshmem.get_unique_id()
        check(nvshmem.UniqueID.from_bytes(bytes(uid)) == uid, "UniqueID round trip")
    for data in (None, nvshmem.UniqueID.SIZE, "x" * nvshmem.UniqueID.SIZE, b"short"):
        refused("UniqueID.from_bytes", "", nvshmem.UniqueID.from_bytes, data)

    # One "[pe N] " prefix, also where a message carries another one's text.
    class Rethrow:
        @property
        def __array_interface__(self):
            raise nvshmem._errors.invalid("inner: already prefixed")
    msg = refused("put", "src", nvshmem.put, a, Rethrow(), nxt)
    check("inner: already prefixed" in msg, msg)
    msg = str(nvshmem._errors.invalid(f"[pe {me}] call: text"))
    check(msg == f"[pe {me}] call: text", f"invalid() of a prefixed message: {msg!r}")
    refused("p", "dst", nvshmem.p, np.zeros(1, "int64"), 1, nxt)  # the core's text, renamed
    refused("g", "src", nvshmem.g, np.zeros(1, "int64"), nxt)
    nvshmem.free(buf)
    check("was already freed" in refused("free", "Buffer at", nvshmem.free, buf), "free twice")

    for arr in (a, i8, u64):
        nvshmem.free_array(arr)
    ok()
    nvshmem.finalize()
"""
)


@not_on_gpu("NumPy host arrays and objects with the buffer protocol")
@pytest.mark.parametrize("n", (1, 2))
def test_exceptions_stay_in_the_contract(run_pes, n):
    assert_all_ok(run_pes(n, CONTRACT), n)


UNCOMMITTED = """
    nvshmem.init()
    # More than any /dev/shm holds: tmpfs refuses it at once, before a page is
    # taken. The core's message carries the reason each PE found: one prefix.
    msg = expect_raises(nvshmem.NvshmemError, [f"[pe {nvshmem.my_pe()}] buffer:"],
                        nvshmem.buffer, 2**42)
    check(msg.count("[pe ") == 1, f"one [pe N] prefix in {msg!r}")
    ok()
    nvshmem.finalize()
"""


@cpu_only("the cpu backend commits heap pages in /dev/shm")
def test_a_carried_reason_gets_one_prefix(run_pes):
    assert_all_ok(run_pes(1, UNCOMMITTED, env={"SYMMEM_SYMMETRIC_SIZE": "8T"}), 1)


# ---------------------------------------------------------------- found by test_property.py


FOUND = (
    COMMON
    + """
    # A peer view of a size-0 allocation is empty (it raised NotImplementedError
    # with the text of an earlier call's error).
    empty, nothing = nvshmem.array((0,), dtype="int32"), nvshmem.buffer(0)
    check(nvshmem.get_peer_array(empty, nxt).size == 0, "get_peer_array of an empty array")
    check(nvshmem.get_peer_buffer(nothing, nxt).size == 0, "get_peer_buffer of an empty Buffer")
    # fence checks its stream= as every call does (it took anything).
    refused("fence", "stream of type str is not a stream", nvshmem.fence, stream="garbage")
    nvshmem.fence(stream=0)
    # A second init does nothing, but refuses malformed arguments (it took anything).
    refused("init", "initializer_method='nope'", nvshmem.init, initializer_method="nope")
    refused("init", "backend='bogus'", nvshmem.init, backend="bogus")
    refused("init", "device=-1", nvshmem.init, device=-1)
    nvshmem.init()
    check(nvshmem.my_pe() == me, "init() twice is harmless")
    # A collective's dst over its src is refused on every PE (the results were
    # wrong); reduce and broadcast still run in place.
    a = nvshmem.array((4 * n,), dtype="int64")
    a[:] = xp().arange(4 * n) + 100 * me
    nvshmem.barrier_all()
    for call, fn, args in [("fcollect", nvshmem.fcollect, (W, a[:2 * n], a[2 * me:2 * me + 2])),
                           ("alltoall", nvshmem.alltoall, (W, a, a)),
                           ("reducescatter", nvshmem.reducescatter, (W, a[:4], a, "sum")),
                           ("reduce", nvshmem.reduce, (W, a[1:], a[:-1], "sum")),
                           ("broadcast", nvshmem.broadcast, (W, a[:2], a[1:3], 0))]:
        check("overlap" in refused(call, "dst", fn, *args), f"{call}: names the overlap")
    check_equal(host(a), np.arange(4 * n) + 100 * me, "a after the refused calls")
    nvshmem.reduce(W, a, a, "sum")
    total = n * np.arange(4 * n) + 100 * sum(range(n))
    check_equal(host(a), total, "reduce in place")
    a[:] = xp().asarray(total + me)
    nvshmem.broadcast(W, a, a, n - 1)
    check_equal(host(a), total + n - 1, "broadcast in place")
    for arr in (empty, a):
        nvshmem.free_array(arr)
    nvshmem.free(nothing)
    ok()
    nvshmem.finalize()
"""
)


@pytest.mark.parametrize("n", (2, 3))
def test_what_the_property_test_found(run_pes, n):
    assert_all_ok(run_pes(n, FOUND), n)
