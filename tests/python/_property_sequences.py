"""Generators where one call is not the whole story: a PE's calls in a row to
one peer (what quiet completes, what a later get or g must see), and every
PE at once on one element (atomics and signal adds must not lose updates;
the PE that owns the element waits for the last one)."""

import numpy as np

import symmem as nvshmem
from _property_onesided import INT_ATOMIC, atomic_result, one_value, rma
from _property_world import U64, draw_values, ok, same_value, skip

C, SIG = nvshmem.ComparisonType, nvshmem.SignalOp


def as_bytes(values, dtype):
    return np.frombuffer(np.array(values, dtype=dtype).tobytes(), np.uint8)


def in_a_row(w, ctx, p, r):
    """put (or put_nbi), quiet, get: the get sees the put; then p, quiet, g; and
    on integer elements fetch_add twice and a compare_swap that must hit."""
    X, t = ctx.X, ctx.perm[p]
    lo, hi = w.region(r, X, 1, 12)
    if hi == lo:
        return rma(w, ctx, p, r)
    dt, size = X.dtype, X.dtype.itemsize
    data = draw_values(r, dt, hi - lo)
    value = one_value(r, dt)
    put = r.choice([nvshmem.put, nvshmem.put_nbi])
    finish = r.choice([nvshmem.quiet, nvshmem.flush])
    atomics = dt in INT_ATOMIC and r.random() < 0.5
    after = np.frombuffer(data.tobytes(), np.uint8).copy()
    after[:size] = as_bytes([value], dt)
    steps = [f"{put.__name__}", f"{finish.__name__}", "get", "p", "quiet", "g"]
    if atomics:
        v1, v2 = (int(x) for x in draw_values(r, dt, 2))
        new = int(draw_values(r, dt, 1)[0])
        old = after[:size].view(dt)[0]
        mid, _ = atomic_result("atomic_fetch_add", dt, old, v1, None)
        end, _ = atomic_result("atomic_fetch_add", dt, mid, v2, None)
        after[:size] = as_bytes([new], dt)
        steps += ["atomic_fetch_add x2", "atomic_compare_swap"]
    what = f"in a row on {X.label}[{lo}:{hi}] of pe {t}: {', '.join(steps)}"

    def run():
        target = X.view(lo, hi)
        put(target, data, t)
        finish()
        got = np.zeros(hi - lo, dt)
        nvshmem.get(got, target, t)
        nvshmem.p(target, value, t)
        nvshmem.quiet()
        results = [got, nvshmem.g(target, t)]
        if atomics:
            results += [
                nvshmem.atomic_fetch_add(target, v1, t),
                nvshmem.atomic_fetch_add(target, v2, t),
                nvshmem.atomic_compare_swap(target, int(end), new, t),
            ]
        return results

    def check(results):
        if not np.array_equal(
            np.frombuffer(results[0].tobytes(), np.uint8), np.frombuffer(data.tobytes(), np.uint8)
        ):
            return f"get after {finish.__name__} saw {results[0]!r}, expected {data!r}"
        if not same_value(results[1], as_bytes([value], dt), dt):
            return f"g after p({value!r}) and quiet returned {results[1]!r}"
        if atomics and results[2:] != [int(old), int(mid), int(end)]:
            return f"the atomics returned {results[2:]}, expected {[int(old), int(mid), int(end)]}"

    def effect():
        X.model[t][lo * size : hi * size] = after

    return ok(what, run, check=check, effect=effect)


FAMILIES = {
    "add": ("atomic_add", "atomic_fetch_add", "atomic_inc", "atomic_fetch_inc"),
    "or": ("atomic_or", "atomic_fetch_or"),
    "xor": ("atomic_xor", "atomic_fetch_xor"),
    "and": ("atomic_and", "atomic_fetch_and"),
}


def crowd(w, r):
    """Every PE updates one element of one PE's copy at once (ops that commute),
    one to three times; the owner then waits until the element holds the
    result of all of them."""
    X = w.pick(r, lambda s: s.dtype in INT_ATOMIC and s.count and not s.is_buffer)
    if X is None:
        return [skip()] * w.n
    owner, e = r.randrange(w.n), r.randrange(X.count)
    dt, size = X.dtype, X.dtype.itemsize
    family = r.choice(list(FAMILIES) + (["signal"] if dt == U64 else []))
    value = X.model[owner][e * size : (e + 1) * size].view(dt)[0]
    plans = []
    for pe in range(w.n):
        pr = w.pe_random(pe)
        plan = []
        for _ in range(pr.randint(1, 3)):
            name = "signal_op" if family == "signal" else pr.choice(FAMILIES[family])
            operand = int(draw_values(pr, dt, 1)[0])
            plan.append((name, operand))
            op = "atomic_add" if name in ("signal_op", "atomic_inc", "atomic_fetch_inc") else name
            value, _ = atomic_result(op, dt, value, 1 if "inc" in name else operand, None)
        plans.append(plan)
    final = int(value)
    word = X.view(e, e + 1)
    calls = []
    for pe, plan in enumerate(plans):

        def run(plan=plan, pe=pe):
            for name, operand in plan:
                if name == "signal_op":
                    nvshmem.signal_op(word, operand, SIG.SIGNAL_ADD, owner)
                elif "inc" in name:
                    getattr(nvshmem, name)(word, owner)
                else:
                    getattr(nvshmem, name)(word, operand, owner)
            if pe == owner:  # the last update, whoever makes it, wakes this PE
                if family == "signal":
                    nvshmem.signal_wait(word, final, C.CMP_EQ)
                else:
                    nvshmem.wait_until(word, C.CMP_EQ, final)

        def effect(pe=pe):
            if pe == owner:
                X.model[owner][e * size : (e + 1) * size] = np.frombuffer(
                    np.array([final], dt).tobytes(), np.uint8
                )

        calls.append(
            ok(
                f"every PE on {X.label}[{e}] of pe {owner} ({family}): "
                f"{plans[pe]}, then {final} is awaited",
                run,
                effect=effect,
            )
        )
    return calls
