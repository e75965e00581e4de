"""symmem.device.numba_cuda_mlir inside numba-cuda-mlir @cuda.jit kernels on
2+ GPUs. Every PE checks what it received, for every dtype numba-cuda-mlir
has (not bfloat16: numba-cuda-mlir 0.6 does not expose it), every call and
every scope:
- put, put_nbi, get, get_nbi (+ quiet) at thread, warp and block scope, of
  999 elements;
- put_signal / put_signal_nbi to the next PE, then signal_wait (SET, ADD);
- reduce (sum, min, max; and, or, xor for integers), reducescatter,
  fcollect, alltoall, broadcast at each scope; barrier_all, sync_all,
  barrier, sync;
- p and g; fence, a p'd flag and wait_until; my_pe, n_pes, team_my_pe,
  team_n_pes;
- the 14 atomics on the next PE's word (int32, int64, uint32, uint64; the
  float ones for float32 and float64).
A few kernels per dtype, each taking the call's number and scope (one
compile each per dtype), launched once per (call, scope).
Run: python -m symmem.run -n 2 tests/gpu/mlir_device.py"""

import os
import time

import cupy as cp
import numpy as np
from cuda.core import Device

import symmem as nvshmem
from symmem import _symmem

Device(_symmem.launcher()["local_rank"] % cp.cuda.runtime.getDeviceCount()).set_current()

from numba_cuda_mlir import cuda  # noqa: E402

import dsl_expect  # noqa: E402
import symmem.device.numba_cuda_mlir as dev  # noqa: E402
from dsl_expect import (
    ATOMIC_AFTER,
    ATOMIC_INTS,
    ATOMIC_START,
    ATOMICS,  # noqa: E402
    FLOAT_ATOMICS,
    FLOATS,
    RETURNS_OLD,
    device,
    host,
    numpy_dtype,
    pattern,
)

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
    "float32",
    "float64",
]
# DSL_DTYPES=int8,float32 runs some (a GPU call holds 10 minutes; each dtype compiles a kernel)
DTYPES = [d for d in os.environ.get("DSL_DTYPES", ",".join(DTYPES)).split(",") if d]
MOVES = [
    "put",
    "put_nbi",
    "get",
    "get_nbi",
    "put_signal",
    "put_signal_nbi",
    "reducescatter",
    "fcollect",
    "alltoall",
    "broadcast",
    "sum",
    "min",
    "max",
    "barrier_all",
    "sync_all",
    "barrier",
    "sync",
]
BITWISE = ["and", "or", "xor"]
POINTS = ["p_g", "flag", "queries"]
LANES = (1, 32, THREADS)


@cuda.jit
def moves(number, scope, pe, dst, src, got, part, sig):
    """MOVES[number] at scope (0 thread, 1 warp, 2 block)."""
    if cuda.threadIdx.x >= (1 if scope == 0 else 32 if scope == 1 else THREADS):
        return
    if number == 0:
        if scope == 0:
            dev.put(dst, src, pe)
        elif scope == 1:
            dev.put_warp(dst, src, pe)
        else:
            dev.put_block(dst, src, pe)
    elif number == 1:
        if scope == 0:
            dev.put_nbi(dst, src, pe)
        elif scope == 1:
            dev.put_nbi_warp(dst, src, pe)
        else:
            dev.put_nbi_block(dst, src, pe)
    elif number == 2:
        if scope == 0:
            dev.get(got, src, pe)
        elif scope == 1:
            dev.get_warp(got, src, pe)
        else:
            dev.get_block(got, src, pe)
    elif number == 3:
        if scope == 0:
            dev.get_nbi(got, src, pe)
        elif scope == 1:
            dev.get_nbi_warp(got, src, pe)
        else:
            dev.get_nbi_block(got, src, pe)
    elif number == 4 or number == 5:
        for step in range(2):  # SET 5, then ADD 2
            value = 5 if step == 0 else 2
            op = dev.SIGNAL_SET if step == 0 else dev.SIGNAL_ADD
            at_least = 5 if step == 0 else 7
            if number == 4 and scope == 0:
                dev.put_signal(dst, src, sig, value, op, pe)
            elif number == 4 and scope == 1:
                dev.put_signal_warp(dst, src, sig, value, op, pe)
            elif number == 4:
                dev.put_signal_block(dst, src, sig, value, op, pe)
            elif scope == 0:
                dev.put_signal_nbi(dst, src, sig, value, op, pe)
            elif scope == 1:
                dev.put_signal_nbi_warp(dst, src, sig, value, op, pe)
            else:
                dev.put_signal_nbi_block(dst, src, sig, value, op, pe)
            dev.signal_wait(sig, dev.CMP_GE, at_least)
    elif number == 6:
        if scope == 0:
            dev.reducescatter(0, dst, src, "sum")
        elif scope == 1:
            dev.reducescatter_warp(0, dst, src, "sum")
        else:
            dev.reducescatter_block(0, dst, src, "sum")
    elif number == 7:
        if scope == 0:
            dev.fcollect(0, got, part)
        elif scope == 1:
            dev.fcollect_warp(0, got, part)
        else:
            dev.fcollect_block(0, got, part)
    elif number == 8:
        if scope == 0:
            dev.alltoall(0, got, src)
        elif scope == 1:
            dev.alltoall_warp(0, got, src)
        else:
            dev.alltoall_block(0, got, src)
    elif number == 9:
        if scope == 0:
            dev.broadcast(0, got, src, ROOT)
        elif scope == 1:
            dev.broadcast_warp(0, got, src, ROOT)
        else:
            dev.broadcast_block(0, got, src, ROOT)
    elif number == 10:
        if scope == 0:
            dev.reduce(0, got, src, "sum")
        elif scope == 1:
            dev.reduce_warp(0, got, src, "sum")
        else:
            dev.reduce_block(0, got, src, "sum")
    elif number == 11:
        if scope == 0:
            dev.reduce(0, got, src, "min")
        elif scope == 1:
            dev.reduce_warp(0, got, src, "min")
        else:
            dev.reduce_block(0, got, src, "min")
    elif number == 12:
        if scope == 0:
            dev.reduce(0, got, src, "max")
        elif scope == 1:
            dev.reduce_warp(0, got, src, "max")
        else:
            dev.reduce_block(0, got, src, "max")
    elif number == 13:
        if scope == 0:
            dev.barrier_all()
        elif scope == 1:
            dev.barrier_all_warp()
        else:
            dev.barrier_all_block()
    elif number == 14:
        if scope == 0:
            dev.sync_all()
        elif scope == 1:
            dev.sync_all_warp()
        else:
            dev.sync_all_block()
    elif number == 15:
        if scope == 0:
            dev.barrier(dev.Teams.TEAM_WORLD)
        elif scope == 1:
            dev.barrier_warp(dev.Teams.TEAM_WORLD)
        else:
            dev.barrier_block(dev.Teams.TEAM_WORLD)
    elif number == 16:
        if scope == 0:
            dev.sync(dev.Teams.TEAM_WORLD)
        elif scope == 1:
            dev.sync_warp(dev.Teams.TEAM_WORLD)
        else:
            dev.sync_block(dev.Teams.TEAM_WORLD)
    dev.quiet()


@cuda.jit
def bitwise(number, scope, pe, got, src):
    """reduce with BITWISE[number] at scope."""
    if cuda.threadIdx.x >= (1 if scope == 0 else 32 if scope == 1 else THREADS):
        return
    if number == 0 and scope == 0:
        dev.reduce(0, got, src, "and")
    elif number == 0 and scope == 1:
        dev.reduce_warp(0, got, src, "and")
    elif number == 0:
        dev.reduce_block(0, got, src, "and")
    elif number == 1 and scope == 0:
        dev.reduce(0, got, src, "or")
    elif number == 1 and scope == 1:
        dev.reduce_warp(0, got, src, "or")
    elif number == 1:
        dev.reduce_block(0, got, src, "or")
    elif scope == 0:
        dev.reduce(0, got, src, "xor")
    elif scope == 1:
        dev.reduce_warp(0, got, src, "xor")
    else:
        dev.reduce_block(0, got, src, "xor")


@cuda.jit
def points(number, pe, dst, src, flag, word):
    """POINTS[number], one thread."""
    if cuda.threadIdx.x != 0:
        return
    if number == 0:
        dev.p(dst, dev.g(src, pe), pe)
        dev.quiet()
    elif number == 1:
        dev.put(dst, src, pe)
        dev.fence()
        dev.p(flag, 9, pe)
        dev.wait_until(flag, dev.CMP_EQ, 9)
    else:
        value = (
            dev.my_pe() * 1000
            + dev.n_pes() * 100
            + dev.team_my_pe(0) * 10
            + dev.team_n_pes(dev.Teams.TEAM_WORLD)
        )
        dev.p(word, value, pe)  # into the next PE's word
        dev.quiet()


@cuda.jit
def int_atomics(number, pe, dst, got):
    if cuda.threadIdx.x != 0:
        return
    if number == 0:
        got[0] = dev.atomic_fetch(dst, pe)
    elif number == 1:
        dev.atomic_set(dst, 3, pe)
    elif number == 2:
        got[0] = dev.atomic_swap(dst, 3, pe)
    elif number == 3:
        got[0] = dev.atomic_compare_swap(dst, 5, 3, pe)
    elif number == 4:
        dev.atomic_add(dst, 3, pe)
    elif number == 5:
        got[0] = dev.atomic_fetch_add(dst, 3, pe)
    elif number == 6:
        dev.atomic_inc(dst, pe)
    elif number == 7:
        got[0] = dev.atomic_fetch_inc(dst, pe)
    elif number == 8:
        dev.atomic_and(dst, 3, pe)
    elif number == 9:
        got[0] = dev.atomic_fetch_and(dst, 3, pe)
    elif number == 10:
        dev.atomic_or(dst, 3, pe)
    elif number == 11:
        got[0] = dev.atomic_fetch_or(dst, 3, pe)
    elif number == 12:
        dev.atomic_xor(dst, 3, pe)
    else:
        got[0] = dev.atomic_fetch_xor(dst, 3, pe)
    dev.quiet()


@cuda.jit
def float_atomics(number, pe, dst, got):
    if cuda.threadIdx.x != 0:
        return
    if number == 0:
        got[0] = dev.atomic_fetch(dst, pe)
    elif number == 1:
        dev.atomic_set(dst, 3, pe)
    elif number == 2:
        got[0] = dev.atomic_swap(dst, 3, pe)
    elif number == 4:
        dev.atomic_add(dst, 3, pe)
    else:
        got[0] = dev.atomic_fetch_add(dst, 3, pe)
    dev.quiet()


def check(what, got, want):
    dsl_expect.check(me, what, got, want)


def sync():
    cp.cuda.Device().synchronize()
    nvshmem.barrier_all()


def run_dtype(dtype):
    a = {
        k: nvshmem.array((N * (npes if k in ("src", "got") else 1),), dtype=dtype)
        for k in ("dst", "src", "got", "part")
    }
    sig = nvshmem.array((1,), dtype="uint64")
    flag = nvshmem.array((1,), dtype="int32")
    word = nvshmem.array((1,), dtype="int64")
    mine, checked = pattern(me, dtype, N * npes), 0

    def reset(start=None):
        a["src"][:] = device(mine, dtype)
        a["part"][:] = device(pattern(me, dtype, N), dtype)
        for k in ("dst", "got"):
            a[k][:] = 0
        if start is not None:
            a["dst"][:1] = device(np.array([start]).astype(numpy_dtype(dtype)), dtype)
        for x in (sig, flag, word):
            x[:] = 0
        sync()

    for number, name in enumerate(MOVES):
        for scope in range(3):
            reset()
            moves[1, THREADS](number, scope, nxt, a["dst"], a["src"], a["got"], a["part"], sig)
            sync()
            what = f"{dtype} {name} at scope {scope}"
            dst, got = host(a["dst"], dtype), host(a["got"], dtype)
            if name in ("put", "put_nbi", "put_signal", "put_signal_nbi"):
                check(what, dst, pattern(prv, dtype, N))
            elif name in ("get", "get_nbi"):
                check(what, got, pattern(nxt, dtype, N * npes))
            elif name == "reducescatter":
                check(
                    what,
                    dst,
                    dsl_expect.reduced("sum", dtype, N * npes, npes)[me * N : (me + 1) * N],
                )
            elif name == "fcollect":
                check(what, got, np.concatenate([pattern(p, dtype, N) for p in range(npes)]))
            elif name == "alltoall":
                check(
                    what,
                    got,
                    np.concatenate(
                        [pattern(p, dtype, N * npes)[me * N : (me + 1) * N] for p in range(npes)]
                    ),
                )
            elif name == "broadcast":
                check(what, got, pattern(ROOT, dtype, N * npes))
            elif name in ("sum", "min", "max"):
                check(what, got, dsl_expect.reduced(name, dtype, N * npes, npes))
            checked += 1
    if dtype not in FLOATS:
        for number, op in enumerate(BITWISE):
            for scope in range(3):
                reset()
                bitwise[1, THREADS](number, scope, nxt, a["got"], a["src"])
                sync()
                check(
                    f"{dtype} reduce {op} at scope {scope}",
                    host(a["got"], dtype),
                    dsl_expect.reduced(op, dtype, N * npes, npes),
                )
                checked += 1
    for number, name in enumerate(POINTS):
        reset()
        points[1, 32](number, nxt, a["dst"], a["src"], flag, word)
        sync()
        if name == "p_g":
            check(f"{dtype} p and g", host(a["dst"], dtype)[:1], mine[:1])
        elif name == "flag":
            check(f"{dtype} fence and wait_until", host(a["dst"], dtype), pattern(prv, dtype, N))
        else:
            check("queries", cp.asnumpy(word), [prv * 1000 + npes * 100 + prv * 10 + npes])
        checked += 1
    if dtype in ATOMIC_INTS or dtype in ("float32", "float64"):
        for number, name in enumerate(ATOMICS):
            if dtype not in ATOMIC_INTS and name not in FLOAT_ATOMICS:
                continue
            reset(ATOMIC_START)
            kernel = int_atomics if dtype in ATOMIC_INTS else float_atomics
            kernel[1, 32](number, nxt, a["dst"], a["got"])
            sync()
            check(f"{dtype} {name}", host(a["dst"], dtype)[:1], [ATOMIC_AFTER[name]])
            if name in RETURNS_OLD:
                check(f"{dtype} {name} (old value)", host(a["got"], dtype)[:1], [ATOMIC_START])
            checked += 1
    for x in (*a.values(), sig, flag, word):
        nvshmem.free_array(x)
    return checked


nvshmem.init()
me, npes = nvshmem.my_pe(), nvshmem.n_pes()
ROOT = min(1, npes - 1)  # the broadcasts' root: PE 1, or PE 0 alone
nxt, prv = (me + 1) % npes, (me - 1) % npes
started, total = time.monotonic(), 0
for dtype in DTYPES:
    total += run_dtype(dtype)
    print(f"PE {me}: {dtype} done ({time.monotonic() - started:.0f} s)", flush=True)
nvshmem.barrier_all()
print(f"PE {me} OK (mlir: {total} launches checked on {npes} PEs)", flush=True)
nvshmem.finalize()
