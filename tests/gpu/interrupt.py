"""Ctrl-C ends a wait on the GPU: PE 0 waits (barrier_all or signal_wait,
blocking) for PE 1, which does not come; a SIGINT one second in raises
KeyboardInterrupt in PE 0, without SYMMEM_TIMEOUT and with no peer dead.
Run: python -m symmem.run -n 2 tests/gpu/interrupt.py barrier_all|signal_wait"""
import os
import signal
import sys
import threading
import time

import symmem as nvshmem

wait = sys.argv[1]
nvshmem.init()
me = nvshmem.my_pe()
sig = nvshmem.array((1,), dtype="uint64")
sig[:] = 0
nvshmem.barrier_all()
if me == 1:
    time.sleep(8)  # alive, but never in the wait
    print("PE 1 OK (stayed away)", flush=True)
    os._exit(0)
threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
started = time.monotonic()
try:
    if wait == "barrier_all":
        nvshmem.barrier_all()
    else:
        nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)
except KeyboardInterrupt:
    print(f"PE 0 OK (interrupted after {time.monotonic() - started:.1f} s)", flush=True)
    os._exit(0)  # the barrier kernel still waits on the GPU; NVSHMEM cannot finalize
print("PE 0 was not interrupted", flush=True)
sys.exit(3)
