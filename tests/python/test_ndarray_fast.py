"""NumPy arrays read from NumPy's structs (src/extension/ndarray_fast.c)
give what the buffer protocol gives: the same memory, element type and
size, and the same error, word for word, for every array that is not plain.
Each PE runs every case twice, through the structs and with the fast path
switched off (_symmem._ndarray_fast(False)), and compares what each call
returned, moved or raised; a third pass switches it back on."""

import pytest

from conftest import assert_all_ok, not_on_gpu

# Every case, as (name, outcome): ("ok", what the call gave or what
# arrived) or ("raised", type, message with addresses blanked: a pass makes
# its own allocations).
PASSES = """
    import re
    from symmem import _symmem

    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    NUMBERS = DTYPES + ["complex64", "complex128", "longdouble"]
    OTHERS = [np.dtype(object), np.dtype([("a", "i4"), ("b", "f4")]), np.dtype("M8[s]"),
              np.dtype("U2"), np.dtype("S8"), np.dtype("V8")]
    C = 16

    class Sub(np.ndarray):
        pass

    def outcome(fn, *args, **kwargs):
        try:
            got = fn(*args, **kwargs)
        except Exception as error:
            return ("raised", type(error).__name__, re.sub(r"0x[0-9a-f]+", "0x?", str(error)))
        return ("ok", got)

    def bytes_of(a):
        return np.ascontiguousarray(a).tobytes()

    def plain_and_not(dt, salt):
        \"\"\"Local arrays of dt: plain ones (C, Fortran, 0-d, empty) and every
        way of not being plain.\"\"\"
        dt = np.dtype(dt)
        v = values(me, dt, C, salt)
        read_only = v.copy()
        read_only.flags.writeable = False
        unaligned = np.zeros(C * dt.itemsize + 1, np.uint8)[1:].view(dt)
        unaligned[:] = v
        cases = {
            "1-d": v.copy(),
            "2-d": v.reshape(4, 4).copy(),
            "fortran": np.asfortranarray(v.reshape(4, 4)),
            "0-d": np.array(v[3]),
            "empty": v[:0].copy(),
            "one column": v.reshape(4, 4)[:, 1:2],
            "every other": v[::2],
            "columns": v.reshape(4, 4)[:, :2],
            "reversed": v[::-1],
            "read-only": read_only,
            "broadcast": np.broadcast_to(v[:1], (C,)),
            "unaligned": unaligned,
            "subclass": v.copy().view(Sub),
            "metadata": v.copy().view(np.dtype(dt, metadata={"m": 1})),
        }
        if dt.itemsize > 1:
            cases["swapped"] = v.astype(dt.newbyteorder())
        return cases

    def other_kinds():
        \"\"\"Arrays of data that is not numbers.\"\"\"
        return {f"{dt}": np.zeros(4, dt) for dt in OTHERS}

    def symmetric_views(a):
        \"\"\"Views of the symmetric array a, plain and not.\"\"\"
        read_only = a[:]
        read_only.flags.writeable = False
        return {
            "whole": a,
            "slice": a[2:10],
            "2-d": a.reshape(4, 4),
            "transposed": a.reshape(4, 4).T,
            "0-d": a[5:6].reshape(()),
            "every other": a[::2],
            "read-only": read_only,
            "through a memoryview": np.frombuffer(memoryview(a), a.dtype),
        }

    def one_pass():
        \"\"\"[(case, outcome)] for every case, in the same order on every PE.\"\"\"
        got = []
        syms = {dt: nvshmem.array((C,), dtype=dt) for dt in NUMBERS}  # puts' dst
        sources = {dt: nvshmem.array((C,), dtype=dt) for dt in NUMBERS}  # gets' src, unchanged
        for dt, a in sources.items():
            a[:] = xp().asarray(values(me, dt, C, salt=9))
        freed = nvshmem.array((C,), dtype="int64")
        freed_view = freed[2:]
        nvshmem.free_array(freed)
        nvshmem.barrier_all()  # every PE's sources are filled

        def moved(name, dst, fn):
            \"\"\"fn (a put into nxt's dst, or a get), then what this PE's dst holds.\"\"\"
            dst[...] = 0
            nvshmem.barrier_all()
            result = outcome(fn)
            nvshmem.barrier_all()
            got.append((name, result, bytes_of(dst)))

        for dt in NUMBERS:
            sym, other = syms[dt], syms["float32" if dt != "float32" else "int32"]
            source = sources[dt]
            for kind, x in plain_and_not(dt, 1).items():
                name = f"{dt} {kind}"
                ext = outcome(_symmem.extent, x, "probe", "x")
                if ext[0] == "ok":
                    ext = ("ok", ext[1][0] - address(x), ext[1][1])
                got.append((f"{name}: extent", ext))
                moved(f"{name}: put src", sym, lambda: nvshmem.put(sym, x, nxt))
                moved(f"{name}: put count=3", sym, lambda: nvshmem.put(sym, x, 3, nxt))
                moved(f"{name}: put into float32/int32", other,
                      lambda: nvshmem.put(other, x, nxt))
                got.append((f"{name}: put dst (not symmetric)",
                            outcome(nvshmem.put, x, sym, nxt)))
                before = bytes_of(x)
                result = outcome(nvshmem.get, x, source, prv)
                got.append((f"{name}: get dst", result, bytes_of(x), before == bytes_of(x)))
            for (kind, view), read in zip(symmetric_views(sym).items(),
                                          symmetric_views(source).values()):
                name = f"{dt} symmetric {kind}"
                src = values(me, dt, C, salt=5)[: view.size].reshape(view.shape)
                moved(f"{name}: put dst", sym, lambda: nvshmem.put(view, src, nxt))
                local = np.zeros(read.shape, dt)
                got.append((f"{name}: get src", outcome(nvshmem.get, local, read, prv),
                            bytes_of(local)))
        for kind, x in other_kinds().items():
            got.append((f"{kind}: extent", outcome(_symmem.extent, x, "probe", "x")))
            got.append((f"{kind}: put src", outcome(nvshmem.put, syms["uint8"], x, nxt)))
            got.append((f"{kind}: get dst", outcome(nvshmem.get, x, sources["uint8"], prv)))
        got.append(("freed view: put dst",
                    outcome(nvshmem.put, freed_view, np.zeros(C - 2, "int64"), nxt)))
        got.append(("freed view: get src",
                    outcome(nvshmem.get, np.zeros(C - 2, "int64"), freed_view, prv)))
        got.append(("freed view: extent", outcome(_symmem.extent, freed_view, "probe", "x")))
        nvshmem.barrier_all()
        for a in [*syms.values(), *sources.values()]:
            nvshmem.free_array(a)
        return got

    check(_symmem._ndarray_fast(), "this NumPy's arrays are read from its structs")
    fast = one_pass()
    check(_symmem._ndarray_fast(False) is False, "the switch turns the fast path off")
    slow = one_pass()
    check(_symmem._ndarray_fast(True) is True, "and on again")
    again = one_pass()
    for f, s, a in zip(fast, slow, again):
        check(f == s, f"the fast path differs from the buffer protocol: {f!r} != {s!r}")
        check(a == f, f"the fast path after switching back: {a!r} != {f!r}")
    check(len(fast) == len(slow) == len(again), "every pass made every call")

    # The cases are what they say: the errors that leave the fast path are there.
    said = dict((case[0], case[1]) for case in fast)
    def raised(case, words):
        result = said[case]
        check(result[0] == "raised" and all(w in result[2] for w in words),
              f"{case}: {result!r} lacks {words}")
    for dt in NUMBERS:
        check(said[f"{dt} 1-d: put src"] == ("ok", None), f"{dt}: a plain put")
        check(said[f"{dt} 0-d: put src"] == ("ok", None), f"{dt}: a 0-d put")
        check(said[f"{dt} fortran: get dst"] == ("ok", None), f"{dt}: a Fortran-order get")
        raised(f"{dt} symmetric transposed: put dst",  # a C-ordered src would land transposed
               [f"[pe {me}] put: dst is in Fortran order (column-major) but src is in C order"])
        raised(f"{dt} every other: put src", [f"[pe {me}] put: src is not contiguous"])
        raised(f"{dt} columns: get dst", [f"[pe {me}] get: dst is not contiguous"])
        raised(f"{dt} read-only: get dst", ["get: dst (numpy.ndarray) is read-only"])
        raised(f"{dt} symmetric read-only: put dst", ["put: dst (numpy.ndarray) is read-only"])
        raised(f"{dt} symmetric every other: put dst", ["put: dst is not contiguous"])
        raised(f"{dt} 1-d: put dst (not symmetric)", ["put: dst", "symmetric heap"])
        if np.dtype(dt).itemsize > 1:
            raised(f"{dt} swapped: put src", ["put: src has byte order"])
        if dt not in ("float32", "int8", "uint8"):
            raised(f"{dt} 1-d: put into float32/int32", ["put: dst is float32 but src is"])
    raised("object: put src", ["put: src has element format 'O'"])
    raised("freed view: put dst", ["put: dst refers to symmetric memory that was freed"])
    raised("freed view: get src", ["get: src refers to symmetric memory that was freed"])
    raised("freed view: extent", ["probe: x refers to symmetric memory that was freed"])
    ok()
    nvshmem.finalize()
"""


@not_on_gpu("NumPy arrays over the heap: the gpu backend's are CuPy's")
@pytest.mark.parametrize("n", [1, 2])
def test_the_fast_path_gives_what_the_buffer_protocol_gives(run_pes, n):
    assert_all_ok(run_pes(n, PASSES, timeout=120), n)


# A NumPy the probe cannot read (here: numpy.ndarray named as some other
# type, whose structs are not NumPy's) leaves every array to the buffer
# protocol, and the switch cannot turn the fast path on.
NOT_NUMPY = """
    from symmem import _symmem, _resolver

    check(_symmem._ndarray_fast(), "NumPy's arrays are read from its structs")
    _symmem._set_resolver(_resolver.resolve, _resolver.owner_of, bytearray)
    check(not _symmem._ndarray_fast(), "a type that is no ndarray fails the probe")
    check(_symmem._ndarray_fast(True) is False, "and the switch cannot force it")
    nvshmem.init()
    a = nvshmem.array((4,), dtype="int32")
    nvshmem.put(a, np.arange(4, dtype="int32"), nvshmem.my_pe())
    check_equal(a, np.arange(4), "a put through the buffer protocol")
    expect_raises(nvshmem.NvshmemInvalid, ["put: src is not contiguous"], nvshmem.put, a,
                  np.arange(8, dtype="int32")[::2], 0)
    _symmem._set_resolver(_resolver.resolve, _resolver.owner_of, np.ndarray)
    check(_symmem._ndarray_fast(), "named again, NumPy's arrays pass the probe")
    nvshmem.free_array(a)
    ok()
    nvshmem.finalize()
"""


@not_on_gpu("NumPy arrays over the heap: the gpu backend's are CuPy's")
def test_a_type_the_probe_cannot_read_takes_the_buffer_protocol(run_pes):
    assert_all_ok(run_pes(1, NOT_NUMPY), 1)
