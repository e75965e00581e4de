"""Generators that change the pool (_property_world.py): allocations and
frees, team splits and destroys, finalize and init. They are collective:
(w, r) -> [Call per PE], from the shared stream; what the pool becomes is
recorded through w.later (run on every PE after its call, before the step's
barrier, so a new allocation is filled before any peer can reach it)."""

import warnings

import numpy as np

import symmem as nvshmem
from _property_onesided import MALFORMED
from _property_world import BF16, ERR, INV, POOL_DTYPES, U64, Sym, TeamRec, bad, ok

T = nvshmem.Teams
NOT_INITIALIZED = "is not initialized"


# ---------------------------------------------------------------- memory


def allocate(w, r, factory=None, dt=None, count=None, may_fail=True):
    """array(), interop.numpy.empty(), bytearray() or buffer(), valid or (if
    may_fail) malformed."""
    factory = factory or r.choice(["array", "array", "empty", "bytearray", "buffer"])
    dt = dt or r.choice(POOL_DTYPES)
    if count is None:  # a few large ones (at most two live): copies past 64 KiB
        large = r.random() < 0.08 and sum(s.count > 4096 for s in w.syms) < 2
        count = 0 if r.random() < 0.05 else r.randint(8192, 16384) if large else r.randint(1, 40)
    shape = (count,)
    if factory != "buffer" and count > 3 and r.random() < 0.3:
        rows = r.choice([d for d in range(1, count + 1) if count % d == 0])
        shape = (rows, count // rows)
    order = r.choice(["C", "F"]) if len(shape) == 2 else "C"
    spelled = r.choice([dt.name, dt, dt.type]) if dt != BF16 else "bfloat16"
    plain_count = len(shape) == 1 and r.random() < 0.5  # array(5) for array((5,))
    size_type = r.choice([int, np.int64])
    fn = nvshmem.interop.numpy.empty if factory == "empty" else getattr(nvshmem, factory)
    call = "array" if factory == "empty" else factory  # what messages name
    label = w.label({"array": "A", "empty": "A", "bytearray": "Y", "buffer": "B"}[factory])
    what = f"{factory}{shape} of {dt}" + (f", morder={order}" if order != "C" else "")
    n = w.n
    if may_fail and r.random() < MALFORMED:
        exc, how, said, thunk = malformed_allocation(r, factory, fn)
        return [bad(f"{factory}: {how}", thunk, [f"{call}: {said}"], exc)] * n
    cell = []
    if factory == "buffer":
        nbytes = count * dt.itemsize
        what = f"buffer({nbytes})"

        def thunk():
            cell.append(fn(size_type(nbytes)))
            return cell[0]

        sym_dtype, sym_shape = np.uint8, (nbytes,)
    else:

        def thunk():
            if factory in ("array", "empty"):
                cell.append(fn(count if plain_count else shape, dtype=spelled, morder=order))
            else:
                cell.append(fn(shape, dtype=spelled))
            return cell[0]

        sym_dtype = np.uint8 if factory == "bytearray" else dt
        sym_shape = (count * dt.itemsize,) if factory == "bytearray" else shape

    def check(obj):
        if factory == "buffer":
            if not isinstance(obj, nvshmem.Buffer) or obj.size != sym_shape[0]:
                return f"returned {obj!r}"
        elif not isinstance(obj, np.ndarray) or obj.shape != sym_shape or (obj.dtype != sym_dtype):
            return (
                f"returned {type(obj).__name__} {getattr(obj, 'shape', '')} "
                f"{getattr(obj, 'dtype', '')}"
            )

    def record():
        obj = cell[0]
        buf = obj if factory == "buffer" else nvshmem.array_get_buffer(obj)[0]
        w.add(Sym(label, obj, buf, sym_dtype, sym_shape, n), f"{w.seed}:{w.step}:fill")

    w.later(record)
    return [ok(f"{what} -> {label}", thunk, check=check)] * n


def malformed_allocation(r, factory, fn):
    """(exception, what, what the message names, thunk): an allocation every
    PE must refuse."""
    if factory == "buffer":
        size, exc = r.choice(
            [
                (-1, INV),
                ("x", INV),
                (None, INV),
                (1.5, INV),
                (True, INV),
                (2**64, INV),
                (2**40, ERR),
            ]
        )
        return exc, f"size={size!r}", "size", lambda: fn(size)
    shape, dtype, morder, exc, said = r.choice(
        [
            entry
            for entry in [
                ((-1,), "int32", "C", INV, "shape="),
                ((2, -1), "int32", "C", INV, "shape="),
                ("x", "int32", "C", INV, "shape="),
                (2.5, "int32", "C", INV, "shape="),
                ((2, 2.5), "int32", "C", INV, "shape="),
                (None, "int32", "C", INV, "shape="),
                ((4,), object, "C", INV, "dtype="),
                ((4,), "nope", "C", INV, "dtype="),
                ((4,), "V8", "C", INV, "dtype="),
                ((4,), ">i4", "C", INV, "dtype="),
                ((4,), "U3", "C", INV, "dtype="),
                ((4,), [("a", "i4")], "C", INV, "dtype="),
                ((4,), "M8[s]", "C", INV, "dtype="),
                ((4,), "int32", "Z", INV, "morder="),
                ((2**61,), "int64", "C", INV, "size"),
                ((2**40,), "int8", "C", ERR, "size="),
            ]
            if factory != "bytearray" or entry[2] == "C"
        ]
    )
    if factory == "bytearray":
        return exc, f"shape={shape!r}, dtype={dtype!r}", said, lambda: fn(shape, dtype=dtype)
    if morder != "C":
        return exc, f"morder={morder!r}", said, lambda: fn(shape, dtype=dtype, morder=morder)
    return exc, f"shape={shape!r}, dtype={dtype!r}", said, lambda: fn(shape, dtype=dtype)


def release(w, r):
    """free_array() or free(), valid or malformed."""
    sym = r.choice(w.syms)
    n = w.n
    if r.random() < MALFORMED:
        choices = [
            ("free_array", "a private array", lambda: nvshmem.free_array(np.zeros(3))),
            ("free", "None", lambda: nvshmem.free(None)),
            ("free_array", "None", lambda: nvshmem.free_array(None)),
            ("free", "an int", lambda: nvshmem.free(42)),
        ]
        if sym.count >= 2:
            choices.append(
                (
                    "free_array",
                    f"{sym.label}[1:]",
                    lambda: nvshmem.free_array(sym.view(1, sym.count)),
                )
            )
        if not sym.is_buffer:
            choices.append(("free", f"the array {sym.label}", lambda: nvshmem.free(sym.obj)))
        if sym.nbytes:
            choices.append(
                (
                    "free",
                    f"a peer's view of {sym.label}",
                    lambda: nvshmem.free(
                        nvshmem.get_peer_buffer(sym.buf, (nvshmem.my_pe() + 1) % n)
                    ),
                )
            )
        if w.freed:
            old = r.choice(w.freed)
            choices.append(
                ("free_array", f"freed {old.label}", lambda: nvshmem.free_array(old.whole()))
            )
            choices.append(("free", f"freed {old.label}'s Buffer", lambda: nvshmem.free(old.buf)))
        call, how, thunk = r.choice(choices)
        return [bad(f"{call}({how})", thunk, [f"{call}:"])] * n
    how = r.randrange(3)
    if sym.is_buffer:
        call, thunk = (
            ("free", lambda: nvshmem.free(sym.buf))
            if how
            else ("free_array", lambda: nvshmem.free_array(sym.buf))
        )
    elif how == 0 and sym.nbytes:
        call, thunk = "free", lambda: nvshmem.free(sym.buf)
    else:
        call, thunk = "free_array", lambda: nvshmem.free_array(sym.obj)
    w.later(lambda: w.retire(sym))
    return [
        ok(
            f"{call}({sym.label})",
            thunk,
            check=lambda got: None if got is None else f"returned {got!r}",
        )
    ] * n


def memory(w, r):
    if len(w.syms) < 10 and (len(w.syms) < 4 or r.random() < 0.5):
        return allocate(w, r)
    return release(w, r)


# ---------------------------------------------------------------- teams


def parent_team(w, r):
    return w.predefined[0] if not w.teams or r.random() < 0.5 else r.choice(w.teams)


def split(w, r):
    """team_split_strided or team_split_2d of TEAM_WORLD or of a live team."""
    parent = parent_team(w, r)
    k = max(len(g) for g in parent.groups if g is not None)
    if r.random() < 0.6:
        size = r.randint(1, k)
        stride = r.randint(1, max(1, (k - 1) // max(1, size - 1))) if size > 1 else r.randint(1, 3)
        start = r.randint(0, k - 1 - (size - 1) * stride)
        args = [start, stride, size]
        if r.random() < MALFORMED:
            i = r.randrange(3)
            args[i] = r.choice(
                [-1, k, 2**31, None, "1", 1.5] if i == 0 else [0, -1, None, "2", 2**40, True]
            )
        return strided(w, r, parent, args)
    xrange = r.randint(1, k + 1)
    if r.random() < MALFORMED:
        xrange = r.choice([0, -1, None, "2", 2**40, 1.5])
    return two_d(w, r, parent, xrange)


def member_result(group, p, handle):
    """A check: handle is the Team p is member of (group), or None outside it."""
    if group is None or p not in group:
        return None if handle is None else f"returned {handle!r} to a PE outside the team"
    if not isinstance(handle, nvshmem.Team):
        return f"returned {handle!r}, expected a Team"
    if nvshmem.team_n_pes(handle) != len(group) or nvshmem.team_my_pe(handle) != group.index(p):
        return (
            f"team of {nvshmem.team_n_pes(handle)} PEs with me at "
            f"{nvshmem.team_my_pe(handle)}, expected {group}"
        )


def strided(w, r, parent, args):
    start, stride, size = args
    label = w.label("T")
    what = f"team_split_strided({parent.label}, {start!r}, {stride!r}, {size!r}) -> {label}"
    groups, calls = [], []
    for pe in range(w.n):
        g = parent.group(pe)
        valid = (
            g is not None
            and all(type(a) is int and abs(a) < 2**31 for a in args)
            and (size >= 1)
            and (stride >= 1 and 0 <= start < len(g) and start + (size - 1) * stride < len(g))
        )
        new = [g[start + i * stride] for i in range(size)] if valid else None
        groups.append(new if new and pe in new else None)
        thunk = lambda h=parent.handle(pe): nvshmem.team_split_strided(
            h, start, stride, size, new_team_name=label
        )
        if valid:
            calls.append(
                ok(what, thunk, check=lambda got, g=groups[-1], p=pe: member_result(g, p, got))
            )
        else:
            calls.append(bad(what, thunk, ["team_split_strided:"]))
    cell = []  # this PE's result, where its call succeeds
    calls[w.me].thunk = keep(calls[w.me].thunk, cell)
    if any(g is not None for g in groups):  # on every PE, member or not
        w.later(lambda: w.teams.append(TeamRec(label, groups, cell[0] if cell else None, w.me)))
    return calls


def keep(thunk, cell):
    def run():
        cell.append(thunk())
        return cell[-1]

    return run


def two_d(w, r, parent, xrange):
    xl, yl = w.label("X"), w.label("Y")
    what = f"team_split_2d({parent.label}, {xrange!r}) -> {xl}, {yl}"
    xgroups, ygroups, calls = [], [], []
    for pe in range(w.n):
        g = parent.group(pe)
        valid = g is not None and type(xrange) is int and 1 <= xrange < 2**31
        if valid:
            k, i = len(g), g.index(pe)
            xr = min(xrange, k)
            x, y = i % xr, i // xr
            xgroups.append(g[y * xr : min(y * xr + xr, k)])
            ygroups.append(g[x::xr])
        else:
            xgroups.append(None)
            ygroups.append(None)
        thunk = lambda h=parent.handle(pe): nvshmem.team_split_2d(h, xrange)  # noqa: E731
        if not valid:
            calls.append(bad(what, thunk, ["team_split_2d:"]))
            continue

        def check(got, p=pe, xg=xgroups[-1], yg=ygroups[-1]):
            if not isinstance(got, tuple) or len(got) != 2:
                return f"returned {got!r}"
            return member_result(xg, p, got[0]) or member_result(yg, p, got[1])

        calls.append(ok(what, thunk, check=check))
    cell = []
    calls[w.me].thunk = keep(calls[w.me].thunk, cell)

    def record():
        mine = cell[0] if cell else (None, None)
        w.teams.append(TeamRec(xl, xgroups, mine[0], w.me))
        w.teams.append(TeamRec(yl, ygroups, mine[1], w.me))

    if any(g is not None for g in xgroups):
        w.later(record)
    return calls


def team_init(w, r):
    """team_init over every PE, in a shuffled order."""
    order = list(range(w.n))
    r.shuffle(order)
    label = w.label("I")
    key = r.randrange(2**62) | 2
    config = nvshmem.TeamConfig(uniqueid=key)
    npes = w.n
    malformed = r.random() < MALFORMED
    if malformed:
        npes = r.choice([0, w.n + 1, -1, None, "2"])
    what = f"team_init(npes={npes!r}, order {order}) -> {label}"
    calls, cell = [], []
    for pe in range(w.n):
        idx = order.index(pe)
        if r.random() < 0.5:
            thunk = lambda i=idx: nvshmem.team_init(config, 0, npes, i)  # noqa: E731
        else:
            thunk = lambda i=idx: nvshmem.team_init(config, 0, n_pes=npes, my_pe=i)  # noqa
        if malformed:
            calls.append(bad(what, thunk, ["team_init:"]))
        else:
            calls.append(
                ok(
                    what,
                    keep(thunk, cell) if pe == w.me else thunk,
                    check=lambda got, p=pe: member_result(order, p, got),
                )
            )
    if not malformed:
        w.later(lambda: w.teams.append(TeamRec(label, [order] * w.n, cell[0], w.me)))
    return calls


def destroy(w, r):
    rec = r.choice(w.teams) if w.teams else None
    if rec is None or r.random() < MALFORMED:
        value = r.choice(
            [T.TEAM_WORLD, T.TEAM_SAME_MYPE_NODE, T.TEAM_NODE, None, "x", 99, 2**40]
            + (w.dead_teams[-1:] if not w.teams else [])
        )
        return [
            bad(f"team_destroy({value!r})", lambda: nvshmem.team_destroy(value), ["team_destroy:"])
        ] * w.n
    calls = []
    for pe in range(w.n):
        thunk = lambda h=rec.handle(pe): nvshmem.team_destroy(h)  # noqa: E731
        if rec.group(pe) is None:
            calls.append(bad(f"team_destroy({rec.label}) outside it", thunk, ["team_destroy:"]))
        else:
            calls.append(ok(f"team_destroy({rec.label})", thunk))

    def record():
        w.teams.remove(rec)
        if rec.mine is not None:
            w.dead_teams = (w.dead_teams + [int(rec.mine)])[-4:]

    w.later(record)
    return calls


def teams(w, r):
    if len(w.teams) >= 5 or (w.teams and r.random() < 0.3):
        return destroy(w, r)
    return split(w, r) if r.random() < 0.75 else team_init(w, r)


# ---------------------------------------------------------------- finalize and init


def lifecycle(w, r):
    """finalize (maybe twice), calls that must say "not initialized", then init
    (maybe twice) and a new pool."""
    twice_down, twice_up = r.random() < 0.3, r.random() < 0.3
    old = w.syms[0] if w.syms else None
    after = [
        ("barrier_all", lambda: nvshmem.barrier_all()),
        ("array", lambda: nvshmem.array(3)),
        ("team_split_strided", lambda: nvshmem.team_split_strided(T.TEAM_WORLD, 0, 1, 1)),
        ("quiet", lambda: nvshmem.quiet()),
    ]
    if old is not None and old.count:
        after += [
            ("put", lambda: nvshmem.put(old.whole(), old.view(0, 1), 0)),
            (
                "atomic_fetch",
                lambda: (
                    nvshmem.atomic_fetch(old.whole(), 0, dtype="int32")
                    if old.nbytes >= 4
                    else nvshmem.g(old.whole(), 0)
                ),
            ),
            ("reduce", lambda: nvshmem.reduce(T.TEAM_WORLD, old.whole(), old.whole(), "sum")),
        ]
    picked = r.sample(after, min(3, len(after)))

    def cycle():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the pool's arrays: finalize reports them
            nvshmem.finalize()
            if twice_down:
                nvshmem.finalize()
        problems = []
        for name, thunk in picked:
            try:
                thunk()
                problems.append(f"{name} after finalize returned")
            except INV as error:
                if NOT_INITIALIZED not in str(error) and "freed" not in str(error):
                    problems.append(f"{name} after finalize: {error}")
            except BaseException as error:  # noqa: B902
                problems.append(f"{name} after finalize: {type(error).__name__}: {error}")
        if nvshmem.my_pe() != -1:
            problems.append(f"my_pe() after finalize is {nvshmem.my_pe()}")
        nvshmem.init()
        if twice_up:
            nvshmem.init()
        return problems

    def record():
        for sym in list(w.syms):
            w.retire(sym)
        w.teams, w.dead_teams = [], []
        setup(w)

    w.later(record)
    return [
        ok(
            f"finalize{' x2' if twice_down else ''}, {[p[0] for p in picked]}, init"
            f"{' x2' if twice_up else ''}",
            cycle,
            check=lambda problems: "; ".join(problems) or None,
        )
    ] * w.n


def setup(w):
    """The pool a run starts with: a signal array and a few others."""
    r = w.shared
    first = [("array", U64, 8)] + [
        (
            r.choice(["array", "array", "buffer", "bytearray"]),
            r.choice(POOL_DTYPES),
            r.randint(1, 40),
        )
        for _ in range(5)
    ]
    for factory, dt, count in first:
        w.laters = []
        calls = allocate(w, r, factory, dt, count, may_fail=False)
        w.execute(calls[w.me], calls)
        for fn in w.laters:
            fn()
    w.laters = []
