"""Producer and consumer in CuTe DSL kernels: every launch, PE me computes a
block and put_signals it into the next PE's inbox (the data, then the
signal: the round number, SIGNAL_SET), then waits for the block the
previous PE sent it and consumes it (here: doubles it into `out`), in the
same kernel, with no host call between the rounds. The inbox has a slot
per PE, by round (slot r % n_pes): in a ring a PE runs at most n_pes - 1
rounds ahead of the next one. Needs GPUs, CuPy and nvidia-cutlass-dsl
(pip install 'symmem[cute]'); either engine (SYMMEM_CUTE_ENGINE):

    python -m symmem.run -n 2 examples/cute_ring_put_signal.py

Not yet run on GPUs (its CPU-side compile is checked)."""

import cupy as cp
import cutlass
import cutlass.cute as cute
from cuda.core import Device
from cutlass.cute.runtime import from_dlpack

import symmem
import symmem.device.cute as dev
import symmem.interop.cute as scute

BLOCK, THREADS = 2048, 256


def slot_of(tensor, slot, size):
    """The size elements of tensor from slot * size: a view, no copy."""
    return cute.make_tensor(tensor.iterator + slot * size, cute.make_layout(size))


@cute.kernel
def produce_and_consume(
    inbox: cute.Tensor, outbox: cute.Tensor, sigs: cute.Tensor, out: cute.Tensor, rnd: cutlass.Int32
):
    tid, _, _ = cute.arch.thread_idx()
    me, npes = dev.my_pe(), dev.n_pes()
    slot = rnd % npes
    mine = slot_of(outbox, slot, BLOCK)
    for i in range(tid, BLOCK, THREADS):  # produce: depends on the PE and the round
        mine[i] = cutlass.Float32(cutlass.Int32(i)) * cutlass.Float32(me + 1) + cutlass.Float32(rnd)
    cute.arch.sync_threads()
    sig = slot_of(sigs, slot, 1)
    dev.put_signal_block(
        slot_of(inbox, slot, BLOCK), mine, sig, rnd, dev.SIGNAL_SET, (me + 1) % npes
    )
    dev.signal_wait(sig, dev.CMP_GE, rnd)  # pairs with the previous PE's signal update
    got = slot_of(inbox, slot, BLOCK)
    for i in range(tid, BLOCK, THREADS):  # consume
        out[i] = got[i] * 2.0


@cute.jit
def launch(
    inbox: cute.Tensor, outbox: cute.Tensor, sigs: cute.Tensor, out: cute.Tensor, rnd: cutlass.Int32
):
    produce_and_consume(inbox, outbox, sigs, out, rnd).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


symmem.init()
Device().set_current()  # CuTe launches in the current context: this PE's GPU
me, npes = symmem.my_pe(), symmem.n_pes()
inbox = symmem.array((npes * BLOCK,), dtype="float32")  # a slot per PE
outbox = symmem.array((npes * BLOCK,), dtype="float32")  # the puts' source
sigs = symmem.array((npes,), dtype="uint64")
out = cp.zeros(BLOCK, dtype=cp.float32)
sigs[:] = 0
cp.cuda.Device().synchronize()
symmem.barrier_all()  # every signal is 0 before any PE puts

args = [from_dlpack(a, assumed_align=16) for a in (inbox, outbox, sigs, out)]
kernel, kobj = scute.cute_compile_helper(launch, *args, 1)  # compile + library_init
prev = (me - 1) % npes
index = cp.arange(BLOCK, dtype=cp.float32)
for rnd in range(1, 9):
    kernel(*args, rnd)
    cp.cuda.Device().synchronize()
    assert cp.array_equal(out, (index * (prev + 1) + rnd) * 2), f"PE {me}: round {rnd}: wrong"

print(
    f"PE {me} OK: 8 rounds put_signalled from PE {prev} were consumed right "
    f"(cute, {dev.engine()} engine)"
)
symmem.library_finalize(kobj)
symmem.barrier_all()
for a in (sigs, outbox, inbox):
    symmem.free_array(a)
symmem.finalize()
