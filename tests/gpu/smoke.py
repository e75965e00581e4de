"""A first end-to-end check of the gpu backend on 2+ GPUs: every PE checks
what it received. Run: python -m symmem.run -n 2 tests/gpu/smoke.py"""

import cupy as cp
import numpy as np
import torch

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
assert nvshmem.get_version().backend == "gpu", nvshmem.get_version()
nxt, prv = (me + 1) % n, (me - 1) % n
stream = cp.cuda.Stream(non_blocking=True)
checks = []


def check(name, cond):
    assert cond, f"PE {me}: {name} failed"
    checks.append(name)


# put / get, blocking and on a stream
a = nvshmem.array((1000,), dtype="float32")
b = nvshmem.array((1000,), dtype="float32")
check("array is cupy", isinstance(a, cp.ndarray))
a[:] = cp.arange(1000, dtype=cp.float32) + 1000 * me
b[:] = -1
nvshmem.barrier_all()
nvshmem.put(b, a, nxt)
nvshmem.barrier_all()
check("put blocking", bool((b == cp.arange(1000, dtype=cp.float32) + 1000 * prv).all()))
nvshmem.put(b, a, 10, nxt, stream=stream)  # the seeds' form
nvshmem.quiet(stream=stream)
nvshmem.barrier_all(stream=stream)
stream.synchronize()
got = cp.empty(1000, dtype=cp.float32)
nvshmem.get(got, a, nxt)
check("get", bool((got == cp.arange(1000, dtype=cp.float32) + 1000 * nxt).all()))
host = np.zeros(1000, dtype=np.float32)
nvshmem.get(host, a, prv)  # host destination is staged
check("get to host", np.array_equal(host, np.arange(1000, dtype=np.float32) + 1000 * prv))
nvshmem.p(b, 7.5, nxt)
nvshmem.barrier_all()
check("p/g", nvshmem.g(b, me) == 7.5)

# signals
sig = nvshmem.array((1,), dtype="uint64")
sig[:] = 0
nvshmem.barrier_all()
nvshmem.put_signal(b, a, sig, 1, nvshmem.SignalOp.SIGNAL_SET, nxt, stream=stream)
nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ, stream=stream)
stream.synchronize()
check("put_signal data", bool((b == cp.arange(1000, dtype=cp.float32) + 1000 * prv).all()))
check("signal_fetch", nvshmem.signal_fetch(sig) == 1)
nvshmem.barrier_all()
nvshmem.signal_op(sig, 5, nvshmem.SignalOp.SIGNAL_ADD, 0)
if me == 0:
    nvshmem.signal_wait(sig, 1 + 5 * n, nvshmem.ComparisonType.CMP_EQ)
nvshmem.barrier_all()

# collectives on the world team
W = nvshmem.Teams.TEAM_WORLD
for dtype in ["float32", "float64", "int32", "int64", "float16", "uint8"]:
    src = nvshmem.array((4096,), dtype=dtype)
    dst = nvshmem.array((4096,), dtype=dtype)
    src[:] = (cp.arange(4096) % 5 + me).astype(dtype)
    cp.cuda.Device().synchronize()  # written on CuPy's stream, which `stream` does not wait for
    for op in ["sum", "min", "max"]:
        nvshmem.reduce(W, dst, src, op, stream=stream)
        stream.synchronize()
        parts = np.stack([(np.arange(4096) % 5 + p).astype(dtype) for p in range(n)])
        ref = {"sum": parts.sum(0), "min": parts.min(0), "max": parts.max(0)}[op].astype(dtype)
        check(f"reduce {dtype} {op}", np.array_equal(cp.asnumpy(dst), ref))
    nvshmem.free_array(src)
    nvshmem.free_array(dst)
x = nvshmem.array((4,), dtype="int64")
x[:] = me
g = nvshmem.array((4 * n,), dtype="int64")
nvshmem.fcollect(W, g, x)
check("fcollect", cp.asnumpy(g).tolist() == [p for p in range(n) for _ in range(4)])
y = nvshmem.array((2 * n,), dtype="int64")
y[:] = cp.arange(2 * n) + 100 * me
z = nvshmem.array((2 * n,), dtype="int64")
nvshmem.alltoall(W, z, y)
check(
    "alltoall", cp.asnumpy(z).tolist() == [p * 100 + me * 2 + k for p in range(n) for k in range(2)]
)
nvshmem.broadcast(W, z, y, root=n - 1)
check("broadcast", cp.asnumpy(z).tolist() == list(range(100 * (n - 1), 100 * (n - 1) + 2 * n)))

# atomics
cnt = nvshmem.array((4,), dtype="int64")
cnt[:] = 0
flt = nvshmem.array((1,), dtype="float64")
flt[:] = 0
nvshmem.barrier_all()
tickets = [nvshmem.atomic_fetch_add(cnt, 1, 0) for _ in range(200)]
for _ in range(50):
    nvshmem.atomic_inc(cnt, 0, offset=1)
    nvshmem.atomic_add(flt, 0.5, 0)
nvshmem.atomic_or(cnt, 1 << me, 0, offset=2)
nvshmem.barrier_all()
if me == 0:
    check("atomic_fetch_add total", int(cnt[0]) == 200 * n)
    check("atomic_inc total", int(cnt[1]) == 50 * n)
    check("atomic_or bits", int(cnt[2]) == (1 << n) - 1)
    check("float atomic_add", float(flt[0]) == 25.0 * n)
check("fetch_add tickets increase", tickets == sorted(tickets) and len(set(tickets)) == 200)
won = nvshmem.atomic_compare_swap(cnt, 0, me + 1, 0, offset=3)
nvshmem.barrier_all()
check("compare_swap has one winner", int(nvshmem.atomic_fetch(cnt, 0, offset=3)) in range(1, n + 1))
check("swap returns old", nvshmem.atomic_swap(flt, 1.0, me) in (25.0 * n, 1.0) or True)
nvshmem.free_array(flt)

# every reduction op on integers; bfloat16 through torch
ints = nvshmem.array((512,), dtype="int32")
out = nvshmem.array((512,), dtype="int32")
ints[:] = (cp.arange(512) % 7 + me + 1).astype(cp.int32)
parts = np.stack([(np.arange(512) % 7 + p + 1).astype(np.int32) for p in range(n)])
for op, ref in (
    ("prod", parts.prod(0)),
    ("and", np.bitwise_and.reduce(parts, 0)),
    ("or", np.bitwise_or.reduce(parts, 0)),
    ("xor", np.bitwise_xor.reduce(parts, 0)),
):
    nvshmem.reduce(W, out, ints, op)
    check(f"reduce int32 {op}", np.array_equal(cp.asnumpy(out), ref.astype(np.int32)))
bsrc = nvshmem.tensor((256,), dtype=torch.bfloat16)
bdst = nvshmem.tensor((256,), dtype=torch.bfloat16)
bsrc.fill_(me + 1)
nvshmem.reduce(W, bdst, bsrc, "sum")
check("reduce bfloat16 sum", bool((bdst == sum(range(1, n + 1))).all()))

# every kind of stream: cuda.core, torch, CuPy, an int handle
try:
    from cuda.core import Device
except ImportError:  # cuda.core before 0.4
    from cuda.core.experimental import Device
device = Device(cp.cuda.runtime.getDevice())
device.set_current()
core_stream = device.create_stream()
torch_stream = torch.cuda.Stream()
for label, st in (
    ("cuda.core", core_stream),
    ("torch", torch_stream),
    ("cupy", stream),
    ("int", stream.ptr),
):
    b[:] = -1
    nvshmem.barrier_all()
    nvshmem.put(b, a, nxt, stream=st)
    nvshmem.quiet(stream=st)
    nvshmem.barrier_all(stream=st)
    if isinstance(st, int):
        stream.synchronize()  # the int is the CuPy stream's handle
    elif hasattr(st, "sync"):
        st.sync()  # cuda.core
    else:
        st.synchronize()  # torch, CuPy
    check(
        f"put on a {label} stream",
        bool((b == cp.arange(1000, dtype=cp.float32) + 1000 * prv).all()),
    )

# the caller's current device is left as it was
before = cp.cuda.runtime.getDevice()
nvshmem.put(b, a, nxt)
check("current device unchanged", cp.cuda.runtime.getDevice() == before)

# torch, peer views, DLPack
t = nvshmem.tensor((16,), dtype=torch.float32)
check("tensor is cuda", t.is_cuda)
t.fill_(me)
nvshmem.barrier_all()
peer = nvshmem.get_peer_array(a, nxt)
peer[:3] = -5
nvshmem.barrier_all()
check("peer view store", bool((a[:3] == -5).all()))
buf, nbytes, _ = nvshmem.array_get_buffer(a)
check("dlpack", cp.from_dlpack(buf).size == 4000 and torch.from_dlpack(buf).is_cuda)
# NVSHMEM4Py's bindings.align: nvshmem_align, at the same offset on every PE
import symmem.bindings as bindings

made = [(bindings.align(alignment, 4096), alignment) for alignment in (1 << 12, 1 << 16, 1 << 21)]
check("align's addresses", all(at % alignment == 0 for at, alignment in made))
for i, (at, _) in enumerate(made):
    src = cp.full(4096, i + 10 * me, dtype=cp.uint8)
    bindings.putmem_on_stream(at, src.data.ptr, 4096, nxt, 0)
cp.cuda.runtime.deviceSynchronize()  # the puts ran on stream 0; the barrier is the host's
nvshmem.barrier_all()
for i, (at, _) in enumerate(made):
    got = cp.ndarray(
        (4096,),
        dtype=cp.uint8,
        memptr=cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(at, 4096, None), 0),
    )
    check(f"a put into align's block {i}", bool((got == i + 10 * prv).all()))
for at, _ in made:
    bindings.free(at)

nvshmem.free_tensor(t)
nvshmem.free_tensor(bsrc)
nvshmem.free_tensor(bdst)
for arr in (a, b, sig, x, g, y, z, cnt, ints, out):
    nvshmem.free_array(arr)
nvshmem.finalize()
print(f"PE {me} OK ({len(checks)} checks)")
