"""buffer/free, array/bytearray/free_array/array_get_buffer, get_peer_buffer/
get_peer_array, and what finalize() does with leaks, at 1..4 PEs."""

import pytest

from conftest import assert_all_ok, not_on_gpu, not_through_rma

N_PES = (1, 2, 3, 4)

BUFFERS = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n

    buf = nvshmem.buffer(64)
    check(isinstance(buf, nvshmem.Buffer), f"buffer() gave {type(buf)}")
    check(buf.size == 64, f"size {buf.size}")
    check(isinstance(buf.handle, int) and buf.handle != 0, f"handle {buf.handle!r}")
    check(buf.handle % 8 == 0, "handle is aligned")
    check(buf.device is not None, "device")
    # the buffer protocol: a writable view of the same bytes
    view = memoryview(buf)
    check(view.nbytes == 64 and not view.readonly, "memoryview of a Buffer")
    arr = np.frombuffer(buf, dtype="uint8")
    check(arr.__array_interface__["data"][0] == buf.handle, "frombuffer address == handle")
    arr[:] = me
    check(view[5] == me, "memoryview and array share memory")
    # DLPack
    check(tuple(buf.__dlpack_device__()) == (1, 0), f"__dlpack_device__ {buf.__dlpack_device__()}")
    dl = np.from_dlpack(buf)
    check(dl.shape == (64,) and dl.dtype == np.uint8, f"from_dlpack {dl.shape} {dl.dtype}")
    check(dl.__array_interface__["data"][0] == buf.handle, "from_dlpack shares memory")
    check("Buffer" in repr(buf) and hex(buf.handle) in repr(buf), f"repr {buf!r}")

    # put between Buffers
    src = nvshmem.buffer(64)
    np.frombuffer(src, dtype="uint8")[:] = np.arange(64, dtype="uint8") + me
    nvshmem.barrier_all()
    nvshmem.put(buf, src, nxt)
    nvshmem.barrier_all()
    check_equal(arr, np.arange(64, dtype="uint8") + prv, "put Buffer -> Buffer")
    nvshmem.barrier_all()

    # Many allocations of different sizes: distinct, non-overlapping, and the
    # same offsets on every PE (symmetric), checked with puts.
    sizes = [1, 7, 8, 100, 4096, 3, 65536, 256]
    bufs = [nvshmem.buffer(s) for s in sizes]
    spans = sorted((b.handle, b.handle + b.size) for b in bufs)
    check(all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "allocations overlap")
    for i, b in enumerate(bufs):
        np.frombuffer(b, dtype="uint8")[:] = 0
    nvshmem.barrier_all()
    for i, b in enumerate(bufs):
        nvshmem.put(b, np.full(b.size, (i * 16 + me) % 256, dtype="uint8"), nxt)
    nvshmem.barrier_all()
    for i, b in enumerate(bufs):
        check_equal(np.frombuffer(b, dtype="uint8"),
                    np.full(b.size, (i * 16 + prv) % 256, dtype="uint8"), f"buffer {i}")
    nvshmem.barrier_all()
    # free in a different order than allocated, then allocate again and reuse
    for b in bufs[::2] + bufs[1::2]:
        nvshmem.free(b)
        check(b.freed, "Buffer.freed after free")
    again = nvshmem.buffer(1000)
    np.frombuffer(again, dtype="uint8")[:] = 0
    nvshmem.barrier_all()
    nvshmem.put(again, np.full(1000, me + 1, dtype="uint8"), nxt)
    nvshmem.barrier_all()
    check_equal(np.frombuffer(again, dtype="uint8"), np.full(1000, prv + 1, dtype="uint8"),
                "reallocated buffer")
    nvshmem.barrier_all()
    for b in (again, src, buf):
        nvshmem.free(b)

    # size as a NumPy integer
    b = nvshmem.buffer(np.int64(24))
    check(b.size == 24, "buffer(np.int64(24))")
    nvshmem.free(b)
    ok()
    nvshmem.finalize()
"""


@not_on_gpu(
    "checks the buffer protocol and host DLPack of Buffers in host memory (a Buffer in "
    "device memory refuses the buffer protocol)"
)
@pytest.mark.parametrize("n", N_PES)
def test_buffers(run_pes, n):
    assert_all_ok(run_pes(n, BUFFERS), n)


ARRAYS = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n

    a = nvshmem.array((5,))
    check(isinstance(a, xp().ndarray) and a.dtype == np.float32 and a.shape == (5,),
          "array() defaults to float32")
    nvshmem.free_array(a)
    a = nvshmem.array(7, dtype="int16")
    check(a.shape == (7,), "array(int shape)")
    nvshmem.free_array(a)

    for dt in DTYPES + [np.float64, np.dtype("int32")]:
        a = nvshmem.array((3, 4), dtype=dt)
        check(isinstance(a, xp().ndarray), f"{dt}: array type {type(a)}")
        check(a.shape == (3, 4) and a.dtype == np.dtype(dt), f"{dt}: {a.shape} {a.dtype}")
        check(a.flags.c_contiguous, f"{dt}: C order")
        check(getattr(a.flags, "writeable", True), f"{dt}: writable")  # CuPy's: always
        buf, nbytes, name = nvshmem.array_get_buffer(a)
        check(isinstance(buf, nvshmem.Buffer), f"{dt}: array_get_buffer's Buffer")
        check(nbytes == a.nbytes == 12 * np.dtype(dt).itemsize, f"{dt}: nbytes {nbytes}")
        check(name == np.dtype(dt).name, f"{dt}: dtype name {name!r}")
        check(buf.handle == address(a), f"{dt}: Buffer address")
        check(buf.size >= nbytes, f"{dt}: Buffer size")
        # a view's Buffer is the whole allocation
        vbuf, vbytes, _ = nvshmem.array_get_buffer(a[1])
        check(vbuf.handle == buf.handle and vbytes == 4 * np.dtype(dt).itemsize,
              f"{dt}: array_get_buffer of a row")
        f = nvshmem.array((3, 4), dtype=dt, morder="F")
        check(f.flags.f_contiguous and f.shape == (3, 4), f"{dt}: morder='F'")
        b = nvshmem.bytearray((3, 4), dtype=dt)
        check(b.dtype == np.uint8 and b.nbytes == 12 * np.dtype(dt).itemsize,
              f"{dt}: bytearray {b.dtype} {b.nbytes}")
        # all three are symmetric: put into each on the next PE
        a[:] = 0
        f[:] = 0
        b[:] = 0
        nvshmem.barrier_all()
        grid = values(me, dt, 12).reshape(3, 4)
        nvshmem.put(a, grid, nxt)
        nvshmem.put(f, np.asfortranarray(grid), nxt)
        nvshmem.put(b, grid.view("uint8").ravel(), nxt)
        nvshmem.barrier_all()
        theirs = values(prv, dt, 12).reshape(3, 4)
        check_equal(a, theirs, f"{dt}: array")
        check_equal(f, theirs, f"{dt}: Fortran array")
        check_equal(b.view(dt).reshape(3, 4), theirs, f"{dt}: bytearray")
        nvshmem.barrier_all()
        for x in (a, f, b):
            nvshmem.free_array(x)
        expect_raises(nvshmem.NvshmemInvalid, ["free_array"], nvshmem.free_array, a)
        expect_raises(nvshmem.NvshmemInvalid, ["array_get_buffer"], nvshmem.array_get_buffer, a)

    # Zero-size arrays can be made, used and freed.
    z = nvshmem.array((0,), dtype="int32")
    z2 = nvshmem.array((0, 3), dtype="float64")
    check(z.size == 0 and z2.shape == (0, 3), "zero-size arrays")
    nvshmem.put(z, z, nxt)
    nvshmem.free_array(z)
    nvshmem.free_array(z2)
    expect_raises(nvshmem.NvshmemInvalid, ["free_array"], nvshmem.free_array, z)

    # The same for the interop factory of the backend's arrays: symmem.interop.numpy
    # (symmem.interop.cupy on the gpu backend).
    snp = nvshmem.interop.numpy if xp() is np else nvshmem.interop.cupy
    e = snp.empty((2, 3), dtype="int64")
    check(isinstance(e, xp().ndarray) and e.shape == (2, 3) and e.dtype == np.int64,
          "interop.numpy.empty")
    e[:] = 0
    nvshmem.barrier_all()
    nvshmem.put(e, np.arange(6).reshape(2, 3) + me, nxt)
    nvshmem.barrier_all()
    check_equal(e, np.arange(6).reshape(2, 3) + prv, "interop.numpy.empty is symmetric")
    ebuf, ebytes, ename = snp.array_get_buffer(e)
    check((ebytes, ename) == (48, "int64"), "interop.numpy.array_get_buffer")
    nvshmem.barrier_all()
    snp.free_array(e)
    e2 = snp.array((4,), dtype="uint16")
    e3 = snp.bytearray((4,), dtype="uint16")
    check(e2.dtype == np.uint16 and e3.nbytes == 8, "interop.numpy.array/bytearray")
    snp.free_array(e3)
    snp.free_array(e2)
    ok()
    nvshmem.finalize()
"""


@pytest.mark.parametrize("n", N_PES)
def test_arrays(run_pes, n):
    assert_all_ok(run_pes(n, ARRAYS), n)


# Loads and stores straight into a peer's copy: store, barrier, the peer checks.
PEER_VIEWS = """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n

    for dt in DTYPES:
        a = nvshmem.array((2, 5), dtype=dt)
        a[:] = 0
        nvshmem.barrier_all()
        peer = nvshmem.get_peer_array(a, nxt)
        check(isinstance(peer, xp().ndarray) and peer.shape == a.shape and peer.dtype == a.dtype,
              f"{dt}: peer array {type(peer)} {peer.shape} {peer.dtype}")
        peer[:] = xp().asarray(values(me, dt, 10).reshape(2, 5))   # a store into the next PE
        nvshmem.barrier_all()
        check_equal(a, values(prv, dt, 10).reshape(2, 5), f"{dt}: stored by the previous PE")
        check_equal(peer, values(me, dt, 10).reshape(2, 5), f"{dt}: load through the view")
        nvshmem.barrier_all()
        # a view of a slice lands at the slice's offset
        a[:] = 0
        nvshmem.barrier_all()
        part = nvshmem.get_peer_array(a[1, 2:4], nxt)
        check(part.shape == (2,), f"{dt}: peer view of a slice")
        part[:] = xp().asarray(values(me, dt, 2, salt=1))
        nvshmem.barrier_all()
        expect = np.zeros((2, 5), dtype=dt)
        expect[1, 2:4] = values(prv, dt, 2, salt=1)
        check_equal(a, expect, f"{dt}: store through a slice's peer view")
        nvshmem.barrier_all()
        nvshmem.free_array(a)

    # my own copy through get_peer_array(a, me) is a itself
    a = nvshmem.array((4,), dtype="int32")
    a[:] = 0
    mine = nvshmem.get_peer_array(a, me)
    mine[:] = xp().asarray([1, 2, 3, 4])
    check_equal(a, np.array([1, 2, 3, 4], dtype="int32"), "get_peer_array(a, my_pe)")
    # Fortran-ordered arrays keep their layout
    fa = nvshmem.array((2, 3), dtype="int32", morder="F")
    fa[:] = 0
    nvshmem.barrier_all()
    fpeer = nvshmem.get_peer_array(fa, nxt)
    fpeer[:] = xp().asarray(np.arange(6).reshape(2, 3) + 10 * me)
    nvshmem.barrier_all()
    check_equal(fa, np.arange(6).reshape(2, 3) + 10 * prv, "Fortran peer view")
    nvshmem.barrier_all()

    # get_peer_buffer: a Buffer over the peer's bytes
    buf = nvshmem.buffer(32)
    buffer_view(buf)[:] = 0
    nvshmem.barrier_all()
    pbuf = nvshmem.get_peer_buffer(buf, nxt)
    check(isinstance(pbuf, nvshmem.Buffer) and pbuf.size == 32, "get_peer_buffer")
    buffer_view(pbuf)[:] = xp().asarray(np.arange(me, me + 32, dtype="uint8"))
    nvshmem.barrier_all()
    check_equal(buffer_view(buf), np.arange(prv, prv + 32, dtype="uint8"),
                "store through a peer Buffer")
    nvshmem.barrier_all()
    # a peer view dies with its Buffer
    nvshmem.free(buf)
    check(pbuf.freed, "peer Buffer is freed with its Buffer")
    expect_raises(nvshmem.NvshmemInvalid, ["freed"], memoryview, pbuf)
    for x in (a, fa):
        nvshmem.free_array(x)
    ok()
    nvshmem.finalize()
"""


@not_through_rma("peer views are loads and stores into heaps this PE maps")
@pytest.mark.parametrize("n", N_PES)
def test_peer_views(run_pes, n):
    assert_all_ok(run_pes(n, PEER_VIEWS), n)


# finalize() frees what the program forgot and reports each leak once; memory
# made with release=True is freed silently.
LEAKS = """
    warnings.simplefilter("always")
    nvshmem.init()
    me = nvshmem.my_pe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        leaked = nvshmem.array((10,), dtype="float64")
        leaked_buf = nvshmem.buffer(100)
        quiet_one = nvshmem.array((10,), dtype="float64", release=True)
        kept = nvshmem.array((3,), dtype="int8")
        nvshmem.free_array(kept)
        nvshmem.barrier_all()
        nvshmem.finalize()
        nvshmem.finalize()
    msgs = [str(w.message) for w in caught]
    leaks = [m for m in msgs if "leak" in m]
    check(len(leaks) == 2, f"expected 2 leak reports, got {msgs}")
    check(any("size=80 " in m for m in leaks) and any("size=100 " in m for m in leaks),
          f"leak reports name the leaked Buffers: {leaks}")
    check(all(issubclass(w.category, Warning) for w in caught), "warnings")
    print(f"PE {me} OK")   # my_pe() is no longer valid after finalize()
"""


@pytest.mark.parametrize("n", (1, 3))
def test_finalize_frees_leaks(run_pes, n):
    assert_all_ok(run_pes(n, LEAKS), n)
