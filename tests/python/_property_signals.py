"""Signal, wait, peer-view and query generators of the property test, shaped
like _property_onesided.py's: (w, ctx, p, r) -> Call."""

import numpy as np

import symmem as nvshmem
from _property_onesided import (
    MALFORMED,
    bad_memory,
    bad_pe,
    bad_symmetric_view,
    content,
    nbytes_of,
    private,
)
from _property_world import U64, bad, draw_values, ok

C, SIG = nvshmem.ComparisonType, nvshmem.SignalOp
try:  # the torch factories are checked only without torch
    import torch

    HAVE_TORCH = torch is not None
except ImportError:
    HAVE_TORCH = False
CMPS = {
    C.CMP_EQ: np.equal,
    C.CMP_NE: np.not_equal,
    C.CMP_GT: np.greater,
    C.CMP_LE: np.less_equal,
    C.CMP_LT: np.less,
    C.CMP_GE: np.greater_equal,
}
INTS = {
    np.dtype(d) for d in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
}


def signal_word(w, r, S, e):
    """An object naming element e of signal allocation S."""
    if S.is_buffer or (e == 0 and r.random() < 0.4):
        return S.whole()
    return S.view(e, r.randint(e + 1, S.count))


def signal_args(r):
    """(value as passed, value as stored, op as passed, is ADD)."""
    value = r.choice(
        [0, 1, 7, 2**63, 2**64 - 1, r.randrange(2**64), -1, -(2**63), np.uint64(5), np.int64(-3)]
    )
    op = r.choice([SIG.SIGNAL_SET, SIG.SIGNAL_ADD, 9, 10, np.int32(10)])
    return value, int(value) % 2**64, op, int(op) == 10


def put_signal(w, ctx, p, r):
    """put_signal, put_signal_nbi and signal_op into PE perm[p]'s X and S."""
    X, S, t = ctx.X, ctx.S, ctx.perm[p]
    name = r.choice(["put_signal", "put_signal_nbi", "signal_op"])
    fn = getattr(nvshmem, name)
    e = 0 if S.is_buffer else r.randrange(S.count)
    sig = signal_word(w, r, S, e)
    value, stored, op, add = signal_args(r)
    old = int(S.model[t][8 * e : 8 * e + 8].view(U64)[0])
    new = (old + stored) % 2**64 if add else stored
    data = ()
    if name != "signal_op":
        lo, hi = w.region(r, X, 0, 12)
        dst = w.sym_arg(r, X, lo, hi)
        src, Z, zlo = private(w, ctx, r, X.dtype, r.randint(0, 12), False)
        data = (dst, src)
        moved = content(w, p, src, Z, zlo)
        nbytes = min(nbytes_of(dst), len(moved))
        moved = moved[:nbytes]
        at = lo * X.dtype.itemsize
    what = (
        f"{name}({'%s[%d:%d], ' % (X.label, lo, hi) if data else ''}{S.label}[{e}], "
        f"{value!r}, {op!r}, pe {t})"
    )
    if r.random() < MALFORMED:
        kind = r.choice(["sig", "sig", "value", "op", "pe", "data", "args"])
        if kind == "sig":
            choices = [("an empty view", S.view(e, e)), ("a private word", np.zeros(1, U64))]
            other = w.pick(r, lambda s: s.dtype != U64 and s.count and not s.is_buffer)
            if other is not None:  # refused before any PE is reached
                choices.append((f"{other.label} ({other.dtype})", other.view(0, 1)))
            choices.append(bad_memory(w, r, True))
            if not S.is_buffer:
                choices.append(bad_symmetric_view(w, r, S, e, e + 1, True))
            how, bad_sig = r.choice(choices)
            return bad(
                f"{what} with signal_var {how}",
                lambda: fn(*data, bad_sig, value, op, t),
                [f"{name}: signal_var"],
            )
        if kind == "value":
            bad_value = r.choice([2**64, -(2**63) - 1, None, "x", 1.5, np.float64(1)])
            return bad(
                f"{what} with signal_val={bad_value!r}",
                lambda: fn(*data, sig, bad_value, op, t),
                [f"{name}: signal_val"],
            )
        if kind == "op":
            bad_op = r.choice([0, 8, 11, -1, None, "SIGNAL_SET", 9.0, C.CMP_EQ])
            return bad(
                f"{what} with signal_op={bad_op!r}",
                lambda: fn(*data, sig, value, bad_op, t),
                [f"{name}: signal_op"],
            )
        if kind == "pe":
            pe = bad_pe(r, w.n)
            return bad(
                f"{what} with remote_pe={pe!r}",
                lambda: fn(*data, sig, value, op, pe),
                [f"{name}: remote_pe"],
            )
        if kind == "data" and data:
            which = r.randrange(2)
            how, v = bad_memory(w, r, which == 0)  # a read-only src is fine
            bad_data = (v, data[1]) if which == 0 else (data[0], v)
            arg = ("dst", "src")[which]
            return bad(
                f"{what} with {arg} {how}",
                lambda: fn(*bad_data, sig, value, op, t),
                [f"{name}: {arg}"],
            )
        return bad(
            f"{what} without remote_pe",
            lambda: fn(*data, sig, value, op),
            [f"{name}: missing required argument 'remote_pe'"],
        )

    def effect():
        if data:
            X.model[t][at : at + nbytes] = moved
        S.model[t][8 * e : 8 * e + 8] = np.frombuffer(np.uint64(new).tobytes(), np.uint8)

    wake = None
    if new != old:
        wake = ("signal", S, e, new, (X, at, moved.copy()) if data else None)
    return ok(what, lambda: fn(*data, sig, value, op, t), effect=effect, wake=wake)


# ---------------------------------------------------------------- this PE's waits


def holding(r, cmp, current, dt):
    """A value v for which `current cmp v` holds (None if none in dt's range)."""
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    c = int(current)
    holds = {
        C.CMP_EQ: c.__eq__,
        C.CMP_NE: c.__ne__,
        C.CMP_GT: c.__gt__,
        C.CMP_LE: c.__le__,
        C.CMP_LT: c.__lt__,
        C.CMP_GE: c.__ge__,
    }[cmp]
    candidates = [v for v in (c, c + 1, c - 1, lo, hi) if lo <= v <= hi and holds(v)]
    return r.choice(candidates) if candidates else None


def local_wait(w, ctx, p, r):
    """test, wait_until, signal_wait and signal_fetch on this PE's own copy of an
    allocation no other PE reaches in this step."""
    name = r.choice(["test", "test", "wait_until", "signal_wait", "signal_fetch"])
    fn = getattr(nvshmem, name)
    wants_u64 = name.startswith("signal")
    Z = w.pick(
        r, lambda s: s not in ctx.busy and s.count and (s.dtype == U64 if wants_u64 else True)
    )
    if Z is None and wants_u64:  # no signal word of its own: a test instead
        name, fn, wants_u64 = "test", nvshmem.test, False
        Z = w.pick(r, lambda s: s not in ctx.busy and s.count)
    if Z is None:
        return ok("fence()", nvshmem.fence)
    lo = r.randrange(Z.count)
    ivar = Z.view(lo, r.randint(lo + 1, Z.count))
    arg = "signal_var" if wants_u64 else "ivar"
    cmp = r.choice(list(CMPS))
    valid_dtype = Z.dtype in INTS
    current = Z.values(p, lo, lo + 1)[0]
    value = holding(r, cmp, current, Z.dtype) if valid_dtype else 0
    if name == "signal_fetch":
        what = f"signal_fetch({Z.label}[{lo}])"
        if r.random() < MALFORMED:
            how, v = (
                bad_memory(w, r, False)
                if r.random() < 0.5
                else ("a private word", np.zeros(1, U64))
            )
            return bad(f"signal_fetch of {how}", lambda: fn(v), ["signal_fetch: signal_var"])

        def check(got):
            if got != int(current):
                return f"returned {got!r}, expected {int(current)}"

        return ok(what, lambda: fn(ivar), check=check)
    if value is None:
        cmp, value = C.CMP_EQ, int(current) if valid_dtype else 0
    if name == "test" and valid_dtype and r.random() < 0.5:  # one that need not hold
        value = int(draw_values(r, Z.dtype, 1)[0])
    args = (ivar, value, cmp) if name == "signal_wait" else (ivar, cmp, value)
    what = f"{name}({Z.label}[{lo}] = {current!r} ({Z.dtype}), {C(cmp).name}, {value!r})"
    if r.random() < MALFORMED:
        kind = r.choice(["cmp", "value", "memory", "args"])
        if kind == "cmp":
            bad_cmp = r.choice([6, -1, None, "CMP_EQ", 1.5, 2**70])
            a = (ivar, value, bad_cmp) if name == "signal_wait" else (ivar, bad_cmp, value)
            return bad(f"{what} with cmp={bad_cmp!r}", lambda: fn(*a), [f"{name}: cmp"])
        if kind == "value":
            info = np.iinfo(Z.dtype) if valid_dtype else np.iinfo("int64")
            bad_value = r.choice([None, "x", 1.5, int(info.max) + 1, int(info.min) - 1, 2**64 + 1])
            if name == "signal_wait" and isinstance(bad_value, int) and -(2**63) <= bad_value:
                bad_value = 2**64  # signal values wrap from [-2**63, 0)
            a = (ivar, bad_value, cmp) if name == "signal_wait" else (ivar, cmp, bad_value)
            said = (
                "signal_val"
                if name == "signal_wait"
                else "value"
                if (valid_dtype or not isinstance(bad_value, int))
                else ""
            )  # else: not an integer
            return bad(f"{what} with value={bad_value!r}", lambda: fn(*a), [f"{name}: {said}"])
        if kind == "memory":
            choices = [
                bad_memory(w, r, False),
                ("an empty view", Z.view(lo, lo)),
                ("a private element", np.zeros(2, Z.dtype)),
            ]
            how, v = r.choice(choices)
            a = (v,) + args[1:]
            return bad(f"{what} on {how}", lambda: fn(*a), [f"{name}: {arg}"])
        if name == "signal_wait":
            return bad(
                f"{what} with both signal_op= and cmp=",
                lambda: fn(ivar, value, cmp, cmp=cmp),
                [f"{name}: give signal_op= or cmp="],
            )
        return bad(
            f"{what} without value",
            lambda: fn(ivar, cmp),
            [f"{name}: missing required argument 'value'"],
        )
    if not valid_dtype or (wants_u64 and Z.dtype != U64):
        return bad(f"{what}: not an integer element", lambda: fn(*args), [f"{name}: {arg}"])
    if name == "test":
        holds = bool(CMPS[cmp](Z.dtype.type(current), Z.dtype.type(value)))

        def check(got):
            if got is not holds:
                return f"returned {got!r}, expected {holds}"

        return ok(what, lambda: fn(*args), check=check)
    return ok(
        what, lambda: fn(*args), check=lambda got: None if got is None else f"returned {got!r}"
    )


# ---------------------------------------------------------------- peer views


def peer_view(w, ctx, p, r):
    """Stores into, or loads from, PE perm[p]'s X through get_peer_array or
    get_peer_buffer."""
    X, t = ctx.X, ctx.perm[p]
    lo, hi = w.region(r, X, 0, 12)
    call = "get_peer_buffer" if X.is_buffer and r.random() < 0.5 else "get_peer_array"
    what = f"{call}({X.label}[{lo}:{hi}], {t})"
    if r.random() < MALFORMED:
        kind = r.choice(["pe", "memory", "type"])
        if kind == "pe":
            pe = bad_pe(r, w.n)
            obj = X.whole() if call == "get_peer_buffer" else X.view(lo, hi)
            return bad(
                f"{what} with pe={pe!r}", lambda: getattr(nvshmem, call)(obj, pe), [f"{call}:"]
            )
        if kind == "type":
            obj = (
                X.view(lo, hi)
                if call == "get_peer_buffer"
                else (X.buf if X.is_buffer else np.zeros(3))
            )
            return bad(
                f"{what} of a {type(obj).__name__}",
                lambda: getattr(nvshmem, call)(obj, t),
                [f"{call}:"],
            )
        how, obj = bad_memory(w, r, False)
        return bad(f"{what} of {how}", lambda: getattr(nvshmem, call)(obj, t), [f"{call}:"])
    size = X.dtype.itemsize

    part = r.random() < 0.5 or X.is_buffer  # get_peer_array of a view, or of the whole

    def view():
        if call == "get_peer_buffer":
            return np.frombuffer(nvshmem.get_peer_buffer(X.whole(), t), np.uint8)[lo:hi]
        peer = nvshmem.get_peer_array(X.view(lo, hi) if part else X.whole(), t)
        return peer if part else peer.ravel(order="K")[lo:hi]

    if r.random() < 0.5:
        want = X.model[t][lo * size : hi * size].copy()

        def load():
            return view().tobytes()

        def check(got):
            if got != want.tobytes():
                return f"loaded {list(got)}, expected {want.tolist()}"

        return ok(f"{what}: load", load, check=check)
    data = draw_values(r, X.dtype, hi - lo)

    def store():
        view()[:] = data

    def effect():
        X.model[t][lo * size : hi * size] = np.frombuffer(data.tobytes(), np.uint8)

    return ok(f"{what}: store {data.tolist()}", store, effect=effect)


# ---------------------------------------------------------------- queries


def query(w, ctx, p, r):
    """Calls that only look: quiet, fence, PE and team numbers, buffers,
    versions, and what the cpu backend lacks."""
    choice = r.randrange(11)
    live = w.teams + w.predefined
    if choice == 0:
        stream = r.choice([None, 0, "x", object(), -1])
        fn = r.choice([nvshmem.quiet, nvshmem.flush])
        what = f"{fn.__name__}(stream={stream!r})"
        if isinstance(stream, int) and stream >= 0 or stream is None:
            return ok(what, lambda: fn(stream=stream))
        return bad(what, lambda: fn(stream=stream), ["quiet:"])
    if choice == 1:
        stream = r.choice([None, 0, "x", object(), -1])
        what = f"fence(stream={stream!r})"
        if isinstance(stream, int) and stream >= 0 or stream is None:
            return ok(what, lambda: nvshmem.fence(stream=stream))
        return bad(what, lambda: nvshmem.fence(stream=stream), ["fence:"])
    if choice == 2:

        def check(got):
            if got != (w.me, w.n):
                return f"returned {got}"

        return ok("my_pe(), n_pes()", lambda: (nvshmem.my_pe(), nvshmem.n_pes()), check=check)
    if choice == 3 and (live or r.random() < 0.3):
        rec = r.choice(live) if live else None
        handle = rec.handle(p) if rec else r.choice([None, 99, -1, "x", 2**40, True])
        group = rec.group(p) if rec else None
        name = r.choice(["team_my_pe", "team_n_pes", "team_translate_pe"])
        what = f"{name}({rec!r} handle {handle!r})"
        if group is None:
            args = (
                (handle,) if name != "team_translate_pe" else (handle, 0, nvshmem.Teams.TEAM_WORLD)
            )
            return bad(what, lambda: getattr(nvshmem, name)(*args), [f"{name}:"])
        if name == "team_translate_pe":
            k = r.randrange(-1, len(group) + 1)
            if not 0 <= k < len(group):
                return bad(
                    f"{what} of member {k}",
                    lambda: nvshmem.team_translate_pe(handle, k, nvshmem.Teams.TEAM_WORLD),
                    [f"{name}:"],
                )
            return ok(
                f"{what} of member {k}",
                lambda: nvshmem.team_translate_pe(handle, k, nvshmem.Teams.TEAM_WORLD),
                check=lambda got: None if got == group[k] else f"returned {got}",
            )
        want = group.index(p) if name == "team_my_pe" else len(group)
        return ok(
            what,
            lambda: getattr(nvshmem, name)(handle),
            check=lambda got: None if got == want else f"returned {got}, expected {want}",
        )
    if choice == 4 and w.syms:
        sym = r.choice(w.syms)

        def check(got):
            buf, nbytes, name = got
            if (
                (sym.nbytes and buf is not sym.buf)
                or nbytes != sym.nbytes
                or (name != sym.dtype.name)
            ):
                return f"returned {got!r}"

        return ok(
            f"array_get_buffer({sym.label})",
            lambda: nvshmem.array_get_buffer(sym.whole()),
            check=check,
        )
    if choice == 5 and w.freed:
        old = r.choice(w.freed)
        fn = r.choice(
            ["array_get_buffer", "get_peer_array", "free_array"]
            if not old.is_buffer
            else ["get_peer_buffer", "free"]
        )
        args = (old.whole(), ctx.perm[p]) if fn.startswith("get_peer") else (old.whole(),)
        return bad(f"{fn}(freed {old.label})", lambda: getattr(nvshmem, fn)(*args), [f"{fn}:"])
    if choice == 6:
        name = r.choice(
            [
                "get_multicast_array",
                "get_multicast_buffer",
                "register_external_array",
                "register_external_buffer",
            ]
        )
        obj = r.choice(w.syms).whole() if w.syms and name.startswith("get") else np.zeros(4)
        args = (nvshmem.Teams.TEAM_WORLD, obj) if name.startswith("get") else (obj,)
        return bad(
            f"{name}(...) on the cpu backend",
            lambda: getattr(nvshmem, name)(*args),
            [f"{name}:", "cpu"],
            NotImplementedError,
        )
    if choice == 7:
        data = r.choice([None, 5, "x" * 8, b"short", b"\0" * 7])
        return bad(
            f"UniqueID.from_bytes({data!r})",
            lambda: nvshmem.UniqueID.from_bytes(data),
            ["UniqueID.from_bytes"],
        )
    if choice == 9:
        return team_query(w, p, r, live)
    if choice == 10:
        return odd_calls(w, p, r)
    return ok(
        "get_version(), init_status()",
        lambda: (nvshmem.get_version(), nvshmem.init_status()),
        check=lambda got: (
            None if got[0].backend == "cpu" and int(got[1]) == 2 else f"returned {got}"
        ),
    )


def team_query(w, p, r, live):
    """team_get_config, and team_translate_pe into any team."""
    src, dest = r.choice(live), r.choice(live)
    group, dest_group = src.group(p), dest.group(p)
    if r.random() < 0.3:
        what = f"team_get_config({src!r})"
        if group is None:
            return bad(
                what, lambda: nvshmem.team_get_config(src.handle(p)), ["team_get_config: team"]
            )
        return ok(
            what,
            lambda: nvshmem.team_get_config(src.handle(p)),
            check=lambda got: None if isinstance(got, nvshmem.TeamConfig) else f"returned {got!r}",
        )
    k = r.randrange(len(group)) if group else 0
    what = f"team_translate_pe({src!r}, {k}, {dest!r})"
    thunk = lambda: nvshmem.team_translate_pe(src.handle(p), k, dest.handle(p))  # noqa: E731
    if group is None or dest_group is None:
        return bad(
            what, thunk, ["team_translate_pe: " + ("src_team" if group is None else "dest_team")]
        )
    want = dest_group.index(group[k]) if group[k] in dest_group else -1
    return ok(
        what, thunk, check=lambda got: None if got == want else f"returned {got!r}, expected {want}"
    )


def odd_calls(w, p, r):
    """Unique ids, a second init, unregistering what was never registered, and
    (where torch is missing) the torch factories."""
    choice = r.randrange(5)
    if choice == 4:  # does nothing; refuses what is malformed all the same
        kwargs = r.choice(
            [
                {},
                {"backend": "cpu"},
                {"initializer_method": "auto"},
                {"initializer_method": "nope"},
                {"backend": "bogus"},
                {"backend": 5},
                {"device": -1},
                {"device": "x"},
            ]
        )
        what = f"init(**{kwargs}) while initialized"
        if kwargs in ({}, {"backend": "cpu"}, {"initializer_method": "auto"}):
            return ok(what, lambda: nvshmem.init(**kwargs))
        return bad(what, lambda: nvshmem.init(**kwargs), [f"init: {next(iter(kwargs))}"])
    if choice == 0:
        fn = r.choice([nvshmem.get_unique_id, nvshmem.get_team_unique_id])

        def check(uid):
            if not isinstance(uid, nvshmem.UniqueID) or (
                nvshmem.UniqueID.from_bytes(bytes(uid)) != uid
            ):
                return f"returned {uid!r}, which does not round-trip through bytes"

        return ok(f"{fn.__name__}()", fn, check=check)
    if choice == 1 and w.syms:
        sym = r.choice(w.syms)
        if sym.is_buffer or r.random() < 0.5:
            return bad(
                f"unregister_external_buffer({sym.label})",
                lambda: nvshmem.unregister_external_buffer(sym.buf),
                ["unregister_external_buffer: expected the object"],
            )
        return bad(
            f"unregister_external_array({sym.label})",
            lambda: nvshmem.unregister_external_array(sym.whole()),
            ["unregister_external_array:"],
        )
    if HAVE_TORCH:
        return ok("fence()", nvshmem.fence)
    name = r.choice(
        ["tensor", "bytetensor", "get_peer_tensor", "tensor_get_buffer", "register_external_tensor"]
    )
    args = {
        "tensor": ((3,),),
        "bytetensor": ((3,),),
        "get_peer_tensor": (np.zeros(3), 0),
        "tensor_get_buffer": (np.zeros(3),),
        "register_external_tensor": (np.zeros(3),),
    }[name]
    return bad(
        f"{name}(...) without torch",
        lambda: getattr(nvshmem, name)(*args),
        [f"{name}: torch is not installed"],
        ModuleNotFoundError,
    )
