"""The host side of tests/gpu/bindings_numba.py (numba and numba-cuda-mlir)
and bindings_cute.py (CuTe), whose kernels have the same names, arguments
and cases: the symmetric arrays, a launch of each kernel per case (the
program's launch(name, *args), on CuPy arrays and ints), and what every PE
must hold after it, checked on every PE (naming the PE, the case and the
first bad elements). argument_types gives bindings_numba.py's compile_all
the types a run passes."""

import numpy as np

N, K, THREADS = 1000, 64, 128


# each kernel's arguments: "int" a scalar, else an array of that dtype
ARGUMENTS = {
    "queries": ("int32", "int32", "int8"),
    "p_g": ("int", "int32", "float64", "float16", "int", "int64", "int64"),
    "copies": ("int", "int", "int32", "int32", "int32", "float32", "float32", "int"),
    "signals": ("int", "int", "int32", "int32", "int", "uint64", "uint64"),
    "strided": ("int", "int", "int32", "int32", "int32", "int"),
    "waits": ("int", "int32", "int32", "int32", "uint64", "uint64"),
    "atomics": ("int", "int32", "uint64", "float32", "float64", "float16", "float16",
                "uint64", "float64"),
    "collectives": ("int", "int32", "int32", "float32", "float32", "float64", "float64",
                    "int", "int"),
}  # fmt: skip


def argument_dtypes():
    return ARGUMENTS


def argument_types(dsl):
    """{kernel: its argument types}, as numba or numba-cuda-mlir types a run's
    arrays and ints."""
    if dsl == "mlir":
        from numba_cuda_mlir import types
    else:
        from numba import types

    def kind(name):
        return types.int64 if name == "int" else types.Array(getattr(types, name), 1, "C")

    return {kernel: tuple(map(kind, names)) for kernel, names in ARGUMENTS.items()}


def pattern(pe, n=N, dtype="int32"):
    """PE pe's source values."""
    if dtype.startswith("float"):
        return (pe + np.arange(n) * 0.5).astype(dtype)
    return (pe * 1000 + np.arange(n)).astype(dtype)


def _numbers(version):
    return [int(part) for part in str(version).split(".")[:3] if part.isdigit()] + [0, 0, 0]


def run(k, dsl):
    """Every case on this PE: k is the kernels' program (its select(gpu),
    launch(name, *args), finish(), and serves(name) where its engine may
    lack a call: the kernels leave those out, and so do the checks)."""
    import cupy as cp

    import symmem as nvshmem
    from symmem import _symmem

    k.select(_symmem.launcher()["local_rank"] % cp.cuda.runtime.getDeviceCount())
    nvshmem.init()
    serves = getattr(k, "serves", lambda name: True)
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    nxt, prv = (me + 1) % n, (me - 1) % n
    assert getattr(k.nvb, "GPU_UNAVAILABLE", None) is None, k.nvb.GPU_UNAVAILABLE
    made = []

    def sym(shape, dtype, value=0):
        a = nvshmem.array(shape, dtype=dtype)
        a[...] = cp.asarray(value, dtype=a.dtype)  # CuPy takes no NumPy array implicitly
        made.append(a)
        return a

    def sync():
        cp.cuda.Device().synchronize()
        nvshmem.barrier_all()

    def check(what, got, want):
        got, want = cp.asnumpy(got).ravel(), np.asarray(want).ravel()
        if got.shape != want.shape or not np.array_equal(got, want):
            bad = np.flatnonzero(got[: want.size] != want[: got.size])
            raise AssertionError(
                f"PE {me} {dsl} {what}: first bad elements {bad[:5]}: got "
                f"{got[bad[:5]]}, want {want[bad[:5]]}"
            )

    # ---- queries ----
    out, version, name = cp.zeros(8, "int32"), cp.zeros(5, "int32"), cp.zeros(256, "int8")
    k.launch("queries", out, version, name)
    sync()
    check("queries", out[:5], [me, n, me, n, n - 1])
    if serves("region_is_active"):
        check("region_is_active", out[5:7], [0, 0])
    if serves("info_get_name"):
        spec, ours = _numbers(_symmem.OPENSHMEM_SPEC_VERSION), _numbers(_symmem.VERSION)
        check("info_get_version, vendor_get_version_info", version, spec[:2] + ours[:3])
        text = bytes(cp.asnumpy(name).view(np.uint8)).split(b"\0")[0]
        assert text == nvshmem.get_name().encode(), (me, text)

    # ---- p and g ----
    i32, f64, f16 = sym((4,), "int32"), sym((4,), "float64"), sym((4,), "float16")
    bf16, i64 = sym((4,), "uint16"), sym((4,), "int64", me * 100 + np.arange(4))
    got = cp.zeros(2, "int64")
    sync()
    k.launch("p_g", nxt, i32, f64, f16, bf16.data.ptr, i64, got)
    sync()
    check("int_p", i32[:1], [prv * 10 + 1])
    check("double_p", f64[:1], [prv + 0.5])
    check("half_p", f16[:1], np.array([prv + 0.25], "float16"))
    check("bfloat16_p", bf16[:1], [np.array([prv + 1.5], "float32").view("uint32")[0] >> 16])
    check("long_g, g", got, [nxt * 100, nxt * 100 + 1])

    # ---- put and get, each scope, blocking and _nbi ----
    dst, src = sym((N,), "int32"), sym((N,), "int32", pattern(me))
    fsrc = sym((N,), "float32", pattern(me, dtype="float32"))
    got, fdst = cp.zeros(N, "int32"), cp.zeros(N, "float32")
    for which in range(16):
        dst[:], got[:], fdst[:] = 0, 0, 0
        sync()
        k.launch("copies", which, nxt, dst, src, got, fdst, fsrc, N)
        sync()
        if 6 <= which <= 11:
            check(f"copies {which} (get)", fdst, pattern(nxt, dtype="float32"))
        elif which == 13:
            check("get64_warp", got, pattern(nxt))
        else:
            check(f"copies {which} (put)", dst, pattern(prv))

    # ---- signals ----
    sig, got = sym((1,), "uint64"), cp.zeros(2, "uint64")
    for which in range(6 if serves("signal_counted_reset") else 5):
        dst[:], sig[:], got[:] = 0, 7 if which == 5 else 0, 0
        sync()
        k.launch("signals", which, nxt, dst, src, N, sig, got)
        sync()
        if which < 4:
            check(f"signals {which}: data", dst, pattern(prv))
        check(f"signals {which}: values", got, [0, 0] if which == 5 else [5, 5])

    # ---- strided ----
    for which in range(3):
        dst[:], got32 = 0, cp.zeros(N, "int32")
        sync()
        k.launch("strided", which, nxt, dst, src, got32, N)
        sync()
        if which == 0:
            want = np.zeros(N, "int32")
            want[0:N:2] = pattern(prv)[: N // 2]
            check("int_iput", dst, want)
        elif which == 1:
            check("iget32_warp", got32[: N // 3], pattern(nxt)[0::3][: N // 3])
        else:
            want = np.zeros(N, "int32")
            want.view("int64")[: N // 4] = pattern(prv).view("int64")[0::2][: N // 4]
            check("iput64_block", dst, want)

    # ---- waits and tests ----
    flags = sym((4,), "int32")
    status = cp.asarray(np.array([1, 0, 0, 0], "int32"))
    values = cp.asarray(np.arange(prv + 1, prv + 5, dtype="int32"))
    indices, got = cp.zeros(16, "uint64"), cp.zeros(9, "uint64")
    sync()
    k.launch("waits", nxt, flags, status, values, indices, got)
    sync()
    check("waits", got, [1, 1, 1, 2, 2, 4, 2**64 - 1, 1, 0])
    check("wait and test indices", indices, [2, 3, 0, 0, 0, 1, 2, 3, 0, 1, 2, 3, 0, 0, 0, 0])
    check("flags", flags, np.arange(prv + 1, prv + 5))

    # ---- atomics ----
    w32, w64, wf = sym((1,), "int32", 5), sym((1,), "uint64", 0xF0), sym((1,), "float32", 2.0)
    wd, wh = sym((1,), "float64", 1.0), sym((1,), "float16", 0.5)
    local_h, got, gotf = cp.full(1, 0.25, "float16"), cp.zeros(8, "uint64"), cp.zeros(3)
    sync()
    k.launch("atomics", nxt, w32, w64, wf, wd, wh, local_h, got, gotf)
    sync()
    check("atomics' old values", got[:7], [5, 11, 12, 40, 41, 0xF0, 0x31])
    check("atomic words", [int(w32[0]), int(w64[0])], [6, 0xD0])
    adds = {
        c: serves(c) for c in ("float_atomic_fetch_add", "double_atomic_add", "half_atomic_add")
    }
    check("double_atomic_swap", gotf[1:2], [1.25 if adds["double_atomic_add"] else 1.0])
    check("double word", wd, [9.0])
    if adds["float_atomic_fetch_add"]:
        check("float_atomic_fetch_add", [float(gotf[0]), float(wf[0])], [2.0, 3.5])
    if adds["half_atomic_add"]:
        check("half_atomic_add", wh, np.array([1.5], "float16"))
    if serves("atomicAdd_system"):
        check("atomicAdd_system", [float(gotf[2]), float(local_h[0])], [0.25, 2.25])

    # ---- collectives ----
    fdst, ddst = sym((N,), "float32"), sym((N,), "float64")
    dsrc = sym((N,), "float64", pattern(me, dtype="float64"))
    every = [pattern(pe) for pe in range(n)]
    fevery = [pattern(pe, dtype="float32") for pe in range(n)]
    block = np.concatenate([e[me * K : (me + 1) * K] for e in every])
    wants = {
        0: ("int_sum_reduce_block", lambda: sum(e.astype("int64") for e in every)),
        1: ("float_max_reduce_warp", lambda: np.max(fevery, axis=0)),
        2: ("int32_min_reduce", lambda: np.min(every, axis=0)),
        3: ("int32_xor_reducescatter", lambda: np.bitwise_xor.reduce([e[me * K : me * K + K] for e in every])),
        4: ("int_alltoall_block", lambda: block),
        5: ("double_fcollect_warp", lambda: np.concatenate([pattern(pe, K, "float64") for pe in range(n)])),
        6: ("int_broadcast", lambda: every[1]),
        7: ("fcollectmem", lambda: np.concatenate([e[:K] for e in every])),
        8: ("alltoallmem_warp", lambda: block),
        9: ("broadcastmem_block", lambda: every[0]),
        10: ("sum_reduce_block", lambda: np.sum(fevery, axis=0)),
    }  # fmt: skip
    for which, (what, want) in wants.items():
        dst[:], fdst[:], ddst[:] = 0, 0, 0
        sync()
        k.launch("collectives", which, dst, src, fdst, fsrc, ddst, dsrc, N, K)
        sync()
        target = {1: fdst, 10: fdst, 5: ddst}.get(which, dst)
        expected = np.asarray(want())
        check(what, target[: expected.size], expected.astype(target.dtype))

    k.finish()
    for a in made:
        nvshmem.free_array(a)
    nvshmem.finalize()
    print(f"PE {me} OK (bindings {dsl}: every family on {n} PEs)", flush=True)
