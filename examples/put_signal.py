"""Signalling: PE 0 puts a block into PE 1 with put_signal; PE 1 waits for
the signal and then reads the data, which is there once the signal is.

    python -m symmem.run -n 2 examples/put_signal.py
"""

import symmem as nvshmem

nvshmem.init()
me = nvshmem.my_pe()
if nvshmem.n_pes() < 2:
    raise SystemExit("run this example with at least 2 PEs (python -m symmem.run -n 2 ...)")

buf_src = nvshmem.array((4, 4), dtype="float32")
buf_src[:] = me + 1
buf_dst = nvshmem.array((4, 4), dtype="float32")
buf_dst[:] = 0

# Signals are 1-element uint64 arrays on the symmetric heap.
signal = nvshmem.array((1,), dtype="uint64")
signal[:] = 0
buf_sig, size, dtype = nvshmem.array_get_buffer(signal)
nvshmem.barrier_all()

if me == 0:
    # SIGNAL_SET stores 1 into PE 1's signal once the data has landed there.
    nvshmem.put_signal(buf_dst, buf_src, buf_sig, 1, nvshmem.SignalOp.SIGNAL_SET, remote_pe=1)
    print(f"PE {me} sent its block to PE 1 and set the signal")
if me == 1:
    nvshmem.signal_wait(buf_sig, 1, nvshmem.ComparisonType.CMP_EQ)
    assert (buf_dst == 1).all(), f"PE 1 saw the signal but not the data: {buf_dst}"
    print(f"PE {me} saw signal={int(signal[0])} and received:\n{buf_dst}")

nvshmem.barrier_all()
nvshmem.free_array(buf_src)
nvshmem.free_array(buf_dst)
nvshmem.free_array(signal)
nvshmem.finalize()
