"""symmem.device.cute inside CuTe DSL kernels on 2+ GPUs, on the engine
SYMMEM_CUTE_ENGINE names (symmem or nvshmem). Every PE checks what it
received, for every dtype, every call and every scope:
- put, put_nbi, get, get_nbi (+ quiet) at thread, warp and block scope, of
  999 elements (not a multiple of any vector width);
- put_signal and put_signal_nbi to the next PE, then signal_wait on the own
  signal in the same kernel (SET, then ADD);
- p and g; wait_until on a flag p'd after a fence;
- reduce (sum, and min/max/and/or/xor by dtype), reducescatter, fcollect,
  alltoall, broadcast at each scope;
- the 14 atomics on the next PE's word (int32, int64, uint32, uint64; the
  float ones for float32 and float64), one thread;
- my_pe, n_pes, team_my_pe, team_n_pes, get_peer_tensor with a plain store,
  barrier_all/sync_all/barrier/sync at each scope, and the
  symmem.interop.cute tensor factories.
One kernel per dtype is compiled (cute_compile_helper: compile and
library_init) and launched once per (call, scope) with the call's number.
Mode "dead_peer" (argv[1]): PE 1 exits; PE 0's kernel waits for its signal
and must end, naming the call (symmem's engine).
Run: SYMMEM_CUTE_ENGINE=symmem python -m symmem.run -n 2 tests/gpu/cute_device.py all"""

import os
import sys
import time

import cupy as cp
import numpy as np
from cuda.core import Device

import symmem as nvshmem
from symmem import _symmem

Device(_symmem.launcher()["local_rank"] % cp.cuda.runtime.getDeviceCount()).set_current()

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

import symmem.device.cute as dev  # noqa: E402
from dsl_expect import (
    ATOMIC_AFTER,
    ATOMIC_INTS,
    ATOMIC_START,
    ATOMICS,
    FLOAT_ATOMICS,  # noqa: E402
    FLOATS,
    RETURNS_OLD,
    device,
    host,
    numpy_dtype,
    pattern,
    storage,
)
import dsl_expect  # noqa: E402
import symmem.interop.cute as scute  # noqa: E402
from symmem.device.cute import _values  # noqa: E402  (dtype names of CuTe's types)

N = 999
THREADS = 128
DTYPES = [
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]
# DSL_DTYPES=int8,float32 runs some (a GPU call holds 10 minutes; each dtype compiles a kernel)
DTYPES = [d for d in os.environ.get("DSL_DTYPES", ",".join(DTYPES)).split(",") if d]
COPIES = ["put", "put_nbi", "get", "get_nbi"]
SIGNALS = ["put_signal", "put_signal_nbi"]
COLLECTIVES = ["reduce", "reducescatter", "fcollect", "alltoall", "broadcast"]
SYNCS = ["barrier_all", "sync_all", "barrier", "sync"]
OPS = ["sum", "min", "max", "and", "or", "xor"]
# the kernel's calls, by number: (kind, name, argument)
CALLS = (
    [("copy", n, None) for n in COPIES]
    + [("signal", n, None) for n in SIGNALS]
    + [("collective", n, None) for n in COLLECTIVES if n != "reduce"]
    + [("reduce", "reduce", op) for op in OPS]
    + [("sync", n, None) for n in SYNCS]
    + [("point", "p_g", None), ("point", "flag", None), ("point", "queries", None)]
    + [("atomic", n, None) for n in ATOMICS]
)
SCOPES = ("", "_warp", "_block")
LANES = (1, 32, THREADS)  # the threads that make a call of each scope


def emit(number, scope, dst, src, got, part, sig, flag, word, pe):
    """Trace time: the call CALLS[number] at SCOPES[scope]. dst and part
    hold N elements, src and got N * npes."""
    kind, name, arg = CALLS[number]
    s = SCOPES[scope]
    world = dev.Teams.TEAM_WORLD
    if not runs(_values.dtype_name("emit", "dst", dst), kind, name, arg):
        return  # a call this dtype does not take: the host never asks for it
    if kind == "copy":
        if name.startswith("get"):
            getattr(dev, name + s)(got, src, pe)
        else:
            getattr(dev, name + s)(dst, src, pe)
        dev.quiet()
    elif kind == "signal":
        getattr(dev, name + s)(dst, src, sig, 5, dev.SIGNAL_SET, pe)
        dev.signal_wait(sig, dev.CMP_GE, 5)  # the previous PE may have added already
        getattr(dev, name + s)(dst, src, sig, 2, dev.SIGNAL_ADD, pe)
        dev.signal_wait(sig, dev.CMP_EQ, 7)
    elif name == "fcollect":
        getattr(dev, name + s)(world, got, part)
    elif name == "alltoall":
        getattr(dev, name + s)(world, got, src)
    elif name == "broadcast":
        getattr(dev, name + s)(world, got, src, ROOT)
    elif name == "reducescatter":
        getattr(dev, name + s)(world, dst, src, "sum")
    elif kind == "reduce":
        getattr(dev, "reduce" + s)(world, got, src, arg)
    elif kind == "sync":
        if name in ("barrier", "sync"):
            getattr(dev, name + s)(world)
        else:
            getattr(dev, name + s)()
    elif name == "p_g":
        dev.p(dst, dev.g(src, pe), pe)
        dev.quiet()
    elif name == "flag":
        dev.put(dst, src, pe)
        dev.fence()
        dev.p(flag, 9, pe)
        dev.wait_until(flag, dev.CMP_EQ, 9)
    elif name == "queries":
        peer = dev.get_peer_tensor(word, pe)
        peer[0] = cutlass.Int64(
            dev.my_pe() * 1000
            + dev.n_pes() * 100
            + dev.team_my_pe(world) * 10
            + dev.team_n_pes(world)
        )
        dev.quiet()
    else:
        args = {
            "atomic_fetch": (),
            "atomic_inc": (),
            "atomic_fetch_inc": (),
            "atomic_compare_swap": (5, 3),
        }.get(name, (3,))
        old = getattr(dev, name)(dst, *args, pe)
        if old is not None:
            got[0] = old
        dev.quiet()


@cute.kernel
def kernel(
    number: cutlass.Int32,
    scope: cutlass.Int32,
    pe: cutlass.Int32,
    dst: cute.Tensor,
    src: cute.Tensor,
    got: cute.Tensor,
    part: cute.Tensor,
    sig: cute.Tensor,
    flag: cute.Tensor,
    word: cute.Tensor,
):
    tid, _, _ = cute.arch.thread_idx()
    for k in cutlass.range_constexpr(len(CALLS)):
        for s in cutlass.range_constexpr(len(SCOPES)):
            if cutlass.const_expr(CALLS[k][0] not in ("point", "atomic") or s == 0):
                if number == k:
                    if scope == s:
                        if tid < LANES[s]:
                            emit(k, s, dst, src, got, part, sig, flag, word, pe)


@cute.jit
def launch(
    number: cutlass.Int32,
    scope: cutlass.Int32,
    pe: cutlass.Int32,
    dst: cute.Tensor,
    src: cute.Tensor,
    got: cute.Tensor,
    part: cute.Tensor,
    sig: cute.Tensor,
    flag: cute.Tensor,
    word: cute.Tensor,
):
    kernel(number, scope, pe, dst, src, got, part, sig, flag, word).launch(
        grid=(1, 1, 1), block=(THREADS, 1, 1)
    )


def runs(dtype, kind, name, arg):
    """Whether the call takes dtype (in the kernel's tracing and on the host)."""
    if kind == "reduce" and arg in ("and", "or", "xor"):
        return dtype not in FLOATS
    if kind != "atomic":
        return True
    if dtype in ATOMIC_INTS:
        return True
    if dtype not in ("float32", "float64") or name not in FLOAT_ATOMICS:
        return False
    return "add" not in name or dev.engine() != "nvshmem"  # NVSHMEM has no float add


def run_dtype(dtype):
    st = storage(dtype)
    arrays = {
        k: nvshmem.array((N * (npes if k in ("src", "got") else 1),), dtype=st)
        for k in ("dst", "src", "got", "part")
    }
    sig = nvshmem.array((1,), dtype="uint64")
    flag = nvshmem.array((1,), dtype="int32")
    word = nvshmem.array((1,), dtype="int64")
    tensors = [
        from_dlpack(a, assumed_align=16)
        for a in (arrays["dst"], arrays["src"], arrays["got"], arrays["part"])
    ]
    if dtype == "bfloat16":
        for t in tensors:
            t.element_type = cutlass.BFloat16
    tensors += [from_dlpack(a, assumed_align=8) for a in (sig, flag, word)]
    compiled, kobj = scute.cute_compile_helper(launch, 0, 0, nxt, *tensors)
    checked = 0
    for number, (kind, name, arg) in enumerate(CALLS):
        if not runs(dtype, kind, name, arg):
            continue
        for scope in range(3 if kind not in ("point", "atomic") else 1):
            arrays["src"][:] = device(pattern(me, dtype, N * npes), dtype)
            arrays["part"][:] = device(pattern(me, dtype, N), dtype)
            for k in ("dst", "got"):
                arrays[k][:] = 0
            if kind == "atomic":
                arrays["dst"][:1] = device(
                    np.array([ATOMIC_START]).astype(numpy_dtype(dtype)), dtype
                )
            sig[:] = 0
            flag[:] = 0
            word[:] = 0
            cp.cuda.Device().synchronize()
            nvshmem.barrier_all()
            compiled(number, scope, nxt, *tensors)
            cp.cuda.Device().synchronize()
            nvshmem.barrier_all()
            what = f"{dtype} {name}{SCOPES[scope]}{'(' + arg + ')' if arg else ''}"
            verify(what, kind, name, arg, dtype, arrays, word)
            checked += 1
    nvshmem.library_finalize(kobj)
    for a in (*arrays.values(), sig, flag, word):
        nvshmem.free_array(a)
    return checked


def check(what, got, want):
    dsl_expect.check(me, what, got, want)


def reduced(op, dtype, n):
    return dsl_expect.reduced(op, dtype, n, npes)


def verify(what, kind, name, arg, dtype, arrays, word):
    dst, got = host(arrays["dst"], dtype), host(arrays["got"], dtype)
    mine = pattern(me, dtype, N * npes)
    if kind == "copy" and name.startswith("put") or kind == "signal" or name == "flag":
        check(what, dst, pattern(prv, dtype, N))
    elif kind == "copy":
        check(what, got, pattern(nxt, dtype, N * npes))
    elif name == "fcollect":
        check(what, got, np.concatenate([pattern(p, dtype, N) for p in range(npes)]))
    elif name == "alltoall":
        want = np.concatenate(
            [pattern(p, dtype, N * npes)[me * N : (me + 1) * N] for p in range(npes)]
        )
        check(what, got, want)
    elif name == "broadcast":
        check(what, got, pattern(ROOT, dtype, N * npes))
    elif name == "reducescatter":
        check(what, dst, reduced("sum", dtype, N * npes)[me * N : (me + 1) * N])
    elif kind == "reduce":
        check(what, got, reduced(arg, dtype, N * npes))
    elif name == "p_g":
        check(what, dst[:1], mine[:1])
    elif name == "queries":
        check(what, cp.asnumpy(word), [prv * 1000 + npes * 100 + prv * 10 + npes])
    elif kind == "atomic":
        check(what, dst[:1], [ATOMIC_AFTER[name]])
        if name in RETURNS_OLD:
            check(what + " (old value)", got[:1], [ATOMIC_START])


def run_interop():
    t = scute.tensor((64,), dtype=cutlass.Float32)
    buf, nbytes, dtype = scute.tensor_get_buffer(t)
    assert nbytes == 256 and dtype == "float32", (nbytes, dtype)
    peer = scute.get_peer_tensor(t, nxt)
    assert peer is not None
    scute.free_tensor(t)


def dead_peer():
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    cp.cuda.Device().synchronize()
    nvshmem.barrier_all()
    if me == 1:
        os._exit(0)
    try:
        compiled, _ = scute.cute_compile_helper(wait_launch, from_dlpack(sig, assumed_align=8))
        compiled(from_dlpack(sig, assumed_align=8))
        cp.cuda.Device().synchronize()
    except Exception as error:  # the kernel trapped: the context is gone
        print(f"PE {me} OK (cute dead peer: {type(error).__name__})", flush=True)
        os._exit(0)
    raise AssertionError("the kernel waiting on the dead PE returned")


@cute.kernel
def wait_forever(sig: cute.Tensor):
    dev.signal_wait(sig, dev.CMP_EQ, 1)


@cute.jit
def wait_launch(sig: cute.Tensor):
    wait_forever(sig).launch(grid=(1, 1, 1), block=(1, 1, 1))


nvshmem.init()
me, npes = nvshmem.my_pe(), nvshmem.n_pes()
ROOT = min(1, npes - 1)  # the broadcasts' root: PE 1, or PE 0 alone
nxt, prv = (me + 1) % npes, (me - 1) % npes
if len(sys.argv) > 1 and sys.argv[1] == "dead_peer":
    dead_peer()
wanted = os.environ.get("SYMMEM_CUTE_ENGINE")
started, total = time.monotonic(), 0
for dtype in DTYPES:
    total += run_dtype(dtype)
    assert wanted in (None, "auto", dev.engine()), (wanted, dev.engine())
    print(f"PE {me}: {dtype} done ({time.monotonic() - started:.0f} s)", flush=True)
run_interop()
nvshmem.barrier_all()
print(f"PE {me} OK (cute {dev.engine()}: {total} launches checked on {npes} PEs)", flush=True)
nvshmem.finalize()
