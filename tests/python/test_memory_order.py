"""Arrays of one shape in C and in Fortran order never exchange transposed
data (src/extension/resolve.h, symmem__ext_check_same_order): symmem copies
bytes as they lie, so a put from np.asfortranarray(a) into a C-ordered
array would land every element off the diagonal in another's place (PE 1's
dst[0, 1] got 104, expected 101). Every call that moves two arrays' bytes
(put, get and their nbi forms, put_signal, the five collectives) refuses
them, naming the call, both arguments, both orders and the PE, and writes
nothing; arrays whose orders agree, or of one dimension, are copied
element for element as before.

Each refusal is tried on every path by which an array reaches its address:
NumPy's structs (the fast path), the buffer protocol (a memoryview, and
every array with the fast path off), __array_interface__ and DLPack (the
package's resolver) and __cuda_array_interface__ (read in C; over host
memory here, which the cpu engine copies as any other)."""

from conftest import assert_all_ok, not_on_gpu

PROGRAM = """
    from symmem import _symmem

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    W = nvshmem.Teams.TEAM_WORLD
    C_ORDER, F_ORDER = "C order (row-major)", "Fortran order (column-major)"

    def grid(pe):
        \"\"\"PE pe's 3x3 values: 100, 101, ... on PE 0, as in the report.\"\"\"
        return (np.arange(9, dtype=np.int32) + 100 + 10 * pe).reshape(3, 3)

    class Interface:  # __array_interface__ only: the package's resolver
        def __init__(self, arr):
            self.arr, self.__array_interface__ = arr, arr.__array_interface__

    class DLPackOnly:  # __dlpack__ only: the package's resolver
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kwargs):
            return self.arr.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    class CudaInterface:  # __cuda_array_interface__, read in C
        def __init__(self, arr):
            self.arr = arr
            self.__cuda_array_interface__ = {
                "data": arr.__array_interface__["data"], "shape": arr.shape,
                "typestr": arr.dtype.str, "strides": arr.strides, "version": 3}

    WRAPS = {"ndarray": lambda a: a, "memoryview": memoryview, "__array_interface__": Interface,
             "__dlpack__": DLPackOnly, "__cuda_array_interface__": CudaInterface}

    def refused(call, dst_order, src_order, fn, *args):
        expect_raises(nvshmem.NvshmemInvalid,
                      [f"[pe {me}] {call}: dst is in {dst_order} but src is in {src_order}",
                       "transposed"], fn, *args)

    sym_c = nvshmem.array((3, 3), dtype="int32")             # C order
    sym_f = nvshmem.array((3, 3), dtype="int32", morder="F")  # symmem's own Fortran order
    wide_f = nvshmem.array((3, 3 * n), dtype="int32", morder="F")
    sig = nvshmem.array((1,), dtype="uint64")
    check(sym_f.flags.f_contiguous and not sym_f.flags.c_contiguous, "morder='F'")

    for fast in (True, False):  # NumPy's structs, then the buffer protocol for every array
        _symmem._ndarray_fast(fast)
        what = "fast path" if fast else "buffer protocol"
        for x in (sym_c, sym_f, wide_f):
            x[...] = 0
        sig[0] = 0
        nvshmem.barrier_all()

        # One-sided calls: the local side through every path, both ways round.
        for name, wrap in WRAPS.items():
            for local_f in (np.asfortranarray(grid(me)), grid(me).T):  # both Fortran order
                refused("put", C_ORDER, F_ORDER, nvshmem.put, sym_c, wrap(local_f), nxt)
                refused("put_signal", C_ORDER, F_ORDER, nvshmem.put_signal, sym_c,
                        wrap(local_f), sig, 1, nvshmem.SignalOp.SIGNAL_SET, nxt)
            refused("put", F_ORDER, C_ORDER, nvshmem.put, sym_f, wrap(grid(me)), nxt)
            if name != "__dlpack__":  # a DLPack export may be read-only: no get's dst
                local_f = np.asfortranarray(np.zeros((3, 3), np.int32))
                refused("get", F_ORDER, C_ORDER, nvshmem.get, wrap(local_f), sym_c, nxt)
                local_c = np.zeros((3, 3), np.int32)
                refused("get", C_ORDER, F_ORDER, nvshmem.get, wrap(local_c), sym_f, nxt)
                check_equal(local_f, np.zeros((3, 3), np.int32), f"{what}: get wrote ({name})")
        # The symmetric side through the other paths too.
        for name in ("memoryview", "__array_interface__", "__cuda_array_interface__"):
            wrap = WRAPS[name]
            refused("put", C_ORDER, F_ORDER, nvshmem.put, wrap(sym_c), grid(me).T, nxt)
            refused("get", C_ORDER, F_ORDER, nvshmem.get, np.zeros((3, 3), np.int32),
                    wrap(sym_f), nxt)
        refused("put_nbi", C_ORDER, F_ORDER, nvshmem.put_nbi, sym_c, sym_f.T.T, nxt)
        refused("get_nbi", F_ORDER, C_ORDER, nvshmem.get_nbi, sym_f, sym_c, 3, nxt)
        refused("put_signal_nbi", F_ORDER, C_ORDER, nvshmem.put_signal_nbi, sym_f, sym_c, sig, 1,
                nvshmem.SignalOp.SIGNAL_ADD, nxt)

        # Collectives: every PE refuses before any waits for another.
        refused("reduce", C_ORDER, F_ORDER, nvshmem.reduce, W, sym_c, sym_f, "sum")
        refused("reduce", F_ORDER, C_ORDER, nvshmem.reduce, W, sym_f, Interface(sym_c), "max")
        refused("reducescatter", C_ORDER, F_ORDER, nvshmem.reducescatter, W, sym_c, wide_f,
                "sum")
        refused("broadcast", F_ORDER, C_ORDER, nvshmem.broadcast, W, sym_f, sym_c, 0)
        refused("fcollect", F_ORDER, C_ORDER, nvshmem.fcollect, W, wide_f, sym_c)
        refused("alltoall", C_ORDER, F_ORDER, nvshmem.alltoall, W, sym_c, sym_f)
        refused("fcollect", F_ORDER, C_ORDER, nvshmem.collective_on_buffer, "fcollect", W,
                wide_f, sym_c)
        nvshmem.quiet()
        nvshmem.barrier_all()  # every refused call has been made on every PE
        for x in (sym_c, sym_f, wide_f, sig):
            check(not host(x).any(), f"{what}: a refused call wrote {host(x)}")
        nvshmem.barrier_all()  # every PE has looked before any puts again

        # Where the orders agree, the elements arrive where they belong.
        nvshmem.put(sym_f, np.asfortranarray(grid(me)), nxt)
        nvshmem.put(sym_c, Interface(grid(me)), nxt)
        nvshmem.barrier_all()
        check_equal(sym_f, grid(prv), f"{what}: put, both in Fortran order")
        check_equal(sym_c, grid(prv), f"{what}: put, both in C order")
        got = np.asfortranarray(np.zeros((3, 3), np.int32))
        nvshmem.get(memoryview(got), sym_f, nxt)
        check_equal(got, grid(me), f"{what}: get, both in Fortran order")
        flat = np.zeros(9, np.int32)  # one dimension: either order reads it in place
        nvshmem.get(flat, sym_c, nxt)
        check_equal(flat, grid(me).ravel(), f"{what}: get into one dimension")
        nvshmem.barrier_all()
        nvshmem.fcollect(W, wide_f, sym_f)
        for pe in range(n):
            check_equal(wide_f[:, 3 * pe : 3 * pe + 3], grid((pe - 1) % n),
                        f"{what}: fcollect of Fortran blocks, block {pe}")
        nvshmem.reduce(W, sym_f, sym_f, "sum")
        check_equal(sym_f, sum(grid(pe) for pe in range(n)), f"{what}: reduce in Fortran order")
        nvshmem.barrier_all()

    _symmem._ndarray_fast(True)
    for x in (sig, wide_f, sym_f, sym_c):
        nvshmem.free_array(x)
    ok()
    nvshmem.finalize()
"""


@not_on_gpu("NumPy arrays over the heap and host memory through each interface")
def test_c_and_fortran_order_never_exchange_transposed_data(run_pes):
    assert_all_ok(run_pes(2, PROGRAM), 2)
