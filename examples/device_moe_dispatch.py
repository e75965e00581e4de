"""MoE token dispatch and combine written as GPU kernels: each PE routes its
tokens to K = 2 of E experts spread over the PEs, its blocks put every token
row straight into the expert's PE and signal, the experts transform what they
received and put each result back into its token's home slot. No trip
through the host. Needs GPUs and numba-cuda:

    python -m symmem.run -n 2 examples/device_moe_dispatch.py

Expert e lives on PE e // EPP as its local expert e % EPP and receives its
tokens as one contiguous batch, source PE 0's first, then PE 1's, ...: what
a grouped GEMM wants. The receiver must know how many tokens to wait for, so
the PEs first exchange their per-expert counts (notify: each PE's row of the
count matrix goes to every PE with put_signal_nbi_block, a device-side
all-gather), as DeepEP's normal kernels do before any token moves. The
count matrix then also gives each sender its region of every batch, so a
token's slot is

    counts of the PEs below me for expert e + a local atomic counter for e

as DeepEP's low-latency kernels reserve slots: with a local atomic, not an
atomic_fetch_add on the target, which would put an NVLink round trip in
front of every token's put. No two tokens share a slot. The row goes with
put_signal_nbi_block adding 1 to the expert's signal; its home (PE, token,
choice) goes just before with p, so the signal covers it too. The expert
waits until its signal reaches the exchanged total.

Combine: the expert's block puts each result into comb[token, choice] on the
home PE with put_signal_nbi_block, adding 1 to the signal of the home block
that owns the token; that block waits for all of its tokens' results and
sums each token's K outputs in token order.

Four kernels in stream order, so no block ever waits for a block of its own
grid that may not be resident yet: notify (waits for the other PEs' counts),
dispatch (waits for nothing), expert_combine (waits for every PE's
dispatch), finish (waits for every PE's expert_combine)."""

import symmem.device.numba as dev  # before numba.cuda (it needs the NumPy 2.5 fix)

import cupy as cp
import numba
import numpy as np
from numba import cuda, float32, int32

import symmem as nvshmem

numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0  # notify's one block is no accident

T, H, K, EPP = 1024, 512, 2, 2  # tokens per PE, hidden size, experts per token, experts per PE
BLOCKS, THREADS = 16, 256  # dispatch and finish: block b owns tokens [b * per, (b + 1) * per)


@cuda.jit
def notify(route, counts, count_sig, start, expect, me, n):
    """My tokens per expert into my row of counts, sent to every PE; then
    start[e]: where my tokens begin in expert e's batch, and expect[le]: how
    many tokens my local expert le receives."""
    E = n * EPP
    for i in range(cuda.threadIdx.x, route.size, cuda.blockDim.x):
        cuda.atomic.add(counts, me * E + route[i], 1)
    cuda.syncthreads()  # the whole row counted before the block sends it
    row = counts[me * E : (me + 1) * E]
    for pe in range(n):
        if pe != me:
            dev.put_signal_nbi_block(row, row, count_sig, 1, dev.SIGNAL_ADD, pe)
    if cuda.threadIdx.x == 0:
        # one row from every other PE; the acquire pairs with the fence its
        # put_signal makes before adding to count_sig
        dev.signal_wait(count_sig, dev.CMP_GE, n - 1)
    cuda.syncthreads()  # what thread 0's acquire made visible, for every thread
    for e in range(cuda.threadIdx.x, E, cuda.blockDim.x):
        below = 0
        for s in range(me):
            below += counts[s * E + e]
        start[e] = below
    for le in range(cuda.threadIdx.x, EPP, cuda.blockDim.x):
        total = 0
        for s in range(n):
            total += counts[s * E + me * EPP + le]
        expect[le] = total


@cuda.jit
def dispatch(x, route, start, fill, recv, meta, expert_sig, me, cap, per):
    """Block b sends each choice of each of its tokens to the expert's PE."""
    slot = cuda.shared.array(1, int32)
    lo = cuda.blockIdx.x * per
    for t in range(lo, min(lo + per, T)):
        for k in range(K):
            e = route[t * K + k]
            owner, le = e // EPP, e % EPP
            if cuda.threadIdx.x == 0:
                slot[0] = le * cap + start[e] + cuda.atomic.add(fill, e, 1)
                # where the result goes home; stored before the row's signal
                dev.p(meta[slot[0] : slot[0] + 1], (me * T + t) * K + k, owner)
            cuda.syncthreads()
            r = slot[0]
            dev.put_signal_nbi_block(
                recv[r * H : (r + 1) * H],
                x[t * H : (t + 1) * H],
                expert_sig[le : le + 1],
                1,
                dev.SIGNAL_ADD,
                owner,
            )
            cuda.syncthreads()  # every thread has read slot before thread 0 writes it again


@cuda.jit
def expert_combine(recv, meta, expect, expert_sig, comb, comb_sig, me, cap, per):
    """Blocks (le, j) wait for local expert le's batch, apply the expert
    (multiply by e + 1) to every gridDim.y-th row from j, and put each result
    into its token's slot on its home PE."""
    le, j = cuda.blockIdx.x, cuda.blockIdx.y
    total = expect[le]
    if cuda.threadIdx.x == 0:  # pairs with each dispatching block's fence before its add
        dev.signal_wait(expert_sig[le : le + 1], dev.CMP_GE, total)
    cuda.syncthreads()  # rows and meta, seen by thread 0's acquire, for every thread
    scale = float32(me * EPP + le + 1)
    for i in range(j, total, cuda.gridDim.y):
        r = le * cap + i
        for h in range(cuda.threadIdx.x, H, cuda.blockDim.x):
            recv[r * H + h] *= scale
        cuda.syncthreads()  # the whole row transformed before the block sends it
        home, dst = meta[r] // (T * K), meta[r] % (T * K)  # dst = token * K + choice
        b = dst // K // per
        dev.put_signal_nbi_block(
            comb[dst * H : (dst + 1) * H],
            recv[r * H : (r + 1) * H],
            comb_sig[b : b + 1],
            1,
            dev.SIGNAL_ADD,
            home,
        )


@cuda.jit
def finish(comb, comb_sig, out, per):
    """Block b waits for the K results of each of its tokens and sums them."""
    b = cuda.blockIdx.x
    lo = b * per
    mine = max(0, min(per, T - lo))
    if cuda.threadIdx.x == 0:  # pairs with each expert block's fence before its add
        dev.signal_wait(comb_sig[b : b + 1], dev.CMP_GE, mine * K)
    cuda.syncthreads()
    for i in range(cuda.threadIdx.x, mine * H, cuda.blockDim.x):
        t, h = lo + i // H, i % H
        acc = comb[t * K * H + h]
        for k in range(1, K):
            acc += comb[(t * K + k) * H + h]
        out[t * H + h] = acc


nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
E, cap, per = n * EPP, n * T, -(-T // BLOCKS)  # cap: at most T tokens from each PE per expert
rng = np.random.default_rng(1234 + me)
x_host = rng.standard_normal((T, H), dtype=np.float32)
route_host = np.argsort(rng.random((T, E)), axis=1)[:, :K].astype(np.int32)  # K different

x, route = cp.asarray(x_host.ravel()), cp.asarray(route_host.ravel())
start, fill = cp.zeros(E, dtype="int32"), cp.zeros(E, dtype="int32")
expect, out = cp.zeros(EPP, dtype="int32"), cp.zeros(T * H, dtype="float32")
counts = nvshmem.array((n * E,), dtype="int32")
recv = nvshmem.array((EPP * cap * H,), dtype="float32")
meta = nvshmem.array((EPP * cap,), dtype="int32")
comb = nvshmem.array((T * K * H,), dtype="float32")
sigs = nvshmem.array((1 + EPP + BLOCKS,), dtype="uint64")
count_sig, expert_sig, comb_sig = sigs[:1], sigs[1 : 1 + EPP], sigs[1 + EPP :]
counts[:] = 0
sigs[:] = 0
nvshmem.barrier_all()  # zeroed everywhere before any PE's kernel adds to them

v = cuda.as_cuda_array
notify[1, THREADS](v(route), v(counts), v(count_sig), v(start), v(expect), me, n)
dispatch[BLOCKS, THREADS](
    v(x), v(route), v(start), v(fill), v(recv), v(meta), v(expert_sig), me, cap, per
)
expert_combine[(EPP, 8), THREADS](
    v(recv), v(meta), v(expect), v(expert_sig), v(comb), v(comb_sig), me, cap, per
)
finish[BLOCKS, THREADS](v(comb), v(comb_sig), v(out), per)
cuda.synchronize()

outputs = x_host[:, None, :] * (route_host[:, :, None] + 1).astype(np.float32)
want = outputs[:, 0]
for k in range(1, K):
    want = want + outputs[:, k]  # the order finish adds in: bit for bit
assert np.array_equal(cp.asnumpy(out).reshape(T, H), want), f"PE {me}: wrong tokens"
print(f"PE {me} OK: {T} tokens x top-{K} went to {E} experts on {n} PEs and came back right")
for a in (sigs, comb, meta, recv, counts):
    nvshmem.free_array(a)
nvshmem.finalize()
