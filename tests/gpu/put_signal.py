"""put_signal and signal_op on the gpu backend, through symmem's kernels or
NVSHMEM's (SYMMEM_GPU_KERNELS): every size class (one block, a grid and
then a signal launch), every element width (addresses aligned to 16, 8, 4
or 1 bytes, with tails), SET and ADD, on a stream, blocking and nbi, from
symmetric and from private device memory. Each PE checks the bytes and the
signal it received, and that the bytes around them are untouched.
Run: python -m symmem.run -n 2 tests/gpu/put_signal.py"""

import cupy as cp

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
stream = cp.cuda.Stream(non_blocking=True)
SET, ADD = nvshmem.SignalOp.SIGNAL_SET, nvshmem.SignalOp.SIGNAL_ADD
EQ = nvshmem.ComparisonType.CMP_EQ

CASES = [  # (bytes, src offset, dst offset)
    (1, 0, 0),
    (7, 1, 3),
    (8, 0, 0),
    (20, 0, 0),
    (4099, 0, 0),
    (4096, 4, 4),
    (4096, 8, 8),
    (4096, 2, 6),
    (128 << 10, 0, 0),
    ((128 << 10) + 1, 0, 0),
    ((1 << 20) + 3, 1, 2),
    ((4 << 20) + 5, 0, 0),
    (4 << 20, 16, 16),
]
SPAN = (4 << 20) + 64

dst = nvshmem.array((SPAN,), dtype="uint8")
src = nvshmem.array((SPAN,), dtype="uint8")
private = cp.empty(SPAN, dtype=cp.uint8)  # device memory outside the symmetric heap
sig_array = nvshmem.array((1,), dtype="uint64")
sig = nvshmem.array_get_buffer(sig_array)[0]


def pattern(pe):
    return ((cp.arange(SPAN, dtype=cp.uint32) * 7 + pe * 13) % 251).astype(cp.uint8)


mine = pattern(me)
src[:] = mine
private[:] = mine
checked = 0

for mode in ("stream", "blocking", "nbi"):
    for op in (SET, ADD):
        for source in ("symmetric", "private"):
            for case, (nbytes, s_off, d_off) in enumerate(CASES):
                dst[:] = 0
                sig_array[:] = 0
                cp.cuda.Device().synchronize()
                nvshmem.barrier_all()
                origin = src if source == "symmetric" else private
                d, s = dst[d_off : d_off + nbytes], origin[s_off : s_off + nbytes]
                on = None if mode == "blocking" else stream
                put = nvshmem.put_signal_nbi if mode == "nbi" else nvshmem.put_signal
                value = 1000 + case
                if op == SET:
                    put(d, s, sig, value, SET, nxt, stream=on)
                    expect = value
                else:  # two adds: the second must add to the first
                    put(d, s, sig, value, ADD, nxt, stream=on)
                    put(d, s, sig, 3, ADD, nxt, stream=on)
                    expect = value + 3
                nvshmem.signal_wait(sig, expect, EQ, stream=on)
                if on is not None:
                    stream.synchronize()
                got = dst.get()
                sent = pattern(prv).get()
                where = f"PE {me}: {mode} {op.name} {source} {nbytes} B at +{s_off}->+{d_off}"
                assert int(sig_array.get()[0]) == expect, where + " signal"
                assert (got[d_off : d_off + nbytes] == sent[s_off : s_off + nbytes]).all(), where
                assert not got[:d_off].any() and not got[d_off + nbytes :].any(), where + " spill"
                checked += 1
                nvshmem.barrier_all()

# signal_op alone: SET, then ADD on top of it
sig_array[:] = 0
cp.cuda.Device().synchronize()
nvshmem.barrier_all()
nvshmem.signal_op(sig, 40, SET, nxt)
nvshmem.signal_op(sig, 2, ADD, nxt, stream=stream)
nvshmem.signal_wait(sig, 42, EQ)
assert int(sig_array.get()[0]) == 42, f"PE {me}: signal_op"
nvshmem.barrier_all()

for a in (dst, src, sig_array):
    nvshmem.free_array(a)
nvshmem.finalize()
print(f"PE {me} OK (put_signal, {checked} cases)")
