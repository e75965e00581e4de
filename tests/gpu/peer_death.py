"""A PE dies while the other waits on the GPU: the waiter gets an
NvshmemError naming the dead PE instead of hanging.
Run: python -m symmem.run -n 2 tests/gpu/peer_death.py barrier_all|signal_wait"""
import os
import signal
import sys
import time

import symmem as nvshmem

wait = sys.argv[1]
nvshmem.init()
me = nvshmem.my_pe()
sig = nvshmem.array((1,), dtype="uint64")
sig[:] = 0
nvshmem.barrier_all()
if me == 1:
    time.sleep(0.5)  # PE 0 is waiting by now
    os.kill(os.getpid(), signal.SIGKILL)
started = time.monotonic()
try:
    if wait == "barrier_all":
        nvshmem.barrier_all()
    else:
        nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)
except nvshmem.NvshmemError as error:
    print(f"PE {me} caught after {time.monotonic() - started:.1f} s: {error}", flush=True)
    os._exit(0)  # NVSHMEM's finalize would wait for the dead PE
print(f"PE {me} was not told that PE 1 died", flush=True)
sys.exit(3)
