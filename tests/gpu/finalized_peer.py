"""A PE that called finalize() takes part in no more collectives, and its
peers learn it at once (not after SYMMEM_TIMEOUT, which the test sets to
60 s) instead of pairing up with finalize's own barrier.

'barrier_all': PE 1 calls finalize() (and waits there for PE 0); PE 0 calls
barrier_all, which raises NvshmemError (ERR_PEER_DEAD) naming PE 1 before
anything is launched; PE 0 then calls finalize() too, and both finalize.
'reduce_soon': PE 1 calls finalize() while PE 0 is about to call reduce,
with no pause: PE 0's reduce raises naming PE 1; PE 0 exits; PE 1's
finalize raises, naming PE 0's reduce (NvshmemInvalid, if PE 0 had launched
it) or PE 0's exit (NvshmemError, if PE 0 took it back unlaunched).

Both PEs call the runtime's finalize (_symmem.finalize) rather than the
package's, which first frees the arrays left alive: collectively, so PE 1's
free would meet PE 0's barrier_all (a mismatch, not this test's subject).

Run: SYMMEM_TIMEOUT=60 python -m symmem.run -n 2 tests/gpu/finalized_peer.py CASE"""

import os
import sys
import time

import symmem as nvshmem
from symmem import _symmem

CASE = sys.argv[1]
nvshmem.init()
me = nvshmem.my_pe()
W = nvshmem.Teams.TEAM_WORLD
src = nvshmem.array((8,), dtype="float32")
dst = nvshmem.array((8,), dtype="float32")
src[:] = 1
nvshmem.barrier_all()


def check(cond, what):
    if not cond:
        print(f"PE {me} FAILED: {what}", flush=True)
        os._exit(1)


if me == 1:
    started = time.monotonic()
    try:
        _symmem.finalize()
    except (nvshmem.NvshmemError, nvshmem.NvshmemInvalid) as error:  # ERR_PEER_DEAD, ERR_MISMATCH
        text = str(error)
        check(CASE == "reduce_soon", f"finalize raised: {text}")
        check("reduce(sum, float32, 8 elements, team WORLD)" in text or "PE 0" in text, text)
        print(
            f"PE 1 OK (finalized peer: {CASE}, finalize raised after "
            f"{time.monotonic() - started:.1f} s: {text})",
            flush=True,
        )
        os._exit(0)
    check(CASE == "barrier_all", "finalize returned while PE 0 was in reduce")
    print(
        f"PE 1 OK (finalized peer: {CASE}, finalize took {time.monotonic() - started:.1f} s)",
        flush=True,
    )
    sys.exit(0)

if CASE == "barrier_all":
    time.sleep(2)  # PE 1 is in finalize by now
started = time.monotonic()
try:
    if CASE == "barrier_all":
        nvshmem.barrier_all()
    else:
        nvshmem.reduce(W, dst, src, "sum")
except nvshmem.NvshmemError as error:
    took = time.monotonic() - started
    text = str(error)
    call = "barrier_all" if CASE == "barrier_all" else "reduce"
    check(error.status == _symmem.ERR_PEER_DEAD, f"status {error.status}: {text}")
    check(f"[pe 0] {call}: PE 1 has called finalize() and left the job" in text, text)
    check(took < 10, f"took {took:.1f} s")
    if CASE == "reduce_soon":
        print(f"PE 0 OK (finalized peer: {CASE}, after {took:.1f} s: {text})", flush=True)
        os._exit(0)  # the reduce may have been launched before PE 1 was seen leaving
    _symmem.finalize()  # nothing was launched: this PE can still finalize with PE 1
    print(f"PE 0 OK (finalized peer: {CASE}, after {took:.1f} s: {text})", flush=True)
    sys.exit(0)
check(False, f"{CASE}: no error raised")
