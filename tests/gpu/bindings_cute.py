"""symmem.bindings.device.cute (NVSHMEM4Py's raw CuTe bindings) in CuTe DSL
kernels on 2+ PEs of the gpu backend, on the engine SYMMEM_CUTE_ENGINE
names (symmem or nvshmem): the cases of tests/gpu/bindings_numba.py (a
sample of every family; the same kernels, written for CuTe: pointers are
a tensor's .iterator, or .iterator + i for element i), checked on every PE
by bindings_gpu_run.py. NVSHMEM's bitcode lacks a few (its atomicAdd_system
is CUDA's inline one): on that engine those calls are left out, as the
trace refuses them naming the missing function; serves() says which the
kernels call, and the checks skip the others.

    SYMMEM_CUTE_ENGINE=symmem python -m symmem.run -n 2 tests/gpu/bindings_cute.py
    SYMMEM_CUTE_ENGINE=symmem python tests/gpu/bindings_cute.py compile   (no GPU)
    SYMMEM_CUTE_ENGINE=nvshmem CUTE_DSL_DRYRUN=1 python tests/gpu/bindings_cute.py compile BITCODE"""

import os
import sys

import cutlass
import cutlass.cute as cute

COMPILE_ONLY = "compile" in sys.argv[1:]
if COMPILE_ONLY:
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
    from symmem.device.cute import _engine

    _engine._engine = os.environ.get("SYMMEM_CUTE_ENGINE", "symmem")
    _engine.state = lambda call: 0x7F0000001000  # no init here: any address compiles
    if _engine._engine == "nvshmem":  # NVSHMEM's bitcode: the argument after "compile"
        import symmem._device_host as _host

        _host.find_device_bitcode_library = lambda *a, **k: sys.argv[sys.argv.index("compile") + 1]

import symmem.bindings.device.cute as nvb  # noqa: E402

THREADS = 128
SET, ADD = 9, 10  # SignalOp's
EQ, NE, GT, LE, LT, GE = range(6)  # ComparisonType's
Int, Tensor = cutlass.Int64, cute.Tensor


def at(tensor, i):
    """A pointer to element i of tensor."""
    return tensor.iterator + i


def serves(name):
    """Whether this process's engine serves name: symmem's all but what the
    table refuses; NVSHMEM's what its bitcode defines (version by version)."""
    call = nvb.FUNCTIONS[name].call
    if nvb.engine() in (None, "symmem"):
        return call.why_not("symmem") is None
    from symmem.device import _nvvm_bitcode
    from symmem.device.cute import _externs

    return call.symbol in _nvvm_bitcode.defined_functions(_externs.NVSHMEM.path)


@cute.kernel
def queries(out: Tensor, version: Tensor, name: Tensor):
    t, _, _ = cute.arch.thread_idx()
    if t == 0:
        out[0] = nvb.my_pe()
        out[1] = nvb.n_pes()
        out[2] = nvb.team_my_pe(0)
        out[3] = nvb.team_n_pes(0)
        out[4] = nvb.team_translate_pe(0, nvb.n_pes() - 1, 0)
        if cutlass.const_expr(serves("region_is_active")):
            out[5] = nvb.region_is_active(0, at(out, 6))
        if cutlass.const_expr(serves("info_get_name")):
            nvb.info_get_version(at(version, 0), at(version, 1))
            nvb.vendor_get_version_info(at(version, 2), at(version, 3), at(version, 4))
            nvb.info_get_name(name.iterator)


@cute.kernel
def p_g(
    pe: Int, i32: Tensor, f64: Tensor, f16: Tensor, bf16_address: Int, i64: Tensor, got: Tensor
):
    t, _, _ = cute.arch.thread_idx()
    if t == 0:
        me = nvb.my_pe()
        nvb.int_p(i32.iterator, me * 10 + 1, pe)
        nvb.double_p(f64.iterator, cutlass.Float64(me) + 0.5, pe)
        nvb.half_p(f16.iterator, cutlass.Float32(me) + 0.25, pe)
        nvb.bfloat16_p(bf16_address, cutlass.Float32(me) + 1.5, pe)
        got[0] = nvb.long_g(i64.iterator, pe)
        got[1] = nvb.g(at(i64, 1), pe)
        nvb.quiet()


@cute.kernel
def copies(
    which: Int, pe: Int, dst: Tensor, src: Tensor, got: Tensor, fdst: Tensor, fsrc: Tensor, n: Int
):
    t, _, _ = cute.arch.thread_idx()
    d, s, fd, fs = dst.iterator, src.iterator, fdst.iterator, fsrc.iterator
    if t == 0:
        if which == 0:
            nvb.int_put(d, s, n, pe)
        if which == 1:
            nvb.int32_put_nbi(d, s, n, pe)
        if which == 6:
            nvb.float_get(fd, fs, n, pe)
        if which == 7:
            nvb.float_get_nbi(fd, fs, n, pe)
        if which == 14:
            nvb.put128(d, s, n // 4, pe)
        if which == 15:
            nvb.put_nbi(d, s, n, pe)
    if t < 32:
        if which == 2:
            nvb.int_put_warp(d, s, n, pe)
        if which == 3:
            nvb.int32_put_nbi_warp(d, s, n, pe)
        if which == 8:
            nvb.float_get_warp(fd, fs, n, pe)
        if which == 9:
            nvb.float_get_nbi_warp(fd, fs, n, pe)
        if which == 13:
            nvb.get64_warp(got.iterator, s, n // 2, pe)
    if which == 4:
        nvb.int_put_block(d, s, n, pe)
    if which == 5:
        nvb.int32_put_nbi_block(d, s, n, pe)
    if which == 10:
        nvb.float_get_block(fd, fs, n, pe)
    if which == 11:
        nvb.float_get_nbi_block(fd, fs, n, pe)
    if which == 12:
        nvb.putmem_block(d, s, n * 4, pe)
    nvb.quiet()


@cute.kernel
def signals(which: Int, pe: Int, dst: Tensor, src: Tensor, n: Int, sig: Tensor, got: Tensor):
    t, _, _ = cute.arch.thread_idx()
    d, s, g = dst.iterator, src.iterator, sig.iterator
    if t == 0:
        if which == 0:
            nvb.int_put_signal(d, s, n, g, 5, SET, pe)
        if which == 3:
            nvb.put_signal_nbi(d, s, n, g, 5, ADD, pe)
        if which == 4:
            nvb.signal_op(g, 5, SET, pe)
    if t < 32:
        if which == 1:
            nvb.int32_put_signal_nbi_warp(d, s, n, g, 5, ADD, pe)
    if which == 2:
        nvb.putmem_signal_block(d, s, n * 4, g, 5, SET, pe)
    if t == 0:
        if which < 5:
            got[0] = nvb.signal_wait_until(g, GE, 5)
            got[1] = nvb.signal_fetch(g)
        if cutlass.const_expr(serves("signal_counted_reset")):
            if which == 5:
                nvb.signal_counted_reset(g)
                got[1] = nvb.signal_fetch(g)


@cute.kernel
def strided(which: Int, pe: Int, dst: Tensor, src: Tensor, got: Tensor, n: Int):
    t, _, _ = cute.arch.thread_idx()
    if t == 0:
        if which == 0:
            nvb.int_iput(dst.iterator, src.iterator, 2, 1, n // 2, pe)
    if t < 32:
        if which == 1:
            nvb.iget32_warp(got.iterator, src.iterator, 1, 3, n // 3, pe)
    if which == 2:
        nvb.iput64_block(dst.iterator, src.iterator, 1, 2, n // 4, pe)
    nvb.quiet()


@cute.kernel
def waits(pe: Int, flags: Tensor, status: Tensor, values: Tensor, indices: Tensor, got: Tensor):
    t, _, _ = cute.arch.thread_idx()
    f, st, v, ix = flags.iterator, status.iterator, values.iterator, indices
    if t == 0:
        me, npes = nvb.my_pe(), nvb.n_pes()
        for i in cutlass.range_constexpr(4):
            nvb.int_p(at(flags, i), me + 1 + i, pe)
            nvb.fence()
        prv = (me - 1 + npes) % npes
        nvb.int_wait_until(f, EQ, prv + 1)
        nvb.int_wait_until_all(f, 4, 0, GT, 0)
        got[0] = cutlass.Uint64(nvb.int_test(at(flags, 1), EQ, prv + 2))
        got[1] = cutlass.Uint64(nvb.int_test_all(f, 4, 0, GE, prv + 1))
        got[2] = nvb.int_test_any(f, 4, st, GE, prv + 1)
        got[3] = nvb.int_test_some(f, 4, ix.iterator, 0, GT, prv + 2)
        got[4] = nvb.int_wait_until_any(f, 4, st, EQ, prv + 3)
        got[5] = nvb.int32_wait_until_some_vector(f, 4, at(ix, 4), 0, EQ, v)
        got[6] = nvb.int_test_any_vector(f, 4, 0, NE, v)
        got[7] = cutlass.Uint64(nvb.test(at(flags, 3), EQ, prv + 4))
        nvb.int_wait_until_any_vector(f, 4, st, EQ, v)
        nvb.int_test_all_vector(f, 4, st, EQ, v)
        nvb.int_wait_until_all_vector(f, 4, 0, LE, v)
        nvb.int_wait_until_some(f, 4, at(ix, 8), 0, GE, 1)
        got[8] = nvb.int_test_some_vector(f, 4, at(ix, 12), st, LT, v)


@cute.kernel
def atomics(
    pe: Int,
    w32: Tensor,
    w64: Tensor,
    wf: Tensor,
    wd: Tensor,
    wh: Tensor,
    local_h: Tensor,
    got: Tensor,
    gotf: Tensor,
):
    t, _, _ = cute.arch.thread_idx()
    a, b = w32.iterator, w64.iterator
    if t == 0:
        got[0] = cutlass.Uint64(nvb.int_atomic_fetch_add(a, 3, pe))
        nvb.int_atomic_add(a, 2, pe)
        nvb.int_atomic_inc(a, pe)
        got[1] = cutlass.Uint64(nvb.int_atomic_fetch_inc(a, pe))
        got[2] = cutlass.Uint64(nvb.int_atomic_compare_swap(a, 12, 40, pe))
        got[3] = cutlass.Uint64(nvb.int_atomic_swap(a, 41, pe))
        got[4] = cutlass.Uint64(nvb.int_atomic_fetch(a, pe))
        nvb.int_atomic_set(a, 6, pe)
        got[5] = nvb.uint64_atomic_fetch_and(b, 0x3C, pe)
        nvb.uint64_atomic_or(b, 0x01, pe)
        got[6] = nvb.ulonglong_atomic_fetch_xor(b, 0xFF, pe)
        nvb.atomic_add(b, 2, pe)
        if cutlass.const_expr(serves("float_atomic_fetch_add")):  # NVSHMEM 3.4 has none
            gotf[0] = cutlass.Float64(nvb.float_atomic_fetch_add(wf.iterator, 1.5, pe))
        if cutlass.const_expr(serves("double_atomic_add")):
            nvb.double_atomic_add(wd.iterator, 0.25, pe)
        if cutlass.const_expr(serves("half_atomic_add")):
            nvb.half_atomic_add(wh.iterator, 1.0, pe)
        if cutlass.const_expr(serves("atomicAdd_system")):  # CUDA's, not in NVSHMEM's bitcode
            gotf[2] = cutlass.Float64(nvb.atomicAdd_system(local_h.iterator, 2.0))
        gotf[1] = nvb.double_atomic_swap(wd.iterator, 9.0, pe)
        nvb.quiet()


@cute.kernel
def collectives(
    which: Int,
    dst: Tensor,
    src: Tensor,
    fdst: Tensor,
    fsrc: Tensor,
    ddst: Tensor,
    dsrc: Tensor,
    n: Int,
    k: Int,
):
    t, _, _ = cute.arch.thread_idx()
    d, s = dst.iterator, src.iterator
    nvb.barrier_all_block()
    if t < 32:
        nvb.sync_all_warp()
    if t == 0:
        nvb.team_sync(0)
    if which == 0:
        nvb.int_sum_reduce_block(0, d, s, n)
    if which == 4:
        nvb.int_alltoall_block(0, d, s, k)
    if which == 9:
        nvb.broadcastmem_block(0, d, s, n * 4, 0)
    if which == 10:
        nvb.sum_reduce_block(0, fdst.iterator, fsrc.iterator, n)
    if t < 32:
        if which == 1:
            nvb.float_max_reduce_warp(0, fdst.iterator, fsrc.iterator, n)
        if which == 5:
            nvb.double_fcollect_warp(0, ddst.iterator, dsrc.iterator, k)
        if which == 8:
            nvb.alltoallmem_warp(0, d, s, k * 4)
    if t == 0:
        if which == 2:
            nvb.int32_min_reduce(0, d, s, n)
        if which == 3:
            nvb.int32_xor_reducescatter(0, d, s, k)
        if which == 6:
            nvb.int_broadcast(0, d, s, n, 1)
        if which == 7:
            nvb.fcollectmem(0, d, s, k * 4)
    if t < 32:
        nvb.barrier_warp(0)
    nvb.team_sync_block(0)
    if t == 0:
        nvb.barrier(0)
        nvb.sync_all()
        nvb.barrier_all()
    nvb.sync_all_block()


KERNELS = {
    k.__name__: k for k in (queries, p_g, copies, signals, strided, waits, atomics, collectives)
}


def _launcher(kernel):
    """A @cute.jit function that launches kernel (CuTe launches from jit functions)."""

    @cute.jit
    def launch(*args):
        kernel(*args).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))

    return launch


LAUNCHERS = {name: _launcher(kernel) for name, kernel in KERNELS.items()}
_compiled, _objects = {}, []


def _values(args):
    """CuPy arrays as CuTe tensors, ints as Int64 (a bfloat16 address too)."""
    from cutlass.cute.runtime import from_dlpack

    return [from_dlpack(a, assumed_align=8) if hasattr(a, "data") else Int(a) for a in args]


def select(gpu):
    from cuda.core import Device

    Device(gpu).set_current()


def launch(name, *args):
    import symmem.interop.cute as scute

    values = _values(args)
    if name not in _compiled:  # cute.compile and, for NVSHMEM's engine, library_init
        _compiled[name], kobj = scute.cute_compile_helper(LAUNCHERS[name], *values)
        _objects.append(kobj)
    _compiled[name](*values)


def finish():
    import symmem

    for kobj in _objects:
        symmem.library_finalize(kobj)


def compile_all():
    """Every kernel traced and compiled for sm_90a, on fake tensors."""
    from cutlass.cute.runtime import make_fake_compact_tensor

    from bindings_gpu_run import argument_dtypes

    types = {"int8": cutlass.Int8, "int32": cutlass.Int32, "int64": cutlass.Int64,
             "uint64": cutlass.Uint64, "float16": cutlass.Float16, "float32": cutlass.Float32,
             "float64": cutlass.Float64}  # fmt: skip
    for name, kinds in argument_dtypes().items():
        values = [
            Int(1) if kind == "int" else make_fake_compact_tensor(types[kind], (1000,))
            for kind in kinds
        ]
        cute.compile(LAUNCHERS[name], *values, options="--gpu-arch sm_90a")
    print(f"compiled the {len(KERNELS)} kernels of tests/gpu/bindings_cute.py")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if COMPILE_ONLY:
        compile_all()
    else:
        from bindings_gpu_run import run

        run(sys.modules[__name__], f"cute {os.environ.get('SYMMEM_CUTE_ENGINE', 'auto')}")
