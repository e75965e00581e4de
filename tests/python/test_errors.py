"""Every documented misuse raises NvshmemInvalid (a ValueError) and every
runtime failure NvshmemError (a RuntimeError), with a message that names the
PE and the call; and the library keeps working afterwards."""

import pytest

import symmem
from conftest import assert_all_ok, cpu_only, not_on_gpu, run_plain, wait_all, write_program


def test_exception_types():
    assert issubclass(symmem.NvshmemInvalid, ValueError)
    assert issubclass(symmem.NvshmemError, RuntimeError)
    assert not issubclass(symmem.NvshmemInvalid, RuntimeError)
    assert not issubclass(symmem.NvshmemError, ValueError)
    import symmem.core as core

    assert core.NvshmemInvalid is symmem.NvshmemInvalid
    assert core.NvshmemError is symmem.NvshmemError


@pytest.mark.parametrize(
    "call, args",
    [
        ("put", lambda np: (np.zeros(4), np.zeros(4), 0)),
        ("get", lambda np: (np.zeros(4), np.zeros(4), 0)),
        ("put_nbi", lambda np: (np.zeros(4), np.zeros(4), 0)),
        ("get_nbi", lambda np: (np.zeros(4), np.zeros(4), 0)),
        ("p", lambda np: (np.zeros(1), 1.0, 0)),
        ("g", lambda np: (np.zeros(1), 0)),
        ("barrier_all", lambda np: ()),
        ("sync_all", lambda np: ()),
        ("quiet", lambda np: ()),
        ("fence", lambda np: ()),
        ("array", lambda np: ((4,),)),
        ("buffer", lambda np: (16,)),
        ("signal_fetch", lambda np: (np.zeros(1, dtype="uint64"),)),
        ("signal_op", lambda np: (np.zeros(1, dtype="uint64"), 1, 9, 0)),
    ],
)
def test_calls_before_init_raise(call, args):
    # This process never initialises symmem.
    import numpy as np

    assert not symmem._symmem.initialized()
    with pytest.raises(symmem.NvshmemInvalid) as info:
        getattr(symmem, call)(*args(np))
    assert isinstance(info.value, ValueError)
    assert f"{call}:" in str(info.value)
    assert "not initialized" in str(info.value)
    assert info.value.msg == str(info.value)
    assert symmem.init_status() == symmem.InitStatus.STATUS_NOT_INITIALIZED


# Misuse after init, on every PE. Each check names the call and the PE.
MISUSE = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt = (me + 1) % n
    INV, ERR = nvshmem.NvshmemInvalid, nvshmem.NvshmemError
    C, S = nvshmem.ComparisonType, nvshmem.SignalOp
    P = f"[pe {me}]"

    a = nvshmem.array((8,), dtype="float32")
    b = nvshmem.array((8,), dtype="float32")
    sig = nvshmem.array((1,), dtype="uint64")
    ivar = nvshmem.array((1,), dtype="int32")
    a[:] = 0
    b[:] = xp().asarray(np.arange(8))
    sig[:] = 0
    ivar[:] = 0

    # bad PE: n and -1, for every call that takes one
    for pe in (n, -1, n + 5):
        for name, call in [("put", lambda: nvshmem.put(a, b, pe)),
                           ("put", lambda: nvshmem.put(a, b, 2, pe)),
                           ("put", lambda: nvshmem.put(a, b, count=2, pe=pe)),
                           ("get", lambda: nvshmem.get(a, b, pe)),
                           ("put_nbi", lambda: nvshmem.put_nbi(a, b, remote_pe=pe)),
                           ("get_nbi", lambda: nvshmem.get_nbi(a, b, 1, pe)),
                           ("p", lambda: nvshmem.p(a, 1.0, pe)),
                           ("g", lambda: nvshmem.g(a, pe)),
                           ("put_signal", lambda: nvshmem.put_signal(a, b, sig, 1, S.SIGNAL_SET, pe)),
                           ("put_signal_nbi",
                            lambda: nvshmem.put_signal_nbi(a, b, sig, 1, S.SIGNAL_ADD, pe)),
                           ("signal_op", lambda: nvshmem.signal_op(sig, 1, S.SIGNAL_SET, pe)),
                           ("get_peer_array", lambda: nvshmem.get_peer_array(a, pe)),
                           ("get_peer_buffer",
                            lambda: nvshmem.get_peer_buffer(nvshmem.array_get_buffer(a)[0], pe))]:
            expect_raises(INV, [P, name + ":", str(pe)], call)

    # memory that is not on the symmetric heap
    plain = np.zeros(8, dtype="float32")
    expect_raises(INV, [P, "put:", "symmetric"], nvshmem.put, plain, b, nxt)
    expect_raises(INV, [P, "put_nbi:", "symmetric"], nvshmem.put_nbi, plain, b, nxt)
    expect_raises(INV, [P, "get:", "symmetric"], nvshmem.get, a, plain, nxt)
    expect_raises(INV, [P, "get_nbi:", "symmetric"], nvshmem.get_nbi, a, plain, nxt)
    expect_raises(INV, [P, "p:", "symmetric"], nvshmem.p, plain, 1.0, nxt)
    expect_raises(INV, [P, "g:", "symmetric"], nvshmem.g, plain, nxt)
    expect_raises(INV, [P, "put_signal:", "symmetric"],
                  nvshmem.put_signal, plain, b, sig, 1, S.SIGNAL_SET, nxt)
    psig = np.zeros(1, dtype="uint64")
    expect_raises(INV, [P, "put_signal:", "symmetric"],
                  nvshmem.put_signal, a, b, psig, 1, S.SIGNAL_SET, nxt)
    expect_raises(INV, [P, "signal_op:", "symmetric"], nvshmem.signal_op, psig, 1, S.SIGNAL_SET, nxt)
    expect_raises(INV, [P, "signal_wait:", "symmetric"], nvshmem.signal_wait, psig, 0, C.CMP_EQ)
    expect_raises(INV, [P, "signal_fetch:", "symmetric"], nvshmem.signal_fetch, psig)
    expect_raises(INV, [P, "wait_until:", "symmetric"],
                  nvshmem.wait_until, np.zeros(1, "int32"), C.CMP_EQ, 0)
    expect_raises(INV, [P, "test:", "symmetric"], nvshmem.test, np.zeros(1, "int32"), C.CMP_EQ, 0)
    expect_raises(INV, [P, "free_array:"], nvshmem.free_array, plain)
    expect_raises(INV, [P, "array_get_buffer:"], nvshmem.array_get_buffer, plain)
    expect_raises(INV, [P, "get_peer_array:"], nvshmem.get_peer_array, plain, nxt)
    expect_raises(INV, [P, "free:"], nvshmem.free, plain)
    expect_raises(INV, [P, "put:"], nvshmem.put, "not memory", b, nxt)
    expect_raises(INV, [P, "put:"], nvshmem.put, a, 12345, nxt)
    # free_array of a view that starts inside its allocation
    expect_raises(INV, [P, "free_array:"], nvshmem.free_array, a[2:])

    # count too large (and negative); count is in elements of dst
    expect_raises(INV, [P, "put:", "count"], nvshmem.put, a, b, 9, nxt)
    expect_raises(INV, [P, "put:", "count"], nvshmem.put, a, b, count=100, pe=nxt)
    expect_raises(INV, [P, "get:", "count"], nvshmem.get, a, b[:4], 5, nxt)
    expect_raises(INV, [P, "put_nbi:", "count"], nvshmem.put_nbi, a[:2], b, count=3, pe=nxt)
    expect_raises(INV, [P, "put:", "count"], nvshmem.put, a, b, -1, nxt)
    expect_raises(INV, [P, "put:", "count"], nvshmem.put, a, b, count="3", pe=nxt)

    # non-contiguous arrays
    big = nvshmem.array((4, 4), dtype="float32")
    expect_raises(INV, [P, "put:", "contiguous"], nvshmem.put, a[::2], b[:4], nxt)
    expect_raises(INV, [P, "put:", "contiguous"], nvshmem.put, a[:4], b[::2], nxt)
    expect_raises(INV, [P, "get:", "contiguous"], nvshmem.get, a[::2], b[:4], nxt)
    expect_raises(INV, [P, "put:", "contiguous"], nvshmem.put, big[:, 1], b[:4], nxt)
    expect_raises(INV, [P, "put_signal:", "contiguous"],
                  nvshmem.put_signal, a[::2], b[:4], sig, 1, S.SIGNAL_SET, nxt)

    # bad stream types
    for name, call in [("put", lambda: nvshmem.put(a, b, nxt, stream="x")),
                       ("get", lambda: nvshmem.get(a, b, nxt, stream="x")),
                       ("put_nbi", lambda: nvshmem.put_nbi(a, b, 2, nxt, stream=1.5)),
                       ("put_signal",
                        lambda: nvshmem.put_signal(a, b, sig, 1, S.SIGNAL_SET, nxt, stream="x")),
                       ("signal_op", lambda: nvshmem.signal_op(sig, 1, S.SIGNAL_ADD, nxt, "x")),
                       ("signal_wait", lambda: nvshmem.signal_wait(sig, 0, C.CMP_EQ, stream="x")),
                       ("quiet", lambda: nvshmem.quiet(stream="x")),
                       ("barrier_all", lambda: nvshmem.barrier_all(stream="x")),
                       ("sync_all", lambda: nvshmem.sync_all(stream=object()))]:
        expect_raises(INV, [P, name + ":", "stream"], call)

    # signals must be uint64
    fsig = nvshmem.array((1,), dtype="float32")
    isig = nvshmem.array((1,), dtype="int64")
    for bad in (fsig, isig):
        expect_raises(INV, [P, "signal_op:", "uint64"], nvshmem.signal_op, bad, 1, S.SIGNAL_SET, nxt)
        expect_raises(INV, [P, "signal_wait:", "uint64"], nvshmem.signal_wait, bad, 0, C.CMP_EQ)
        expect_raises(INV, [P, "signal_fetch:", "uint64"], nvshmem.signal_fetch, bad)
        expect_raises(INV, [P, "put_signal:", "uint64"],
                      nvshmem.put_signal, a, b, bad, 1, S.SIGNAL_SET, nxt)
        expect_raises(INV, [P, "put_signal_nbi:", "uint64"],
                      nvshmem.put_signal_nbi, a, b, bad, 1, S.SIGNAL_ADD, nxt)

    # bad signal_op values
    for op in (0, 3, 8, 11, -1):
        expect_raises(INV, [P, "signal_op:", f"signal_op={op}"],
                      nvshmem.signal_op, sig, 1, op, nxt)
        expect_raises(INV, [P, "put_signal:", f"signal_op={op}"],
                      nvshmem.put_signal, a, b, sig, 1, op, nxt)
    expect_raises(INV, [P, "signal_op:"], nvshmem.signal_op, sig, 1, "add", nxt)

    # bad comparison values
    for cmp in (6, -1, 99):
        expect_raises(INV, [P, "signal_wait:", f"cmp={cmp}"], nvshmem.signal_wait, sig, 0, cmp)
        expect_raises(INV, [P, "signal_wait:", f"cmp={cmp}"], nvshmem.signal_wait, sig, 0, cmp=cmp)
        expect_raises(INV, [P, "wait_until:", f"cmp={cmp}"], nvshmem.wait_until, ivar, cmp, 0)
        expect_raises(INV, [P, "test:", f"cmp={cmp}"], nvshmem.test, ivar, cmp, 0)
    expect_raises(INV, [P, "signal_wait:"], nvshmem.signal_wait, sig, 0)  # no comparison
    # wait_until/test need integer elements
    expect_raises(INV, [P, "wait_until:"], nvshmem.wait_until, fsig, C.CMP_EQ, 0)
    expect_raises(INV, [P, "test:"], nvshmem.test, fsig, C.CMP_EQ, 0)

    # p: a value that does not fit the element type
    i8 = nvshmem.array((1,), dtype="int8")
    expect_raises(INV, [P, "p:", "int8"], nvshmem.p, i8, 300, nxt)
    expect_raises(INV, [P, "p:"], nvshmem.p, i8, "x", nxt)
    u8 = nvshmem.array((1,), dtype="uint8")
    expect_raises(INV, [P, "p:", "uint8"], nvshmem.p, u8, -1, nxt)

    # wrong argument shapes
    expect_raises(INV, [P, "put:"], nvshmem.put, a, b)              # no PE
    expect_raises(INV, [P, "put:"], nvshmem.put, a, b, nxt, bogus=1)
    expect_raises(INV, [P, "put:"], nvshmem.put, a, b, 1.5)
    expect_raises(INV, [P, "array"], nvshmem.array, (-1, 2))
    expect_raises(INV, [P, "array"], nvshmem.array, (2,), dtype="not a dtype")
    expect_raises(INV, [P, "array"], nvshmem.array, (2,), morder="X")
    expect_raises(INV, [P, "buffer"], nvshmem.buffer, "16")
    expect_raises(INV, [P, "buffer"], nvshmem.buffer, -1)
    # release= is kept for finalize(), which reads it as a bool
    expect_raises(INV, [P, "buffer: release=array([0., 0.]) is not a bool"], nvshmem.buffer, 16,
                  np.zeros(2))
    expect_raises(INV, [P, "array: release='yes' is not a bool"], nvshmem.array, (2,),
                  release="yes")
    for team in (-1, 17):
        expect_raises(INV, [P, "team_my_pe:"], nvshmem.team_my_pe, team)
        expect_raises(INV, [P, "team_n_pes:"], nvshmem.team_n_pes, team)

    # Errors carry .msg and a status code.
    try:
        nvshmem.put(a, b, n)
    except INV as error:
        check(error.msg == str(error), f".msg {error.msg!r}")
        check(isinstance(error.status, int) and error.status != 0, f".status {error.status!r}")

    # double free and use after free
    dead = nvshmem.array((8,), dtype="float32")
    dead_buf = nvshmem.buffer(16)
    nvshmem.free_array(dead)
    nvshmem.free(dead_buf)
    expect_raises(INV, [P, "free_array:"], nvshmem.free_array, dead)
    expect_raises(INV, [P, "free:", "freed"], nvshmem.free, dead_buf)
    expect_raises(INV, [P, "put:"], nvshmem.put, dead, b, nxt)
    expect_raises(INV, [P, "get:"], nvshmem.get, b, dead, nxt)
    # (a freed array as put's source or get's destination, the private side, is not
    # detected yet: see the report on the issue.)
    expect_raises(INV, [P, "put:", "freed"], nvshmem.put, dead_buf, b, nxt)
    expect_raises(INV, [P, "p:"], nvshmem.p, dead, 1.0, nxt)
    expect_raises(INV, [P, "get_peer_array:"], nvshmem.get_peer_array, dead, nxt)
    expect_raises(INV, [P, "get_peer_buffer:"], nvshmem.get_peer_buffer, dead_buf, nxt)
    expect_raises(INV, ["freed"], memoryview, dead_buf)

    # A freed array whose address a newer allocation of the same size reuses:
    # freeing it again must not free the newer one.
    stale = nvshmem.array((16,), dtype="int32")
    stale_address = address(stale)
    nvshmem.free_array(stale)
    fresh = nvshmem.array((16,), dtype="int32")
    reused = address(fresh) == stale_address
    expect_raises(INV, [P, "free_array:", "freed"], nvshmem.free_array, stale)
    expect_raises(INV, [P, "array_get_buffer:", "freed"], nvshmem.array_get_buffer, stale)
    expect_raises(INV, [P, "get_peer_array:", "freed"], nvshmem.get_peer_array, stale, nxt)
    fresh[:] = 0
    nvshmem.barrier_all()
    nvshmem.put(fresh, np.arange(16, dtype="int32") + me, nxt)   # fresh is still alive
    nvshmem.barrier_all()
    check_equal(fresh, np.arange(16, dtype="int32") + (me - 1) % n, f"fresh (reused={reused})")
    nvshmem.barrier_all()
    nvshmem.free_array(fresh)

    # After all these errors the library still works.
    nvshmem.barrier_all()
    nvshmem.put(a, b, nxt)
    nvshmem.barrier_all()
    check_equal(a, np.arange(8, dtype="float32"), "put after errors")
    nvshmem.barrier_all()
    for x in (a, b, sig, ivar, big, fsig, isig, i8, u8):
        nvshmem.free_array(x)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", (1, 2))
def test_misuse(run_pes, n):
    assert_all_ok(run_pes(n, MISUSE), n)


# A collective allocation whose size differs between PEs fails on every PE
# with NvshmemInvalid; the heap still works afterwards.
SIZE_MISMATCH = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    P = f"[pe {me}]"
    expect_raises(nvshmem.NvshmemInvalid, [P, "size"], nvshmem.array, (me + 1,), dtype="int32")
    expect_raises(nvshmem.NvshmemInvalid, [P, "size"], nvshmem.buffer, 8 * (me + 1))
    # only the last PE disagrees
    expect_raises(nvshmem.NvshmemInvalid, [P, "size"], nvshmem.bytearray,
                  (16 if me == n - 1 else 8,), dtype="uint8")
    # the heap still works: allocate again (the same size everywhere) and put
    a = nvshmem.array((5,), dtype="int32")
    b = nvshmem.array((5,), dtype="int32")
    a[:] = 0
    b[:] = xp().asarray(np.arange(5) + 10 * me)
    nvshmem.barrier_all()
    nvshmem.put(a, b, nxt)
    nvshmem.barrier_all()
    check_equal(a, np.arange(5) + 10 * prv, "put after a failed allocation")
    nvshmem.barrier_all()
    nvshmem.free_array(a)
    nvshmem.free_array(b)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", (2, 3, 4))
def test_size_mismatch(run_pes, n):
    assert_all_ok(run_pes(n, SIZE_MISMATCH), n)


# A heap that is full raises NvshmemError on every PE; it keeps working.
HEAP_FULL = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    msg = expect_raises(nvshmem.NvshmemError, [f"[pe {me}]"], nvshmem.array,
                        (4 << 20,), dtype="uint8")
    check("SYMMEM_SYMMETRIC_SIZE" in msg or "heap" in msg, f"message {msg!r}")
    keep = nvshmem.array((1 << 17,), dtype="uint8")    # 128 KiB fits
    expect_raises(nvshmem.NvshmemError, [f"[pe {me}]"], nvshmem.buffer, 1 << 20)
    keep[:] = 0
    nvshmem.barrier_all()
    nvshmem.put(keep, np.full(1 << 17, me + 1, dtype="uint8"), nxt)
    nvshmem.barrier_all()
    check(bool((keep == prv + 1).all()), "put into what fits")
    nvshmem.barrier_all()
    nvshmem.free_array(keep)
    ok()
    nvshmem.finalize()
"""


@not_on_gpu(
    "sizes the cpu engine's heap with SYMMEM_SYMMETRIC_SIZE (NVSHMEM's heap is sized by "
    "NVSHMEM_SYMMETRIC_SIZE)"
)
def test_heap_full(run_pes):
    assert_all_ok(run_pes(2, HEAP_FULL, env={"SYMMEM_SYMMETRIC_SIZE": "1M"}), 2)


# init() misuse, in a plain process without a launcher.
INIT_ERRORS = """
    INV = nvshmem.NvshmemInvalid
    expect_raises(INV, ["init:", "initializer_method"], nvshmem.init,
                  initializer_method="bogus")
    expect_raises(INV, ["init:", "backend"], nvshmem.init, backend="tpu")
    expect_raises(INV, ["init:", "device"], nvshmem.init, device=-2)
    uid = nvshmem.get_unique_id()
    expect_raises(INV, ["init:", "rank"], nvshmem.init, uid=uid, nranks=2,
                  initializer_method="uid")
    expect_raises(INV, ["init:", "nranks"], nvshmem.init, uid=uid, rank=0,
                  initializer_method="uid")
    expect_raises(INV, ["init:", "rank"], nvshmem.init, uid=uid, rank=2, nranks=2,
                  initializer_method="uid")
    expect_raises(INV, ["init:", "rank"], nvshmem.init, uid=uid, rank=-1, nranks=2,
                  initializer_method="uid")
    expect_raises(INV, ["init:", "uid"], nvshmem.init, rank=0, nranks=1,
                  initializer_method="uid")
    expect_raises(INV, ["init:", "uid"], nvshmem.init, uid=b"x" * 128, rank=0, nranks=1,
                  initializer_method="uid")
    expect_raises(INV, ["init:", "uid"], nvshmem.init, uid=nvshmem.get_unique_id(empty=True),
                  rank=0, nranks=1, initializer_method="uid")
    expect_raises(INV, ["UniqueID"], nvshmem.UniqueID.from_bytes, b"short")
    # the gpu backend is not usable on this machine: an error, whichever
    try:
        nvshmem.init(backend="gpu")
    except (NotImplementedError, nvshmem.NvshmemError) as error:
        check("gpu" in str(error), f"backend='gpu' error names it: {error}")
    else:
        raise AssertionError("init(backend='gpu') did not raise")
    check(nvshmem.init_status() == nvshmem.InitStatus.STATUS_NOT_INITIALIZED,
          "still not initialised after failed inits")
    expect_raises(INV, ["put:", "not initialized"], nvshmem.put,
                  np.zeros(2), np.zeros(2), 0)
    # and a correct init works after all the failed ones
    nvshmem.init(backend="cpu")
    check(nvshmem.n_pes() == 1 and nvshmem.get_version().backend == "cpu", "init after errors")
    a = nvshmem.array((3,), dtype="int16")
    nvshmem.put(a, np.array([1, 2, 3], dtype="int16"), 0)
    check_equal(a, np.array([1, 2, 3], dtype="int16"), "put after failed inits")
    nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""


@cpu_only("expects init(backend='gpu') to fail, as it does only on a machine without a GPU")
def test_init_errors(tmp_path):
    prog = write_program(tmp_path, INIT_ERRORS)
    [(rc, out, err)] = wait_all([run_plain(prog)], timeout=60)
    assert rc == 0, err
    assert out.splitlines() == ["PE 0 OK"], out + err


def test_bad_backend_env(tmp_path):
    # SYMMEM_BACKEND names a backend that does not exist: init() says so.
    prog = write_program(
        tmp_path,
        """
        msg = expect_raises(nvshmem.NvshmemInvalid, ["init:", "tpu"], nvshmem.init)
        print("raised:", msg)
    """,
    )
    [(rc, out, err)] = wait_all([run_plain(prog, env={"SYMMEM_BACKEND": "tpu"})])
    assert rc == 0, err
    assert out.startswith("raised: "), out + err
    assert "'cpu', 'gpu', 'mpi', 'auto'" in out


def test_a_freed_array_on_the_private_side_raises(run_pes):
    """put's src and get's dst are private, but memory of a freed symmetric
    array must not be read or written through them."""
    result = run_pes(
        2,
        """
import symmem as nvshmem
nvshmem.init()
me = nvshmem.my_pe()
gone = nvshmem.array((8,), dtype="float32")
kept = nvshmem.array((8,), dtype="float32")
nvshmem.free_array(gone)
expect_raises(nvshmem.NvshmemInvalid, ["put:", "src", "freed", f"[pe {me}]"],
              nvshmem.put, kept, gone, 1 - me)
expect_raises(nvshmem.NvshmemInvalid, ["get:", "dst", "freed", f"[pe {me}]"],
              nvshmem.get, gone, kept, 1 - me)
nvshmem.free_array(kept)
ok()
nvshmem.finalize()
""",
    )
    assert_all_ok(result, 2)


@cpu_only("checks the cpu backend's refusals of multicast, external registration and interop.cupy")
def test_multicast_and_external_registration_say_why_they_cannot_run(run_pes):
    result = run_pes(
        1,
        """
import symmem as nvshmem
nvshmem.init()
a = nvshmem.array((4,), dtype="float32")
for call in (nvshmem.get_multicast_array, nvshmem.get_multicast_buffer):
    expect_raises(NotImplementedError, ["multicast", "cpu"], call, nvshmem.Teams.TEAM_WORLD, a)
import numpy as np
outside = np.zeros(4, dtype="float32")
expect_raises(NotImplementedError, ["register_external_array", "cpu"],
              nvshmem.register_external_array, outside)
expect_raises(NotImplementedError, ["register_external_buffer", "cpu"],
              nvshmem.register_external_buffer, outside)
expect_raises(nvshmem.NvshmemInvalid, ["unregister_external_buffer", "register_external"],
              nvshmem.unregister_external_buffer, a)
expect_raises(nvshmem.NvshmemInvalid, ["unregister_external_array", "symmetric heap"],
              nvshmem.unregister_external_array, outside)
expect_raises(NotImplementedError, ["interop.cupy.empty", "cpu"],
              nvshmem.interop.cupy.empty, (4,))
nvshmem.free_array(a)
ok()
nvshmem.finalize()
""",
    )
    assert_all_ok(result, 1)


DROPPED_ERRORS = """
    nvshmem.init()
    me = nvshmem.my_pe()
    a = nvshmem.array((4,), dtype="int32")
    calls = [lambda: nvshmem.put(a, a, 7),                     # the extension finds it
             lambda: nvshmem.array((1 << 42,), dtype="int8"),  # the core finds it
             lambda: nvshmem.ask_smem("bogus"),                # the package finds it
             lambda: nvshmem.team_split_strided(nvshmem.Teams.TEAM_WORLD, 0, 1, 9)]
    for call in calls:
        try:
            call()
        except (nvshmem.NvshmemInvalid, nvshmem.NvshmemError) as error:
            try:  # raised again, as a caller that wraps it would: printed once
                raise nvshmem._symmem.exception(error.status, error.msg)
            except type(error):
                pass
    nvshmem.barrier_all()
    nvshmem.free_array(a)
    print(f"PE {me} OK", flush=True)
    nvshmem.finalize()
"""


@pytest.mark.parametrize("debug", ["1", "0"])
def test_symmem_debug_prints_each_error_once_where_it_is_found(run_pes, debug):
    # Errors a program catches and drops leave a line on stderr under
    # SYMMEM_DEBUG=1, whichever layer found them; none without it.
    result = run_pes(2, DROPPED_ERRORS, env={"SYMMEM_DEBUG": debug})
    assert_all_ok(result, 2)
    for pe in (0, 1):
        printed = [line for line in result.lines(pe, "stderr") if line.startswith("symmem: ")]
        if debug == "0":
            assert printed == [], result
            continue
        wanted = [
            f"[pe {pe}] put: remote_pe=7 is outside [0, 2)",
            f"[pe {pe}] malloc: size=4398046511104 does not fit in the symmetric heap",
            f"[pe {pe}] ask_smem: amount='bogus' is not one of",
            f"[pe {pe}] team_split_strided: ",
        ]
        assert len(printed) == len(wanted), result
        for line, start in zip(printed, wanted):
            assert line.startswith("symmem: " + start), (line, result)


# A program started without a launcher is a world of one PE: a call that
# names PE 1 says how to start more (in the C core's checks and the
# extension's), and a world of several PEs gets no such hint.
ONE_PE_HINT = """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
x = nvshmem.array((4,), dtype="int64")
hint = " (this is a world of 1 PE: start N PEs with python -m symmem.run -n N prog.py)"
for name, arg, call in [
        ("put", "remote_pe", lambda: nvshmem.put(x, np.zeros(4, "int64"), remote_pe=n)),
        ("get", "remote_pe", lambda: nvshmem.get(x, x, n)),
        ("p", "pe", lambda: nvshmem.p(x, 1, n)),
        ("atomic_add", "remote_pe", lambda: nvshmem.atomic_add(x, 1, n))]:
    msg = expect_raises(nvshmem.NvshmemInvalid, [f"{name}: {arg}={n} is outside [0, {n})"], call)
    check(msg.endswith(hint) == (n == 1), f"{n} PEs: {msg!r}")
nvshmem.free_array(x)
nvshmem.finalize()
print(f"PE {me} OK", flush=True)
"""


def test_a_world_of_one_pe_says_how_to_start_more(tmp_path, run_pes):
    prog = write_program(tmp_path, ONE_PE_HINT)
    [(rc, out, err)] = wait_all([run_plain(prog)])  # no launcher
    assert rc == 0 and out.strip() == "PE 0 OK", out + err
    assert_all_ok(run_pes(2, prog), 2)
