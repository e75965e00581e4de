"""Views that leave NumPy's chain of bases never reach a newer allocation
(src/extension/owner_search.c): as_strided(a), sliding_window_view(a, ...),
np.asarray(obj) of an object exporting __array_interface__, and
np.from_dlpack(a) end the chain at an object that is not an array (a
DummyArray, obj, NumPy's DLPack capsule), so the walk from the view to a's
Buffer stops short. After free_array(a) and a new allocation b at a's
address, put, get, p and g through such a view must raise, on the host (here)
and in njit code (test_device_cpu.py runs check_escapes with njit functions),
and b must be left as it was on every PE; views of live
arrays keep working. An exporter that keeps no reference to the array
(an address alone) names heap memory no check can trace: refused."""

from conftest import assert_all_ok, not_on_gpu

pytestmark = not_on_gpu("NumPy views over the heap: host memory")

# The escapes, the exporters, and check_escapes, which runs every escape
# through the calls it is given (the host's, or njit functions: test_device_cpu.py
# runs it too); a program calls it after init.
ESCAPES = """
    from numpy.lib.stride_tricks import as_strided, sliding_window_view
    from symmem import _resolver, _symmem

    class Exporter:  # keeps the array it exports alive, as NumPy's protocol asks
        def __init__(self, arr):
            self.arr, self.__array_interface__ = arr, arr.__array_interface__

    class RawExporter:  # an address and nothing else
        def __init__(self, arr):
            self.__array_interface__ = dict(arr.__array_interface__)

    ESCAPES = {
        "as_strided": lambda a: as_strided(a),
        "sliding_window_view": lambda a: sliding_window_view(a, 8, writeable=True)[0],
        "np.asarray(obj)": lambda a: np.asarray(Exporter(a)),
        "np.from_dlpack": lambda a: np.from_dlpack(a),
        "a slice of as_strided": lambda a: as_strided(a)[2:],
    }
    FREED = ["refers to symmetric memory that was freed", "may now belong to a newer allocation"]
    UNTRACED = ["names symmetric memory", "leads to no array symmem made over it"]

    def pattern(pe):
        return np.arange(8, dtype=np.int64) + 100 * pe

    def check_escapes(label, put, get, p, g, more=lambda view, b, nxt: None):
        \"\"\"For each escape: put, get, p and g (and more) through the view of a
        live array read and write its memory on the next PE; after free_array
        and a newer allocation b at its address, each is refused, naming the
        call, the argument and the PE, and b is left as it was on every PE.\"\"\"
        me, n = nvshmem.my_pe(), nvshmem.n_pes()
        nxt, prv, P = (me + 1) % n, (me - 1) % n, f"[pe {me}] "
        for name, make in ESCAPES.items():
            what = f"{label} {name}"
            a = nvshmem.array((8,), dtype="int64")
            a[:] = pattern(me)
            view = make(a)
            check(_resolver.owner_of(view) is None, f"{what}: not an escape")
            k = view.size
            nvshmem.barrier_all()
            out = np.zeros(k, dtype=np.int64)
            get(out, view, nxt)
            check_equal(out, pattern(nxt)[8 - k :], f"{what}: get from a live view")
            check(g(view, nxt) == pattern(nxt)[8 - k], f"{what}: g from a live view")
            nvshmem.barrier_all()  # every PE has read before any writes
            put(view, pattern(me)[:k] + 1, nxt)
            nvshmem.barrier_all()
            check_equal(a[8 - k :], pattern(prv)[:k] + 1, f"{what}: put into a live view")
            nvshmem.barrier_all()
            nvshmem.free_array(a)
            b = nvshmem.array((8,), dtype="int64")
            check(b.ctypes.data == a.ctypes.data, f"{what}: b did not get a's address")
            b[:] = -1
            nvshmem.barrier_all()  # every PE's b is filled before any call
            src = pattern(me)[:k]
            expect_raises(nvshmem.NvshmemInvalid, [P + "put: dst"] + FREED, put, view, src, nxt)
            expect_raises(nvshmem.NvshmemInvalid, [P + "put: src"] + FREED, put, b[:k], view, nxt)
            expect_raises(nvshmem.NvshmemInvalid, [P + "get: src"] + FREED,
                          get, np.zeros(k, np.int64), view, nxt)
            expect_raises(nvshmem.NvshmemInvalid, [P + "p: dst"] + FREED, p, view, 7, nxt)
            expect_raises(nvshmem.NvshmemInvalid, [P + "g: src"] + FREED, g, view, nxt)
            more(view, b, nxt)
            nvshmem.barrier_all()  # every refused call has been made
            check_equal(b, np.full(8, -1), f"{what}: a refused call reached the newer allocation")
            nvshmem.barrier_all()  # every PE has looked before b is used again
            nvshmem.free_array(b)
"""

HOST = (
    ESCAPES
    + """
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv, P = (me + 1) % n, (me - 1) % n, f"[pe {me}] "

    def more(view, b, nxt):
        k = view.size
        expect_raises(nvshmem.NvshmemInvalid, [P + "get: dst"] + FREED,
                      nvshmem.get, view, b[:k], nxt)
        expect_raises(nvshmem.NvshmemInvalid, [P + "atomic_add: target"] + FREED,
                      nvshmem.atomic_add, view, 1, nxt)
        expect_raises(nvshmem.NvshmemInvalid, [P + "put: dst"] + FREED,
                      nvshmem.put, Exporter(view), pattern(me)[:k], nxt)  # the exporter itself

    for fast in (True, False):  # NumPy's structs, and the buffer protocol
        _symmem._ndarray_fast(fast)
        check_escapes("fast path" if fast else "buffer protocol", nvshmem.put, nvshmem.get,
                      nvshmem.p, nvshmem.g, more)
    _symmem._ndarray_fast(True)

    # An exporter that keeps nothing but the address: no check can tell a
    # live array's memory from a freed one's, so heap memory through it is
    # refused, live or not, naming the exporter; private memory passes.
    a = nvshmem.array((8,), dtype="int64")
    a[:] = pattern(me)
    private = pattern(me) * 2
    for obj in (np.asarray(RawExporter(a)), RawExporter(a)):
        expect_raises(nvshmem.NvshmemInvalid, [P + "put: dst"] + UNTRACED + ["RawExporter"],
                      nvshmem.put, obj, private, nxt)
        expect_raises(nvshmem.NvshmemInvalid, [P + "get: src"] + UNTRACED,
                      nvshmem.get, np.zeros(8, np.int64), obj, nxt)
    nvshmem.barrier_all()
    nvshmem.put(a, np.asarray(RawExporter(private)), nxt)  # private memory: the address will do
    nvshmem.barrier_all()
    check_equal(a, pattern(prv) * 2, "a put from private memory through a bare exporter")
    nvshmem.barrier_all()  # every PE has looked before a is written again
    bumped = private + 1  # held here: the exporter holds no reference
    nvshmem.put(a, RawExporter(bumped), me)
    check_equal(a, bumped, "a put from private memory through the exporter itself")
    nvshmem.barrier_all()
    nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""
)


def test_views_that_leave_numpys_chain_never_reach_a_newer_allocation(run_pes):
    assert_all_ok(run_pes(2, HOST), 2)


# The object cache (src/extension/object_cache.h) remembers what a
# __cuda_array_interface__ object resolved to, Buffer included: it must hold
# that Buffer weakly, else a freed allocation's Buffer outlives every view of
# it and memory-named tensors over a newer allocation there are refused as
# ambiguous (interop's _covering) until the cache slot is reused.
CACHE = """
    import gc
    from symmem import _resolver

    class CudaInterface:  # read in C, and cached: a type that takes weak references
        def __init__(self, arr):
            self.arr = arr
            self.__cuda_array_interface__ = {
                "data": arr.__array_interface__["data"], "shape": arr.shape,
                "typestr": arr.dtype.str, "strides": None, "version": 3}

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    a = nvshmem.array((8,), dtype="int64")
    address = a.ctypes.data
    view = CudaInterface(a)
    for _ in range(2):  # the second call is served from the cache
        nvshmem.put(view, np.full(8, me, np.int64), nxt)
    nvshmem.barrier_all()
    check_equal(a, np.full(8, prv), "a put through a live interface")
    nvshmem.barrier_all()  # every PE has looked before a is freed
    nvshmem.free_array(a)
    expect_raises(nvshmem.NvshmemInvalid, ["put: dst", "freed"],
                  nvshmem.put, view, np.zeros(8, np.int64), nxt)
    del a, view
    gc.collect()
    held = [b for b in _resolver._BUFFERS if b.freed and b.ptr == address]
    check(not held, f"a freed Buffer outlived its views: {held}")
    b = nvshmem.array((8,), dtype="int64")
    b[:] = me
    nvshmem.barrier_all()
    view = CudaInterface(b)
    nvshmem.put(view, np.full(8, 10 + me, np.int64), nxt)  # a newer one: cached afresh
    nvshmem.barrier_all()
    check_equal(b, np.full(8, 10 + prv), "a put through the newer allocation's interface")
    nvshmem.barrier_all()
    nvshmem.free_array(b)
    ok()
    nvshmem.finalize()
"""


def test_the_object_cache_keeps_no_freed_buffer_alive(run_pes):
    assert_all_ok(run_pes(2, CACHE), 2)
