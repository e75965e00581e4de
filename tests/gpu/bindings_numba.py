"""symmem.bindings.device.numba (NVSHMEM4Py's raw bindings) in @numba.cuda.jit
kernels, or symmem.bindings.device.numba_cuda_mlir in numba-cuda-mlir ones
(the kernels are the same Python), on 2+ PEs of the gpu backend: a sample
of every family, each PE checking what it received from the previous PE
(or got from the next):
- my_pe, n_pes, team_my_pe, team_n_pes, team_translate_pe, info_get_*,
  vendor_get_version_info, region_is_active;
- p and g of int, double, half and bfloat16 (by address), the generic g;
- put and get at thread, warp and block scope, blocking and _nbi, putmem,
  get64, put128 and the generic put_nbi (+ quiet);
- put_signal (SET and ADD, each scope, putmem_signal, the generic
  put_signal_nbi of NVSHMEM4Py's device_custom_kernel.py), then
  signal_wait_until; signal_op, signal_fetch, signal_counted_reset;
- iput and iget; wait_until, test, wait_until_all/any/some(_vector) and
  test_all/any/some(_vector), with a status mask; fence before a flag;
- the atomics on the next PE's words (int, uint64, float, double, half),
  the generic atomic_add, atomicAdd_system;
- barrier_all, sync_all, barrier, team_sync at each scope around the
  collectives: reduce (sum, max, min), reducescatter, alltoall, fcollect,
  broadcast, their *mem forms and the generic sum_reduce.

    python -m symmem.run -n 2 tests/gpu/bindings_numba.py numba|mlir
    python tests/gpu/bindings_numba.py numba|mlir compile   (no GPU: compiles every kernel)"""

import os
import sys

DSL = sys.argv[1] if len(sys.argv) > 1 else "numba"
COMPILE_ONLY = "compile" in sys.argv[2:]
N, K, THREADS = 1000, 64, 128  # elements of the copies, per member of the collectives
SET, ADD = 9, 10  # SignalOp's
EQ, NE, GT, LE, LT, GE = range(6)  # ComparisonType's

if COMPILE_ONLY:  # no GPU, no init: any device state address compiles
    import types as _simple

    if DSL == "mlir":
        import numba_cuda_mlir.tools as _tools

        _tools._cached_cc = (9, 0)
        from symmem.device.numba_cuda_mlir import _library as _state
    else:
        import numba.cuda.dispatcher as _dispatcher

        _dispatcher.get_current_device = lambda: _simple.SimpleNamespace(compute_capability=(9, 0))
        from symmem.device.numba import _cuda as _state
    _state.state_address = lambda call: 0x7F0000001000

if DSL == "mlir":
    from numba_cuda_mlir import cuda

    import symmem.bindings.device.numba_cuda_mlir as nvb
else:
    import symmem.device.numba  # noqa: F401  (before numba.cuda: np.row_stack on NumPy 2.5)
    from numba import cuda

    import symmem.bindings.device.numba as nvb


@cuda.jit
def queries(out, version, name):
    if cuda.threadIdx.x == 0:
        out[0] = nvb.my_pe()
        out[1] = nvb.n_pes()
        out[2] = nvb.team_my_pe(0)
        out[3] = nvb.team_n_pes(0)
        out[4] = nvb.team_translate_pe(0, nvb.n_pes() - 1, 0)
        out[5] = nvb.region_is_active(0, out[6:])
        nvb.info_get_version(version[0:], version[1:])
        nvb.vendor_get_version_info(version[2:], version[3:], version[4:])
        nvb.info_get_name(name)


@cuda.jit
def p_g(pe, i32, f64, f16, bf16_address, i64_src, got):
    if cuda.threadIdx.x == 0:
        me = nvb.my_pe()
        nvb.int_p(i32, me * 10 + 1, pe)
        nvb.double_p(f64, me + 0.5, pe)
        nvb.half_p(f16, me + 0.25, pe)
        nvb.bfloat16_p(bf16_address, me + 1.5, pe)
        got[0] = nvb.long_g(i64_src, pe)
        got[1] = nvb.g(i64_src[1:], pe)
        nvb.quiet()


@cuda.jit
def copies(which, pe, dst, src, got, fdst, fsrc, n):
    """which: 0-5 the puts (thread, warp, block; each blocking, then _nbi),
    6-11 the gets the same way, 12 putmem, 13 get64, 14 put128, 15 put_nbi."""
    t = cuda.threadIdx.x
    if which == 0 and t == 0:
        nvb.int_put(dst, src, n, pe)
    elif which == 1 and t == 0:
        nvb.int32_put_nbi(dst, src, n, pe)
    elif which == 2 and t < 32:
        nvb.int_put_warp(dst, src, n, pe)
    elif which == 3 and t < 32:
        nvb.int32_put_nbi_warp(dst, src, n, pe)
    elif which == 4:
        nvb.int_put_block(dst, src, n, pe)
    elif which == 5:
        nvb.int32_put_nbi_block(dst, src, n, pe)
    elif which == 6 and t == 0:
        nvb.float_get(fdst, fsrc, n, pe)
    elif which == 7 and t == 0:
        nvb.float_get_nbi(fdst, fsrc, n, pe)
    elif which == 8 and t < 32:
        nvb.float_get_warp(fdst, fsrc, n, pe)
    elif which == 9 and t < 32:
        nvb.float_get_nbi_warp(fdst, fsrc, n, pe)
    elif which == 10:
        nvb.float_get_block(fdst, fsrc, n, pe)
    elif which == 11:
        nvb.float_get_nbi_block(fdst, fsrc, n, pe)
    elif which == 12:
        nvb.putmem_block(dst, src, n * 4, pe)
    elif which == 13 and t < 32:
        nvb.get64_warp(got, src, n // 2, pe)
    elif which == 14 and t == 0:
        nvb.put128(dst, src, n // 4, pe)
    elif which == 15 and t == 0:
        nvb.put_nbi(dst, src, n, pe)
    nvb.quiet()


@cuda.jit
def signals(which, pe, dst, src, n, sig, got):
    """which: 0 put_signal SET, 1 put_signal_nbi_warp ADD, 2
    putmem_signal_block, 3 the generic put_signal_nbi (thread), 4
    signal_op and signal_fetch, 5 signal_counted_reset; each PE then waits
    for the previous PE's signal."""
    t = cuda.threadIdx.x
    if which == 0 and t == 0:
        nvb.int_put_signal(dst, src, n, sig, 5, SET, pe)
    elif which == 1 and t < 32:
        nvb.int32_put_signal_nbi_warp(dst, src, n, sig, 5, ADD, pe)
    elif which == 2:
        nvb.putmem_signal_block(dst, src, n * 4, sig, 5, SET, pe)
    elif which == 3 and t == 0:
        nvb.put_signal_nbi(dst, src, n, sig, 5, ADD, pe)
    elif which == 4 and t == 0:
        nvb.signal_op(sig, 5, SET, pe)
    if t == 0 and which < 5:
        got[0] = nvb.signal_wait_until(sig, GE, 5)
        got[1] = nvb.signal_fetch(sig)
    if t == 0 and which == 5:
        nvb.signal_counted_reset(sig)
        got[1] = nvb.signal_fetch(sig)


@cuda.jit
def strided(which, pe, dst, src, got, n):
    """which: 0 int_iput (into every 2nd element of dst), 1 iget32_warp
    (from every 3rd of src), 2 iput64_block (int32 pairs, from every 2nd)."""
    t = cuda.threadIdx.x
    if which == 0 and t == 0:
        nvb.int_iput(dst, src, 2, 1, n // 2, pe)
    elif which == 1 and t < 32:
        nvb.iget32_warp(got, src, 1, 3, n // 3, pe)
    elif which == 2:
        nvb.iput64_block(dst, src, 1, 2, n // 4, pe)
    nvb.quiet()


@cuda.jit
def waits(pe, flags, status, values, indices, got):
    """Every PE sets the next PE's 4 flags to prv + 1 ... prv + 4 after a
    fence; each then waits on and tests its own, in every form."""
    if cuda.threadIdx.x != 0:
        return
    me = nvb.my_pe()
    for i in range(4):
        nvb.int_p(flags[i:], me + 1 + i, pe)
        nvb.fence()
    prv = (me - 1 + nvb.n_pes()) % nvb.n_pes()
    nvb.int_wait_until(flags, EQ, prv + 1)
    nvb.int_wait_until_all(flags, 4, 0, GT, 0)
    got[0] = nvb.int_test(flags[1:], EQ, prv + 2)
    got[1] = nvb.int_test_all(flags, 4, 0, GE, prv + 1)
    got[2] = nvb.int_test_any(flags, 4, status, GE, prv + 1)  # status leaves out flags[0]
    got[3] = nvb.int_test_some(flags, 4, indices, 0, GT, prv + 2)
    got[4] = nvb.int_wait_until_any(flags, 4, status, EQ, prv + 3)
    got[5] = nvb.int32_wait_until_some_vector(flags, 4, indices[4:], 0, EQ, values)
    got[6] = nvb.int_test_any_vector(flags, 4, 0, NE, values)  # every flag equals: none
    got[7] = nvb.test(flags[3:], EQ, prv + 4)
    nvb.int_wait_until_any_vector(flags, 4, status, EQ, values)
    nvb.int_test_all_vector(flags, 4, status, EQ, values)
    nvb.int_wait_until_all_vector(flags, 4, 0, LE, values)
    nvb.int_wait_until_some(flags, 4, indices[8:], 0, GE, 1)
    got[8] = nvb.int_test_some_vector(flags, 4, indices[12:], status, LT, values)


@cuda.jit
def atomics(pe, w32, w64, wf, wd, wh, local_h, got, gotf):
    if cuda.threadIdx.x != 0:
        return
    got[0] = nvb.int_atomic_fetch_add(w32, 3, pe)  # 5 -> 8
    nvb.int_atomic_add(w32, 2, pe)  # 10
    nvb.int_atomic_inc(w32, pe)  # 11
    got[1] = nvb.int_atomic_fetch_inc(w32, pe)  # 11 -> 12
    got[2] = nvb.int_atomic_compare_swap(w32, 12, 40, pe)  # 12 -> 40
    got[3] = nvb.int_atomic_swap(w32, 41, pe)  # 40 -> 41
    got[4] = nvb.int_atomic_fetch(w32, pe)  # 41
    nvb.int_atomic_set(w32, 6, pe)  # 6
    got[5] = nvb.uint64_atomic_fetch_and(w64, 0x3C, pe)  # 0xF0 -> 0x30
    nvb.uint64_atomic_or(w64, 0x01, pe)  # 0x31
    got[6] = nvb.ulonglong_atomic_fetch_xor(w64, 0xFF, pe)  # 0x31 -> 0xCE
    nvb.atomic_add(w64, 2, pe)  # the generic form: 0xD0
    gotf[0] = nvb.float_atomic_fetch_add(wf, 1.5, pe)  # 2.0 -> 3.5
    nvb.double_atomic_add(wd, 0.25, pe)  # 1.0 -> 1.25
    gotf[1] = nvb.double_atomic_swap(wd, 9.0, pe)  # 1.25 -> 9.0
    nvb.half_atomic_add(wh, 1.0, pe)  # 0.5 -> 1.5
    gotf[2] = nvb.atomicAdd_system(local_h, 2.0)  # this PE's own: 0.25 -> 2.25
    nvb.quiet()


@cuda.jit
def collectives(which, dst, src, fdst, fsrc, ddst, dsrc, n, k):
    """which: 0 int sum reduce (block), 1 float max (warp), 2 int32 min
    (thread), 3 int32 xor reducescatter, 4 alltoall (block), 5
    double fcollect (warp), 6 broadcast from member 1 (thread), 7
    fcollectmem, 8 alltoallmem (warp), 9 broadcastmem (block), 10 the
    generic sum_reduce; with the syncs and barriers at each scope."""
    t = cuda.threadIdx.x
    nvb.barrier_all_block()
    if t < 32:
        nvb.sync_all_warp()
    if t == 0:
        nvb.team_sync(0)
    if which == 0:
        nvb.int_sum_reduce_block(0, dst, src, n)
    elif which == 1 and t < 32:
        nvb.float_max_reduce_warp(0, fdst, fsrc, n)
    elif which == 2 and t == 0:
        nvb.int32_min_reduce(0, dst, src, n)
    elif which == 3 and t == 0:
        nvb.int32_xor_reducescatter(0, dst, src, k)
    elif which == 4:
        nvb.int_alltoall_block(0, dst, src, k)
    elif which == 5 and t < 32:
        nvb.double_fcollect_warp(0, ddst, dsrc, k)
    elif which == 6 and t == 0:
        nvb.int_broadcast(0, dst, src, n, 1)
    elif which == 7 and t == 0:
        nvb.fcollectmem(0, dst, src, k * 4)
    elif which == 8 and t < 32:
        nvb.alltoallmem_warp(0, dst, src, k * 4)
    elif which == 9:
        nvb.broadcastmem_block(0, dst, src, n * 4, 0)
    elif which == 10:
        nvb.sum_reduce_block(0, fdst, fsrc, n)
    if t < 32:
        nvb.barrier_warp(0)
    nvb.team_sync_block(0)
    if t == 0:
        nvb.barrier(0)
        nvb.sync_all()
        nvb.barrier_all()
    nvb.sync_all_block()


def select(gpu):
    """Makes GPU gpu this process's, before init."""
    if DSL == "mlir":
        from cuda.core import Device

        Device(gpu).set_current()
    else:
        cuda.select_device(gpu)


def launch(name, *args):
    globals()[name][1, THREADS](*args)


def finish():
    pass


def compile_all():
    """Every kernel compiled for sm_90 with the types the run gives them."""
    from bindings_gpu_run import argument_types

    kinds = argument_types(DSL)
    for kernel, args in kinds.items():
        function = globals()[kernel]
        if DSL == "mlir":
            cuda.compile(
                function.py_func, args, device=False, abi="numba", output="ltoir", cc=(9, 0)
            )
        else:
            cuda.compile_ptx(function.py_func, args, cc=(9, 0))
    print(f"compiled the {len(kinds)} kernels of tests/gpu/bindings_numba.py for {DSL}")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if COMPILE_ONLY:
        compile_all()
    else:
        from bindings_gpu_run import run

        run(sys.modules[__name__], DSL)
