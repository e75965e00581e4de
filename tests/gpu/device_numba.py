"""symmem.device.numba inside @numba.cuda.jit kernels on 2+ GPUs: every PE
checks what it received and the bytes around it.
Run: python -m symmem.run -n 2 tests/gpu/device_numba.py all|dead_peer"""

import os
import sys
import time

import symmem.device.numba as dev  # before numba.cuda: puts back np.row_stack on NumPy 2.5

import cupy as cp
import numba
import numpy as np
from numba import cuda

import symmem as nvshmem
from symmem import _symmem  # the launcher's placement, whichever launcher


numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0  # one-thread kernels are the point here
# The GPU init will pick, so that compiling before init makes no context elsewhere.
cuda.select_device(_symmem.launcher()["local_rank"] % len(cuda.gpus))


@cuda.jit
def too_early(a):
    dev.p(a, 1, 0)


try:  # the state block's address is baked in when a kernel compiles: after init
    too_early[1, 1](cuda.device_array(1, dtype=np.int64))
    raise SystemExit("a kernel compiled before init")
except Exception as error:
    assert "compile after symmem.init()" in str(error), error

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
assert dev.GPU_UNAVAILABLE is None, dev.GPU_UNAVAILABLE


def view(a):
    return cuda.as_cuda_array(a)


def check(what, got, want):
    got, want = cp.asnumpy(got), np.asarray(want)
    if not np.array_equal(got, want):
        bad = np.flatnonzero(got.ravel() != want.ravel())
        raise AssertionError(
            f"PE {me} {what}: {bad.size} elements differ, first at {bad[:5]}: "
            f"got {got.ravel()[bad[:5]]}, want {want.ravel()[bad[:5]]}"
        )


# ---- p and g, every dtype ----


@cuda.jit
def p_g_kernel(dst, value, out, pe):
    dev.p(dst[1:2], value, pe)
    dev.quiet()
    dev.barrier_all()
    out[0] = dev.g(dst[1:2], pe)


def p_and_g():
    for dtype in (
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
    ):
        a = nvshmem.array((4,), dtype=dtype)
        a[:] = 0
        out = cp.zeros(1, dtype=dtype)
        nvshmem.barrier_all()
        value = np.dtype(dtype).type(100 + me if dtype[0] != "f" else 1.25 + me)
        p_g_kernel[1, 1](view(a), value, view(out), nxt)
        cuda.synchronize()
        nvshmem.barrier_all()
        sent_by_prv = np.dtype(dtype).type(100 + prv if dtype[0] != "f" else 1.25 + prv)
        check(f"p {dtype}", a, np.array([0, sent_by_prv, 0, 0], dtype=dtype))
        check(f"g {dtype}", out, np.array([value], dtype=dtype))  # what it put at nxt
        nvshmem.free_array(a)


# ---- put and get: every scope, blocking and nbi + quiet, sizes, alignments ----


def _copy_kernel(fn, blocking):
    @cuda.jit
    def kernel(dst, src, start, count, pe):
        fn(dst[start : start + count], src[start : start + count], pe)
        if not blocking:
            dev.quiet()

    return kernel


COPIES = {}
for scope in ("", "_warp", "_block"):
    for base in ("put", "get"):
        COPIES[(base + scope, True)] = _copy_kernel(getattr(dev, base + scope), True)
        COPIES[(base + "_nbi" + scope, False)] = _copy_kernel(
            getattr(dev, base + "_nbi" + scope), False
        )


def put_and_get():
    sizes = [1, 3, 17, 4099, (1 << 20) + 5]
    big = 8 << 20
    for dtype in ("uint8", "int32", "float64"):
        length = big // np.dtype(dtype).itemsize + 8
        dst = nvshmem.array((length,), dtype=dtype)
        src = nvshmem.array((length,), dtype=dtype)
        pattern = (np.arange(length) % 251 + 1).astype(dtype)
        for (name, blocking), kernel in COPIES.items():
            threads = (
                1 if "warp" not in name and "block" not in name else (32 if "warp" in name else 256)
            )
            for count in sizes + [big // np.dtype(dtype).itemsize]:
                for start in (0, 1, 3):
                    if start + count > length:
                        continue
                    dst[:] = 0
                    src[:] = cp.asarray(pattern) + me
                    nvshmem.barrier_all()
                    kernel[1, threads](view(dst), view(src), start, count, nxt)
                    cuda.synchronize()
                    nvshmem.barrier_all()
                    want = np.zeros(length, dtype=dtype)
                    # put: prv wrote its src into my dst; get: I read nxt's src into my dst
                    sender = prv if name.startswith("put") else nxt
                    want[start : start + count] = (pattern + sender)[start : start + count]
                    check(f"{name} {dtype} count {count} start {start}", dst, want)
            if dtype != "uint8":
                break  # every size and alignment once per dtype beyond the first
        nvshmem.free_array(src)
        nvshmem.free_array(dst)


@cuda.jit
def shifted_copies(dst, src, dst_at, src_at, count, pe, get):
    if get:
        dev.get_block(dst[dst_at : dst_at + count], src[src_at : src_at + count], pe)
    else:
        dev.put_block(dst[dst_at : dst_at + count], src[src_at : src_at + count], pe)


def put_and_get_between_offsets():
    """Bytes between offsets alike mod 16 (bytes up to the common boundary,
    then 16-byte units) and unlike (narrower units or bytes)."""
    length = (1 << 20) + 64
    dst = nvshmem.array((length,), dtype="uint8")
    src = nvshmem.array((length,), dtype="uint8")
    pattern = (np.arange(length) % 251 + 1).astype("uint8")
    for dst_at, src_at in ((12, 12), (5, 5), (1, 2), (4, 12), (8, 0), (0, 8)):
        for count in (17, 4099, (1 << 20) + 5):
            for get in (False, True):
                dst[:] = 0
                src[:] = cp.asarray(pattern) + me
                nvshmem.barrier_all()
                shifted_copies[1, 256](view(dst), view(src), dst_at, src_at, count, nxt, get)
                cuda.synchronize()
                nvshmem.barrier_all()
                want = np.zeros(length, dtype="uint8")
                sender = nxt if get else prv
                want[dst_at : dst_at + count] = (pattern + sender)[src_at : src_at + count]
                check(
                    f"{'get' if get else 'put'}_block +{dst_at} from +{src_at} count {count}",
                    dst,
                    want,
                )
    nvshmem.free_array(src)
    nvshmem.free_array(dst)


# ---- put_signal ping-pong ----


@cuda.jit
def ping_pong(buf, src, sig, rounds, me, peer):
    for r in range(1, rounds + 1):
        if me == 0:
            src[0] = r
            dev.put_signal(buf, src, sig, r, dev.SIGNAL_SET, peer)
            dev.signal_wait(sig, dev.CMP_GE, r)
            if buf[0] != r:
                src[1] = 1000000 + r  # stale data after the signal
        else:
            dev.signal_wait(sig, dev.CMP_GE, r)
            if buf[0] != r:
                src[1] = 1000000 + r
            src[0] = r
            dev.put_signal(buf, src, sig, r, dev.SIGNAL_SET, peer)


def put_signal_ping_pong(rounds=10000):
    if n != 2:
        return
    buf = nvshmem.array((1,), dtype="int64")
    src = cp.zeros(2, dtype="int64")
    sig = nvshmem.array((1,), dtype="uint64")
    buf[:] = 0
    sig[:] = 0
    nvshmem.barrier_all()
    ping_pong[1, 1](view(buf), view(src), view(sig), rounds, me, 1 - me)
    cuda.synchronize()
    check("ping-pong stale data", src[1:], [0])
    check("ping-pong last round", buf, [rounds])
    nvshmem.barrier_all()
    nvshmem.free_array(sig)
    nvshmem.free_array(buf)


# ---- message passing: many blocks write, then signal; the reader sees no stale data ----


@cuda.jit
def writers(data, src, sig, chunk, peer):
    b = cuda.blockIdx.x
    dev.put_signal_block(
        data[b * chunk : (b + 1) * chunk],
        src[b * chunk : (b + 1) * chunk],
        sig,
        1,
        dev.SIGNAL_ADD,
        peer,
    )


@cuda.jit
def reader(data, sig, blocks, chunk, round_, errors):
    if cuda.threadIdx.x == 0:
        dev.signal_wait(sig, dev.CMP_GE, blocks * round_)
    cuda.syncthreads()
    for i in range(cuda.threadIdx.x, blocks * chunk, cuda.blockDim.x):
        if data[i] != round_ * 1000003 + i:
            cuda.atomic.add(errors, 0, 1)


def message_passing(rounds=20, blocks=64, chunk=4096):
    data = nvshmem.array((blocks * chunk,), dtype="int64")
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    errors = cp.zeros(1, dtype="int64")
    reads = cp.cuda.Stream(non_blocking=True)
    nvshmem.barrier_all()
    for r in range(1, rounds + 1):
        src = cp.arange(blocks * chunk, dtype="int64") + r * 1000003
        cp.cuda.Device().synchronize()
        nvshmem.barrier_all()
        read = reader[1, 256, cuda.external_stream(reads.ptr)]
        if r == 1:
            # CUDA loads a kernel at its first launch, and loading waits for
            # the GPU's running kernels (lazy loading): a spinning reader would
            # wait for writers that cannot load. Round 1 loads both.
            writers[blocks, 128](view(data), view(src), view(sig), chunk, nxt)
            read(view(data), view(sig), blocks, chunk, r, view(errors))
        else:  # the reader spins while the peer's writers run
            read(view(data), view(sig), blocks, chunk, r, view(errors))
            writers[blocks, 128](view(data), view(src), view(sig), chunk, nxt)
        cuda.synchronize()
        reads.synchronize()
        nvshmem.barrier_all()
    check("message passing: stale reads", errors, [0])
    nvshmem.free_array(sig)
    nvshmem.free_array(data)


# ---- atomics under contention ----


@cuda.jit
def add_everywhere(counter, fetched):
    old = dev.atomic_fetch_add(counter, 1, 0)
    cuda.atomic.max(fetched, 0, old)
    dev.atomic_inc(counter[1:2], 0)


@cuda.jit
def locked_increments(lock, counter, times):
    for _ in range(times):
        while dev.atomic_compare_swap(lock, 0, 1, 0) != 0:
            pass
        dev.fence()  # the lock's acquisition before the reads it guards
        value = dev.g(counter, 0)
        dev.p(counter, value + 1, 0)
        dev.quiet()  # the increment lands before the lock is seen free
        dev.atomic_set(lock, 0, 0)


def atomics_under_contention(blocks=32, threads=256):
    counter = nvshmem.array((2,), dtype="uint64")
    counter[:] = 0
    fetched = cp.zeros(1, dtype="uint64")
    nvshmem.barrier_all()
    add_everywhere[blocks, threads](view(counter), view(fetched))
    cuda.synchronize()
    nvshmem.barrier_all()
    total = blocks * threads * n
    if me == 0:
        check("atomic_fetch_add from every thread", counter, [total, total])
    lock = nvshmem.array((1,), dtype="int32")
    tally = nvshmem.array((1,), dtype="int64")
    lock[:] = 0
    tally[:] = 0
    nvshmem.barrier_all()
    locked_increments[8, 1](view(lock), view(tally), 50)
    cuda.synchronize()
    nvshmem.barrier_all()
    if me == 0:
        check("compare_swap lock", tally, [8 * 50 * n])
    for a in (tally, lock, counter):
        nvshmem.free_array(a)


# ---- device barriers between phases ----


@cuda.jit
def phases(box, rounds, peer, errors):
    for r in range(1, rounds + 1):
        dev.p(box[0:1], r, peer)
        dev.barrier_all()
        if box[0] != r:
            errors[0] += 1
        dev.barrier_all()


@cuda.jit
def phases_block(box, rounds, peer, errors):
    for r in range(1, rounds + 1):
        if cuda.threadIdx.x == 0:
            dev.p(box[0:1], r, peer)
        dev.barrier_all_block()
        if cuda.threadIdx.x == 0 and box[0] != r:
            errors[0] += 1
        dev.sync_all_block()


def barriers(rounds=1000):
    box = nvshmem.array((1,), dtype="int64")
    box[:] = 0
    errors = cp.zeros(1, dtype="int64")
    nvshmem.barrier_all()
    phases[1, 1](view(box), rounds, nxt, view(errors))
    cuda.synchronize()
    box[:] = 0
    nvshmem.barrier_all()
    phases_block[1, 128](view(box), rounds, nxt, view(errors))
    cuda.synchronize()
    check("device barriers", errors, [0])
    nvshmem.barrier_all()
    nvshmem.free_array(box)


# ---- a dead peer ends a waiting kernel ----


@cuda.jit
def wait_forever(sig):
    dev.signal_wait(sig, dev.CMP_EQ, 12345)


def dead_peer():
    sig = nvshmem.array((1,), dtype="uint64")
    sig[:] = 0
    nvshmem.barrier_all()
    if me == 1:
        time.sleep(1.0)
        os._exit(5)  # dies while PE 0's kernel waits on it
    wait_forever[1, 1](view(sig))
    started = time.monotonic()
    try:
        cuda.synchronize()
    except Exception as error:
        print(
            f"PE {me} kernel ended after {time.monotonic() - started:.1f} s: "
            f"{type(error).__name__}",
            flush=True,
        )
        os._exit(0)
    print(f"PE {me}: the kernel did not end", flush=True)
    os._exit(3)


if sys.argv[1] == "dead_peer":
    dead_peer()
started = time.monotonic()
for step in (
    p_and_g,
    put_and_get,
    put_and_get_between_offsets,
    put_signal_ping_pong,
    message_passing,
    atomics_under_contention,
    barriers,
):
    t0 = time.monotonic()
    step()
    print(f"PE {me} {step.__name__} ok ({time.monotonic() - t0:.1f} s)", flush=True)
nvshmem.finalize()
print(f"PE {me} OK (device numba, {time.monotonic() - started:.0f} s)")
