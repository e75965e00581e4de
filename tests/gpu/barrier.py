"""barrier_all and sync_all on the gpu backend: every round, each PE writes the round's number into
the next PE's memory (a put on the stream, a blocking put, or a CuPy kernel
storing through the peer view), crosses a barrier, and checks that what
its previous PE wrote has arrived. A barrier that let a PE through early
would show a stale round.
Run: python -m symmem.run -n 2 tests/gpu/barrier.py"""

import cupy as cp

import symmem as nvshmem

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt, prv = (me + 1) % n, (me - 1) % n
stream = cp.cuda.Stream(non_blocking=True)
ROUNDS = 300

inbox = nvshmem.array((n, 256), dtype="int64")  # row k: what PE k wrote here
outbox = nvshmem.array((256,), dtype="int64")
inbox[:] = -1
peer_inbox = nvshmem.get_peer_array(inbox, nxt)
cp.cuda.Device().synchronize()
nvshmem.barrier_all()

for r in range(ROUNDS):
    how = ("put on a stream", "blocking put", "peer store")[r % 3]
    which = ("barrier_all", "sync_all")[(r // 3) % 2]
    on = stream if r % 2 == 0 else None  # the barrier itself: on a stream or blocking
    with stream:
        outbox[:] = r * 1000 + me
    if how == "put on a stream":
        nvshmem.put(inbox[me], outbox, nxt, stream=stream)
    elif how == "blocking put":
        stream.synchronize()
        nvshmem.put(inbox[me], outbox, nxt)
    else:
        with stream:
            peer_inbox[me] = outbox
    if on is None:
        stream.synchronize()
    if which == "barrier_all":
        nvshmem.barrier_all(stream=on)
    else:
        nvshmem.quiet(stream=on)
        nvshmem.sync_all(stream=on)
    with stream:
        got = inbox[prv].copy()
    stream.synchronize()
    assert bool((got == r * 1000 + prv).all()), (
        f"PE {me}: round {r} ({how}, {which}, stream={on is not None}) saw {int(got[0])}"
    )
    # nobody writes the next round's values before everyone has read these
    nvshmem.barrier_all(stream=on)
    if on is not None:
        stream.synchronize()

for a in (inbox, outbox):
    nvshmem.free_array(a)
nvshmem.finalize()
print(f"PE {me} OK (barrier, {ROUNDS} rounds)")
