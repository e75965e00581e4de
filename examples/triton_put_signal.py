"""Producer and consumer in Triton kernels: every launch, each program of
PE me computes a block and put_signals it into the next PE's inbox (the
data, then the signal: the round number, SIGNAL_SET), then waits for the
block the previous PE sent it and consumes it (here: scales it into
`out`), in the same kernel. No host call between the rounds. Needs GPUs,
torch and triton:

    python -m symmem.run -n 4 examples/triton_put_signal.py

The inbox has a slot per PE, by round: slot r % n_pes. In a ring a PE can
run up to n_pes - 1 rounds ahead of the next PE (the next PE is then the
slowest, and every PE between waits for it in turn): PE me producing round
r means the previous PE produced round r - 1, ..., so the next PE, n_pes - 1
steps back around the ring, started round r - n_pes + 1, which it does only
once it has consumed round r - n_pes, the last round that used this slot.
Two slots by parity are enough only for 2 PEs."""

import torch
import triton
import triton.language as tl

import symmem as nvshmem
import symmem.device.triton as sdt

BLOCK = 2048


@sdt.requires_symmem
@triton.jit
def produce_and_consume(inbox, sigs, outbox, out, rnd, BLOCK: tl.constexpr):
    block, blocks = tl.program_id(0), tl.num_programs(0)
    me, npes = sdt.my_pe(), sdt.n_pes()
    slot = (rnd % npes) * blocks + block  # this round's slot of this block
    offs = tl.arange(0, BLOCK)
    # produce: the block depends on the PE, the round and the block index
    mine = (offs + block * BLOCK).to(tl.float32) * (me + 1) + rnd
    tl.store(outbox + slot * BLOCK + offs, mine)
    sdt.putmem_signal_block(
        inbox + slot * BLOCK,
        outbox + slot * BLOCK,
        BLOCK * 4,
        sigs + slot,
        rnd,
        sdt.SIGNAL_SET,
        (me + 1) % npes,
    )
    # consume: the acquire pairs with the previous PE's signal update above
    sdt.signal_wait_until(sigs + slot, sdt.CMP_GE, rnd)
    got = tl.load(inbox + slot * BLOCK + offs)
    tl.store(out + block * BLOCK + offs, got * 2)


nvshmem.init()
me, npes = nvshmem.my_pe(), nvshmem.n_pes()
blocks = 16
inbox = nvshmem.tensor(npes * blocks * BLOCK, dtype=torch.float32)  # a slot per PE
outbox = nvshmem.tensor(npes * blocks * BLOCK, dtype=torch.float32)  # puts' source
sigs = nvshmem.tensor(npes * blocks, dtype=torch.uint64)
out = torch.empty(blocks * BLOCK, dtype=torch.float32, device="cuda")
sigs.zero_()
torch.cuda.synchronize()
nvshmem.barrier_all()  # every inbox signal is 0 before any PE puts

prev = (me - 1) % npes
index = torch.arange(blocks * BLOCK, dtype=torch.float32, device="cuda")
for rnd in range(1, 9):
    produce_and_consume[(blocks,)](inbox, sigs, outbox, out, rnd, BLOCK=BLOCK)
    assert torch.equal(out, (index * (prev + 1) + rnd) * 2), f"PE {me}: round {rnd}: wrong"

print(
    f"PE {me} OK: 8 rounds of {blocks} blocks put_signalled from PE {prev} were consumed "
    f"right ({sdt.engine()} engine)"
)
torch.cuda.synchronize()
nvshmem.barrier_all()
for t in (sigs, outbox, inbox):
    nvshmem.free_tensor(t)
nvshmem.finalize()
