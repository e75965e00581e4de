"""An all-reduce written as one Triton kernel over symmetric torch tensors:
each program sums its block of every PE's `data` through remote_ptr (plain
tl.load from the peers' memory) into `out`. Per-block flags, counted with
signal_op(SIGNAL_ADD) on every PE, say when every PE's data is ready and,
after the sums, when every PE has read it. Needs GPUs, torch and triton:

    python -m symmem.run -n 2 examples/triton_allreduce.py

It runs on either engine of symmem.device.triton (SYMMEM_TRITON_ENGINE=
symmem, the default here, or nvshmem for NVSHMEM's device bitcode)."""

import torch
import triton
import triton.language as tl

import symmem as nvshmem
import symmem.device.triton as sdt

BLOCK = 1024


@sdt.requires_symmem
@triton.jit
def all_reduce(data, out, flags, count, launch, BLOCK: tl.constexpr):
    block = tl.program_id(0)
    npes = sdt.n_pes()
    flag = flags + block
    # 1. my data is ready: +1 on every PE's flag for this block (a release)
    for pe in range(npes):
        sdt.signal_op(flag, 1, sdt.SIGNAL_ADD, pe)
    # every PE's +1 of this launch arrived (an acquire of each)
    sdt.signal_wait_until(flag, sdt.CMP_GE, (2 * launch + 1) * npes)
    # 2. the sum of this block of every PE's data, read from its memory
    offs = block * BLOCK + tl.arange(0, BLOCK)
    mask = offs < count
    total = tl.zeros((BLOCK,), tl.float32)
    for pe in range(npes):
        total += tl.load(sdt.remote_ptr(data, pe) + offs, mask=mask)
    tl.store(out + offs, total, mask=mask)
    # 3. done reading: nobody changes its data before every PE summed it
    for pe in range(npes):
        sdt.signal_op(flag, 1, sdt.SIGNAL_ADD, pe)
    sdt.signal_wait_until(flag, sdt.CMP_GE, (2 * launch + 2) * npes)


nvshmem.init()
me, npes = nvshmem.my_pe(), nvshmem.n_pes()
count = 10 * BLOCK + 3  # any count: the last block is masked
blocks = triton.cdiv(count, BLOCK)
data = nvshmem.tensor(count, dtype=torch.float32)
out = nvshmem.tensor(count, dtype=torch.float32)
flags = nvshmem.tensor(blocks, dtype=torch.uint64)
flags.zero_()
torch.cuda.synchronize()
nvshmem.barrier_all()  # every PE's flags are 0 before any PE adds to them

for launch in range(3):  # the flags keep counting from launch to launch
    data.copy_(torch.arange(count, dtype=torch.float32, device="cuda") * (me + 1) + launch)
    all_reduce[(blocks,)](data, out, flags, count, launch, BLOCK=BLOCK)
    want = (
        torch.arange(count, dtype=torch.float32, device="cuda") * sum(range(1, npes + 1))
        + launch * npes
    )
    assert torch.equal(out, want), f"PE {me}: launch {launch}: wrong sums"

print(
    f"PE {me} OK: the Triton all-reduce of {count} floats over {npes} PEs is right "
    f"({sdt.engine()} engine)"
)
torch.cuda.synchronize()
nvshmem.barrier_all()
for t in (flags, out, data):
    nvshmem.free_tensor(t)
nvshmem.finalize()
