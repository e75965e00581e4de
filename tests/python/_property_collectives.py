"""Collective call generators of the property test: (w, r) -> [Call per PE],
drawn from the shared stream only, so that every PE calls the same thing
(a malformed argument is malformed on every PE, and every PE must raise).
A PE outside the team passes the handle it holds (None) and must raise.
Each member fills its src with values every PE knows before the call; the
model computes what each member's dst must then hold."""

import numpy as np

import symmem as nvshmem
from _property_onesided import MALFORMED, bad_memory
from _property_world import BF16, bad, draw_values, ok, skip

REDUCE = ("sum", "min", "max", "prod", "and", "or", "xor")
NUMPY_OPS = {
    "sum": np.add,
    "prod": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}
KINDS = ("reduce", "reducescatter", "alltoall", "fcollect", "broadcast")


class Op:
    """A reduction op given as an enum member would be: by its .name."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Op({self.name!r})"


def fold(op, dtype, blocks):
    """The reduction of blocks (one per member, in team order), as the library
    computes it: bool ops are logical, integers wrap, floats are exact here."""
    if dtype == np.bool_:
        rows = np.array([b.view(np.uint8) != 0 for b in blocks])
        if op in ("sum", "max", "or"):
            return rows.any(axis=0)
        if op in ("prod", "min", "and"):
            return rows.all(axis=0)
        return (rows.sum(axis=0) % 2).astype(bool)
    acc = blocks[0].copy()
    with np.errstate(all="ignore"):
        for block in blocks[1:]:
            acc = NUMPY_OPS[op](acc, block).astype(dtype)
    return acc


def pick_team(w, r):
    """A team for a collective: mostly TEAM_WORLD."""
    x = r.random()
    if x < 0.55 or not (w.teams or x > 0.85):
        return w.predefined[0]
    if x > 0.85:
        return r.choice(w.predefined)
    return r.choice(w.teams)


def bad_team(w, r):
    choices = [None, 99, -1, "x", True, 2**40, 1.5]
    if w.dead_teams and not w.teams:  # a handle no team holds now, on any PE
        choices.append(r.choice(w.dead_teams))
    return r.choice(choices)


def sizes(kind, k, r, most):
    """(src elements, dst elements needed) for a team of k: the block is
    src's size (reduce, broadcast, fcollect) or src / k (the others)."""
    if kind in ("alltoall", "reducescatter"):
        block = r.randint(0, max(0, most // k))
        return k * block, (k * block if kind == "alltoall" else block)
    m = r.randint(0, most if kind != "fcollect" else max(0, most // k))
    return m, (k * m if kind == "fcollect" else m)


def expected(kind, op, dtype, root, group, vals, p):
    """What member p's dst must hold."""
    blocks = [vals[q] for q in group]
    i, k = group.index(p), len(group)
    if kind == "reduce":
        return fold(op, dtype, blocks)
    if kind == "broadcast":
        return blocks[root]
    if kind == "fcollect":
        return np.concatenate(blocks)
    b = len(blocks[0]) // k
    if kind == "alltoall":
        return np.concatenate([blk[i * b : (i + 1) * b] for blk in blocks])
    return fold(op, dtype, blocks)[i * b : (i + 1) * b]


def collective(w, r):
    """reduce, reducescatter, alltoall, fcollect or broadcast."""
    kind = r.choice(KINDS)
    fn = getattr(nvshmem, kind)
    team = pick_team(w, r)
    ks = {len(g) for g in team.groups if g is not None}
    k = max(ks)
    src_sym = w.pick(r, lambda s: s.count >= 1)
    if src_sym is None:
        return [skip()] * w.n
    dt = src_sym.dtype
    dst_sym = w.pick(r, lambda s: s.dtype == dt) if r.random() < 0.7 else src_sym
    most = min(src_sym.count, 24 if r.random() < 0.9 else 4096)
    m, need = sizes(kind, k, r, most)
    if m == 0 and r.random() < 0.8:
        m, need = sizes(kind, k, r, most)
    slo = r.randint(0, src_sym.count - m)
    in_place = kind in ("reduce", "broadcast") and dst_sym is src_sym and r.random() < 0.5
    if in_place:
        dlo, dhi = slo, slo + m
    else:
        room = [
            lo
            for lo in range(dst_sym.count - need + 1)
            if dst_sym is not src_sym or lo + need <= slo or lo >= slo + m
        ]
        if not room:
            return [skip()] * w.n
        dlo = r.choice(room)
        dhi = dlo + need
        spare = [
            hi
            for hi in range(dhi, dst_sym.count + 1)
            if dst_sym is not src_sym or hi <= slo or dlo >= slo + m
        ]
        dhi = r.choice(spare)  # dst may be larger than needed
    op = r.choice(REDUCE) if kind in ("reduce", "reducescatter") else None
    root = r.randrange(k) if kind == "broadcast" else None
    vals = [None] * w.n
    for pe in range(w.n):
        if team.group(pe) is not None:
            vals[pe] = draw_values(w.pe_random(pe), dt, m, nice=True)
    w.fill(src_sym, slo, slo + m, vals)
    src, dst = src_sym.view(slo, slo + m), dst_sym.view(dlo, dhi)
    if src_sym.is_buffer and slo == 0 and m == src_sym.count and r.random() < 0.5:
        src = src_sym.whole()
    what = (
        f"{kind}({team.label}, {dst_sym.label}[{dlo}:{dhi}], {src_sym.label}[{slo}:"
        f"{slo + m}] ({dt})"
        + (f", {op}" if op else "")
        + (f", root={root}" if root is not None else "")
        + ")"
    )
    op_arg = r.choice([op, op.upper() if op else op, Op(op.upper()) if op else op])
    extra = ([op_arg] if op else []) + ([root] if root is not None else [])
    words = [f"{kind}:"]  # a call that looks valid but is not: sizes, root or op

    def thunk_for(handle, d=dst, s=src, more=tuple(extra), **kw):
        if r.random() < 0.3 and not kw:
            names = {"reduce": "op", "reducescatter": "op", "broadcast": "root"}
            kw = {"dst_array": d, "src_array": s}
            if kind in names:
                kw[names[kind]] = more[0]
            return lambda: fn(handle, **kw)
        return lambda: fn(handle, d, s, *more, **kw)

    bitwise_float = op in ("and", "or", "xor") and (dt.kind == "f" or dt == BF16)
    malformed = r.random() < MALFORMED and len(ks) == 1  # the same mistake for every row
    if malformed:
        how, arg, thunk = malformed_collective(
            w, r, kind, fn, dst, src_sym, slo, extra, k, m, need, dt, dst_sym, dlo
        )
    calls = []
    for pe in range(w.n):
        group = team.group(pe)
        handle = team.handle(pe)
        if group is None:
            calls.append(bad(f"{what} outside the team", thunk_for(None), [f"{kind}: team"]))
            continue
        # A 2-D split's rows may differ in size: each row is its own collective.
        kp = len(group)
        uneven = kind in ("alltoall", "reducescatter") and m % kp
        need_p = {"fcollect": kp * m, "reducescatter": m // kp}.get(kind, m)
        if malformed:  # (a bitwise op on floats may be named first)
            said = f"{kind}: " if bitwise_float else f"{kind}: {arg}"
            calls.append(bad(f"{what} with {how}", thunk(handle), [said]))
        elif bitwise_float or uneven or need_p > dhi - dlo or (kind == "broadcast" and root >= kp):
            calls.append(
                bad(
                    f"{what}: bitwise op on floats, or sizes or root do not fit a team of {kp}",
                    thunk_for(handle),
                    words,
                )
            )
        else:
            calls.append(
                ok(
                    what,
                    thunk_for(handle),
                    effect=store(dst_sym, dlo, pe, expected(kind, op, dt, root, group, vals, pe)),
                )
            )
    return calls


def store(sym, lo, pe, values):
    """An effect: PE pe's elements from lo on hold values."""
    at = lo * sym.dtype.itemsize
    data = np.frombuffer(np.ascontiguousarray(values).astype(sym.dtype).tobytes(), np.uint8)

    def effect():
        sym.model[pe][at : at + len(data)] = data

    return effect


def malformed_collective(w, r, kind, fn, dst, src_sym, slo, extra, k, m, need, dt, dst_sym, dlo):
    """(what, what the message names, handle -> thunk) for one argument made
    wrong the same way on every PE."""
    src = src_sym.view(slo, slo + m)
    choices = ["team", "dst", "src", "args", "stream"]
    # dst over part of src (only reduce and broadcast may have them the very same)
    exact = kind in ("reduce", "broadcast")
    shifts = [
        d
        for d in range(-need + 1, m)
        if 0 <= slo + d and slo + d + need <= src_sym.count and not (d == 0 and exact)
    ]
    if need and m and shifts:
        choices.append("overlap")
    if need > 0:
        choices.append("small")
    if kind in ("reduce", "reducescatter"):
        choices.append("op")
    if kind == "broadcast":
        choices.append("root")
    if kind in ("alltoall", "reducescatter") and k > 1 and m > 0:
        choices.append("uneven")
    if dt.itemsize in (2, 4, 8) and need > 0:
        choices.append("mismatch")
    kind_of = r.choice(choices)
    if kind_of == "team":
        value = bad_team(w, r)
        return f"team={value!r}", "team", lambda h: lambda: fn(value, dst, src, *extra)
    if kind_of in ("dst", "src"):
        if r.random() < 0.3 and (m if kind_of == "src" else need):
            obj = np.zeros(m if kind_of == "src" else need, dt)
            how = "a private array"
        elif r.random() < 0.5 and len(src if kind_of == "src" else dst):
            view = src if kind_of == "src" else dst
            how, obj = symmetric_bad(r, view, kind_of == "dst")
        else:
            how, obj = bad_memory(w, r, kind_of == "dst")
        d, s = (obj, src) if kind_of == "dst" else (dst, obj)
        return f"{kind_of} {how}", kind_of, lambda h: lambda: fn(h, d, s, *extra)
    if kind_of == "overlap":
        d = r.choice(shifts)
        over = src_sym.view(slo + d, slo + d + need)
        return (
            f"dst {src_sym.label}[{slo + d}:{slo + d + need}] over src",
            "dst",
            lambda h: lambda: fn(h, over, src, *extra),
        )
    if kind_of == "small":
        small = dst_sym.view(dlo, dlo + need - 1)
        return f"dst of {need - 1} elements", "dst", lambda h: lambda: fn(h, small, src, *extra)
    if kind_of == "op":
        value = r.choice(["avg", None, 3, "", Op("mean"), "summ"])
        return f"op={value!r}", "op=", lambda h: lambda: fn(h, dst, src, value)
    if kind_of == "root":
        value = r.choice([k, -1, 2**31, None, "0", 1.5, 2**63])
        return f"root={value!r}", "root", lambda h: lambda: fn(h, dst, src, value)
    if kind_of == "uneven":
        return f"src of {m - 1} elements", "src", lambda h: lambda: fn(h, dst, src[: m - 1], *extra)
    if kind_of == "mismatch":
        other = {1: "int8", 2: "int16", 4: "float32", 8: "float64"}[dt.itemsize]
        other = "uint" + str(8 * dt.itemsize) if np.dtype(other) == dt else other
        return f"dst as {other}", "dst", lambda h: lambda: fn(h, dst.view(other), src, *extra)
    if kind_of == "stream":
        value = r.choice(["x", -1, object()])
        return (
            f"stream={value!r}",
            "stream",
            lambda h: lambda: fn(h, dst, src, *extra, stream=value),
        )
    how, said, a = r.choice(
        [
            ("too few arguments", "missing required argument 'src'", (dst,)),
            ("too many arguments", "takes at most", (dst, src, *extra, None, 1, 2)),
        ]
    )
    return how, said, lambda h: lambda: fn(h, *a)


def symmetric_bad(r, view, written):
    """A malformed form of a symmetric view: not contiguous, byte-swapped,
    structured or read-only."""
    options = [("a structured view", view.view([("f", view.dtype)]))]
    if view.dtype.itemsize > 1 and view.dtype != BF16:
        options.append(("a byte-swapped view", view.view(view.dtype.newbyteorder())))
    if len(view) >= 3:
        options.append(("a non-contiguous view", view[::2]))
    if written:
        ro = view.view()
        ro.flags.writeable = False
        options.append(("a read-only view", ro))
    return r.choice(options)


def sync(w, r):
    """barrier_all, sync_all, barrier and sync over a team."""
    name = r.choice(["barrier_all", "sync_all", "barrier", "sync"])
    fn = getattr(nvshmem, name)
    stream = r.choice([None, None, 0])
    if name.endswith("_all"):
        if r.random() < MALFORMED:
            value = r.choice(["x", -1, object()])
            if r.random() < 0.5:
                return [
                    bad(f"{name}(stream={value!r})", lambda: fn(stream=value), [f"{name}: stream"])
                ] * w.n
            return [bad(f"{name}(None, 1)", lambda: fn(None, 1), [f"{name}: takes at most"])] * w.n
        return [ok(f"{name}(stream={stream!r})", lambda: fn(stream=stream))] * w.n
    team = pick_team(w, r)
    if r.random() < MALFORMED:
        value = bad_team(w, r)
        return [bad(f"{name}({value!r})", lambda: fn(value), [f"{name}: team"])] * w.n
    calls = []
    for pe in range(w.n):
        handle = team.handle(pe)
        if team.group(pe) is None:
            calls.append(
                bad(f"{name}({team.label}) outside it", lambda: fn(None), [f"{name}: team is None"])
            )
        else:
            calls.append(
                ok(f"{name}({team.label}, stream={stream!r})", lambda h=handle: fn(h, stream))
            )
    return calls


def on_buffers(w, r):
    """collective_on_buffer on two Buffers, with a dtype to read them as."""
    bufs = [s for s in w.syms if s.is_buffer and s.count >= 8]
    if len(bufs) < 2:
        return collective(w, r)
    src_sym, dst_sym = r.sample(bufs, 2)
    dt = np.dtype(r.choice(["int32", "uint8", "float32", "int64", "float64", "int16"]))
    alias = {
        "int32": "int",
        "float32": "float",
        "float64": "double",
        "int64": "long",
        "int16": "short",
        "uint8": "uchar",
    }[dt.name]
    coll = r.choice(["reduce", "broadcast", "fcollect"])
    n = w.n
    m = src_sym.nbytes // dt.itemsize
    need = m * n if coll == "fcollect" else m
    op = r.choice(REDUCE) if coll == "reduce" else None
    vals = [draw_values(w.pe_random(pe), dt, m, nice=True) for pe in range(n)]
    w.fill(src_sym, 0, m * dt.itemsize, [np.frombuffer(v.tobytes(), np.uint8) for v in vals])
    what = f"collective_on_buffer({coll!r}, WORLD, {dst_sym.label}, {src_sym.label}, {alias}, {op})"
    thunk = lambda: nvshmem.collective_on_buffer(
        coll, nvshmem.Teams.TEAM_WORLD, dst_sym.whole(), src_sym.whole(), alias, op, 0
    )
    if r.random() < MALFORMED:
        value = r.choice(["allreduce", None, 3])
        return [
            bad(
                f"{what} with coll={value!r}",
                lambda: nvshmem.collective_on_buffer(
                    value, 0, dst_sym.whole(), src_sym.whole(), alias, op
                ),
                ["collective_on_buffer:"],
            )
        ] * n
    if need * dt.itemsize > dst_sym.nbytes or (op in ("and", "or", "xor") and dt.kind == "f"):
        return [bad(f"{what}: dst too small or bitwise on floats", thunk, [f"{coll}:"])] * n
    group = list(range(n))
    return [
        ok(what, thunk, effect=store_bytes(dst_sym, pe, expected(coll, op, dt, 0, group, vals, pe)))
        for pe in range(n)
    ]


def store_bytes(sym, pe, values):
    data = np.frombuffer(np.ascontiguousarray(values).tobytes(), np.uint8)

    def effect():
        sym.model[pe][: len(data)] = data

    return effect
