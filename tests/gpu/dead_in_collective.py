"""A PE that dies inside a collective: PE 1 makes the call on its stream,
queued behind a kernel that spins for 3 s, and exits before its part runs.
PE 0's part of the collective waits on the GPU for PE 1's arrival; it must
end in an error, not hang the GPU.

    python -m symmem.run -n 2 tests/gpu/dead_in_collective.py reduce|fcollect|barrier stream|blocking

'stream': PE 0 makes the call on a stream, whose synchronize then raises a
CUDA error (the kernel trapped once the device watch set the abort word).
'blocking': PE 0 makes it with stream=None, which raises NvshmemError
naming PE 1. PE 0 prints 'PE 0 ended after S s: ERROR' and exits 0; PE 1
exits 5 (the launcher then reports it)."""

import faulthandler
import os
import sys
import time

import cupy as cp

import symmem as nv

CALL, MODE = sys.argv[1], sys.argv[2]
faulthandler.dump_traceback_later(60, exit=True)  # a hang says where
COUNT = 1 << 16

nv.init()
me, n = nv.my_pe(), nv.n_pes()
W = nv.Teams.TEAM_WORLD
src = nv.array((COUNT,), dtype="float32")
dst = nv.array((n * COUNT,), dtype="float32")
src[:] = me + 1
s = cp.cuda.Stream(non_blocking=True)


def call(stream):
    if CALL == "reduce":
        nv.reduce(W, dst[:COUNT], src, "sum", stream=stream)
    elif CALL == "fcollect":
        nv.fcollect(W, dst, src, stream=stream)
    else:
        nv.barrier(W, stream=stream)


call(s)  # compiled and run once by every PE
s.synchronize()
nv.barrier_all()
SPIN = cp.RawKernel(
    r'''
extern "C" __global__ void spin(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
}''',
    "spin",
)

if me == 1:
    SPIN((1,), (1,), (cp.uint64(3_000_000_000),), stream=s)
    call(s)  # enqueued: published, launched behind the spin
    time.sleep(0.5)
    os._exit(5)  # before its part of the collective runs

started = time.monotonic()
try:
    call(s if MODE == "stream" else None)
    s.synchronize()
except Exception as error:  # noqa: BLE001 (a CUDA error from CuPy, or NvshmemError)
    print(
        f"PE {me} ended after {time.monotonic() - started:.1f} s: {type(error).__name__}: {error}",
        flush=True,
    )
    os._exit(0)
print(f"PE {me}: {CALL} ({MODE}) returned though PE 1 died in it", flush=True)
os._exit(3)
