"""Producer and consumer in numba-cuda-mlir kernels: every launch, PE me
computes a block and put_signals it into the next PE's inbox (the data,
then the signal: the round number), then waits for the block the previous
PE sent it and doubles it into `out`, in the same kernel, with no host call
between the rounds. The inbox has a slot per PE, by round (slot r % n_pes):
in a ring a PE runs at most n_pes - 1 rounds ahead of the next one. Needs
GPUs, CuPy and numba-cuda-mlir (pip install 'symmem[mlir]'):

    python -m symmem.run -n 2 examples/mlir_ring_put_signal.py

Not yet run on GPUs (its CPU-side compile is checked)."""

import cupy as cp
from cuda.core import Device
from numba_cuda_mlir import cuda

import symmem
import symmem.device.numba_cuda_mlir as dev

BLOCK, THREADS = 2048, 256


@cuda.jit
def produce_and_consume(inbox, outbox, sigs, out, rnd):
    tid = cuda.threadIdx.x
    me, npes = dev.my_pe(), dev.n_pes()
    slot = rnd % npes
    mine = outbox[slot * BLOCK : (slot + 1) * BLOCK]
    for i in range(tid, BLOCK, THREADS):  # produce: depends on the PE and the round
        mine[i] = i * (me + 1) + rnd
    cuda.syncthreads()
    sig = sigs[slot : slot + 1]
    dev.put_signal_block(
        inbox[slot * BLOCK : (slot + 1) * BLOCK], mine, sig, rnd, dev.SIGNAL_SET, (me + 1) % npes
    )
    dev.signal_wait(sig, dev.CMP_GE, rnd)  # pairs with the previous PE's signal update
    got = inbox[slot * BLOCK : (slot + 1) * BLOCK]
    for i in range(tid, BLOCK, THREADS):  # consume
        out[i] = got[i] * 2


symmem.init()
Device().set_current()  # numba-cuda-mlir launches in the current context: this PE's GPU
me, npes = symmem.my_pe(), symmem.n_pes()
inbox = symmem.array((npes * BLOCK,), dtype="float32")  # a slot per PE
outbox = symmem.array((npes * BLOCK,), dtype="float32")  # the puts' source
sigs = symmem.array((npes,), dtype="uint64")
out = cp.zeros(BLOCK, dtype=cp.float32)
sigs[:] = 0
cp.cuda.Device().synchronize()
symmem.barrier_all()  # every signal is 0 before any PE puts

prev = (me - 1) % npes
index = cp.arange(BLOCK, dtype=cp.float32)
for rnd in range(1, 9):
    produce_and_consume[1, THREADS](inbox, outbox, sigs, out, rnd)
    cp.cuda.Device().synchronize()
    assert cp.array_equal(out, (index * (prev + 1) + rnd) * 2), f"PE {me}: round {rnd}: wrong"

print(f"PE {me} OK: 8 rounds put_signalled from PE {prev} were consumed right (numba-cuda-mlir)")
symmem.barrier_all()
for a in (sigs, outbox, inbox):
    symmem.free_array(a)
symmem.finalize()
