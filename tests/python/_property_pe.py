"""One PE of the property test (test_property.py starts it on 2 and 3 PEs):

    python -m symmem.run -n N _property_pe.py SEED STEPS [TRAIL]

Each step draws one kind of step from the shared stream (_property_world.py
says how steps avoid races), runs this PE's call and checks it, waits for
what a peer signalled to it, passes a barrier, applies every PE's effects to
the model, compares this PE's memory with it and passes a second barrier
(before it, no PE may reach the memory being compared). The first broken promise
raises Failure naming the seed, the step and every PE's call; TRAIL.<pe> (a
file) gets each step's call as it starts, so a crash or a hang can be placed.
"""

import random
import sys
import time
import warnings

import symmem as nvshmem
import _property_collectives as collectives
import _property_onesided as onesided
import _property_pool as pool
import _property_sequences as sequences
import _property_signals as signals
from _property_world import U64, World, ok, trail_writer

C = nvshmem.ComparisonType
POLL_SECONDS = 30  # a poll loop that sees nothing for this long is a hang

# One-sided generators, drawn per PE, and their weights.
ONE_SIDED = [
    (onesided.rma, 30),
    (onesided.p_g, 12),
    (onesided.atomic, 25),
    (signals.put_signal, 15),
    (signals.local_wait, 8),
    (signals.peer_view, 6),
    (signals.query, 6),
    (sequences.in_a_row, 8),
]


class Reach:
    """A one-sided step's shared draws: X (data), S (signals, or None), and
    the permutation that says which PE each PE may reach."""

    def __init__(self, X, S, perm):
        self.X, self.S, self.perm = X, S, perm
        self.inv = [perm.index(pe) for pe in range(len(perm))]
        self.busy = {X, S}


def one_sided(w, r):
    X = w.pick(r)
    S = w.pick(
        r, lambda s: s is not X and s.count and (s.dtype == U64 or (s.is_buffer and s.nbytes >= 8))
    )
    perm = list(range(w.n))
    r.shuffle(perm)
    w.reach = Reach(X, S, perm)
    table = [
        (gen, weight) for gen, weight in ONE_SIDED if S is not None or gen is not signals.put_signal
    ]
    calls = []
    for p in range(w.n):
        pr = w.pe_random(p)
        gen = pr.choices([g for g, _ in table], [wt for _, wt in table])[0]
        calls.append(gen(w, w.reach, p, pr))
    return calls


# Step kinds, drawn from the shared stream, and their weights.
STEPS = [
    (one_sided, 55),
    (collectives.collective, 14),
    (collectives.sync, 4),
    (collectives.on_buffers, 2),
    (sequences.crowd, 5),
    (pool.memory, 10),
    (pool.teams, 6),
    (pool.lifecycle, 0.2),
]


def await_incoming(w, calls):
    """Waits for what the PE that reached this one signalled or stored, and
    checks the data that came with the signal."""
    reach = w.reach
    call = calls[reach.inv[w.me]]
    if call.raises is not None or call.wake is None:
        return
    kind, sym, e, value, data = call.wake
    # A Buffer is a signal word itself; as an ivar, its bytes are uint8 elements.
    word = sym.whole() if sym.is_buffer and kind == "signal" else sym.view(e, e + 1)
    ways = ["signal_wait", "signal_wait cmp=", "poll signal_fetch"] if kind == "signal" else []
    ways += ["wait_until", "poll test"] if not (sym.is_buffer and kind == "signal") else []
    how = random.Random(f"{w.seed}:{w.step}:wait").choice(ways)

    def poll(seen):
        deadline = time.monotonic() + POLL_SECONDS
        while not seen():
            if time.monotonic() > deadline:
                return f"{how}: {sym.label}[{e}] never became {value}"

    thunk = {
        "signal_wait": lambda: nvshmem.signal_wait(word, value, C.CMP_EQ),
        "signal_wait cmp=": lambda: nvshmem.signal_wait(word, value, cmp=C.CMP_EQ),
        "wait_until": lambda: nvshmem.wait_until(word, C.CMP_EQ, value),
        "poll signal_fetch": lambda: poll(lambda: nvshmem.signal_fetch(word) == value),
        "poll test": lambda: poll(lambda: nvshmem.test(word, C.CMP_EQ, value)),
    }[how]
    w.execute(
        ok(
            f"{how}({sym.label}[{e}] == {value}) for: {call.desc}",
            thunk,
            check=lambda problem: problem,
        ),
        calls,
    )
    if data:
        X, at, expected = data
        got = X.local()[at : at + len(expected)]
        if not (got == expected).all():
            w.fail(
                f"{X.label} bytes [{at}, +{len(expected)}) after the signal: got "
                f"{got.tolist()}, expected {expected.tolist()}",
                calls,
            )


def main():
    seed, steps = int(sys.argv[1]), int(sys.argv[2])
    nvshmem.init()
    trail = trail_writer(f"{sys.argv[3]}.{nvshmem.my_pe()}" if len(sys.argv) > 3 else None)
    w = World(seed, nvshmem.n_pes(), nvshmem.my_pe())
    pool.setup(w)
    nvshmem.barrier_all()
    kinds, weights = [k for k, _ in STEPS], [wt for _, wt in STEPS]
    for step in range(steps):
        w.begin(step)
        w.reach = None
        kind = w.shared.choices(kinds, weights)[0]
        calls = kind(w, w.shared)
        trail(f"{step}: {calls[w.me].desc}")
        w.execute(calls[w.me], calls)
        if w.reach is not None:
            await_incoming(w, calls)
        for fn in w.laters:
            fn()
        nvshmem.barrier_all()
        for call in calls:
            if call.thunk is not None and call.raises is None and call.effect is not None:
                call.effect()
        w.check_local(calls)
        # Nobody reaches this PE's memory in the next step before it has looked.
        # (A stream of its own: running this PE's call may have drawn from
        # w.shared, and the PEs must agree on which of the two they call.)
        step_end = random.Random(f"{seed}:{step}:end")
        (nvshmem.sync_all if step_end.random() < 0.5 else nvshmem.barrier_all)()
    trail("done")
    print(f"PE {w.me} OK calls={w.calls} steps={steps}", flush=True)
    if w.me == 0:
        print(
            "outcomes (name: succeeded/raised): "
            + ", ".join(
                f"{name}: {ok}/{raised}" for name, (ok, raised) in sorted(w.outcomes.items())
            )
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the pool's last arrays: finalize frees them
        nvshmem.finalize()


if __name__ == "__main__":
    main()
