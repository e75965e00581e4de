"""A wait on the GPU ends when its peer cannot come: PE 0 waits (barrier_all
or signal_wait, blocking) for PE 1, which either dies ('peer_dies': PE 0 gets
an NvshmemError naming it) or stays away while PE 0 gets a SIGINT ('ctrl_c':
KeyboardInterrupt, with no SYMMEM_TIMEOUT and no peer dead).
Run: python -m symmem.run -n 2 tests/gpu/wait_ends.py barrier_all|signal_wait peer_dies|ctrl_c
or, the PEs meeting through a unique id (uid_init.py), as two processes:
     python tests/gpu/wait_ends.py <wait> <how> uid <rank> 2 <uid file>"""

import os
import signal
import sys
import threading
import time

import symmem as nvshmem
from uid_init import init_from_file

wait, how = sys.argv[1], sys.argv[2]
if sys.argv[3:4] == ["uid"]:
    init_from_file(int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
else:
    nvshmem.init()
me = nvshmem.my_pe()
sig = nvshmem.array((1,), dtype="uint64")
sig[:] = 0
nvshmem.barrier_all()
if me == 1:
    if how == "peer_dies":
        time.sleep(0.5)  # PE 0 is waiting by now
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(8)  # alive, but never in the wait
    print("PE 1 OK (stayed away)", flush=True)
    os._exit(0)
if how == "ctrl_c":
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
started = time.monotonic()
try:
    if wait == "barrier_all":
        nvshmem.barrier_all()
    else:
        nvshmem.signal_wait(sig, 1, nvshmem.ComparisonType.CMP_EQ)
except (nvshmem.NvshmemError, KeyboardInterrupt) as error:
    print(f"PE {me} caught after {time.monotonic() - started:.1f} s: {error!r}", flush=True)
    os._exit(0)  # the wait still runs on the GPU: NVSHMEM cannot finalize
print(f"PE {me}: the wait did not end", flush=True)
sys.exit(3)
