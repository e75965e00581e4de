"""One-sided call generators of the property test (_property_world.py says
how a step works). Each takes (w, ctx, p, r): the world, the step's shared
draws (ctx.X the data allocation, ctx.S the signal allocation, ctx.perm:
PE p may reach PE ctx.perm[p] only), the PE whose call is drawn and its
random stream; it returns a Call. About a third of the calls get one
malformed argument (a wrong type, None, out of range, freed, read-only, not
numbers, not contiguous, not symmetric, missing or extra), and the call must
raise NvshmemInvalid naming it.
"""

import numpy as np

import symmem as nvshmem
from _property_world import BF16, DTYPES, Interface, bad, draw_values, ok, same_value

C, SIG = nvshmem.ComparisonType, nvshmem.SignalOp
MALFORMED = 0.35
INT_ATOMIC = {np.dtype(d) for d in ("int32", "int64", "uint32", "uint64")}
FLOAT_ATOMIC = {np.dtype("float32"), np.dtype("float64")}
FLOAT_OPS = {"atomic_fetch", "atomic_set", "atomic_swap", "atomic_add", "atomic_fetch_add"}
ATOMIC_OPS = list(nvshmem._symmem.ATOMIC_OPS)


# ---------------------------------------------------------------- arguments


def dtype_of(obj):
    """The element type symmem reads from obj (Buffers, bytes: uint8)."""
    return obj.dtype if isinstance(obj, (np.ndarray, Interface)) else np.dtype(np.uint8)


RAW_BYTES = {np.dtype("uint8"), np.dtype("int8")}


def two_dtypes(dst, src):
    """Whether put/get refuse the pair: both typed, of different dtypes (raw
    bytes, a Buffer's, uint8 or int8, copy into and from anything)."""
    d, s = dtype_of(dst), dtype_of(src)
    return d != s and d not in RAW_BYTES and s not in RAW_BYTES


def nbytes_of(obj):
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, Interface):
        return obj.__array_interface__["shape"][0] * obj.dtype.itemsize
    return obj.size if isinstance(obj, nvshmem.Buffer) else len(obj)


def as_bytes(obj):
    return np.frombuffer(obj.tobytes() if isinstance(obj, np.ndarray) else bytes(obj), np.uint8)


class NoIndex:
    """An object whose __index__ fails."""

    def __index__(self):
        raise RuntimeError("no index here")

    def __repr__(self):
        return "NoIndex()"


def bad_pe(r, n):
    return r.choice(
        [
            n,
            n + 3,
            -2,
            2**31,
            -(2**63),
            2**64,
            None,
            "1",
            1.5,
            True,
            np.float64(0),
            np.array([0, 1]),
            np.uint64(2**64 - 1),
            NoIndex(),
        ]
    )


def bad_memory(w, r, written):
    """(what, obj): an object no call may take as memory, whatever its size."""
    options = [
        ("None", None),
        ("an int", 42),
        ("a str", "abc"),
        ("a list", [1, 2, 3]),
        ("an object array", np.array([object(), 1, "x", None], dtype=object)),
        ("a structured array", np.zeros(4, dtype=[("a", "<i4"), ("b", "<i4")])),
        ("a datetime array", np.zeros(4, "M8[s]")),
        ("a byte-swapped array", np.arange(4, dtype=">i4")),
        ("a non-contiguous array", np.zeros(8, "int32")[::2]),
    ]
    if w.freed:
        old = r.choice(w.freed)
        options.append(
            (
                f"freed {old.label}",
                old.whole()
                if r.random() < 0.5 or not old.count
                else old.view(0, r.randint(1, old.count)),
            )
        )
    if written:
        ro = np.zeros(4, "int64")
        ro.flags.writeable = False
        options.append(("a read-only array", ro))
    return r.choice(options)


def bad_symmetric_view(w, r, sym, lo, hi, written):
    """(what, obj): elements of a live allocation in a form that is refused:
    not contiguous, byte-swapped, structured, read-only (where written), or
    another PE's copy (refused where a byte moves: it is not this PE's heap)."""
    options = []
    if hi - lo >= 2 and lo + 2 * (hi - lo) - 1 <= sym.count:
        options.append(("a non-contiguous view", sym.view(lo, lo + 2 * (hi - lo) - 1, 2)))
    if sym.dtype.itemsize > 1 and sym.dtype != BF16:
        options.append(("a byte-swapped view", sym.view(lo, hi).view(sym.dtype.newbyteorder())))
    options.append(("a structured view", sym.view(lo, hi).view([("f", sym.dtype)])))
    # a peer's copy is reached through the PE number, not its address
    if sym.is_buffer:
        peer = nvshmem.get_peer_buffer(sym.buf, (w.me + 1) % w.n)
        options.append(
            (
                "another PE's copy",
                peer if lo == 0 and hi == sym.count else np.frombuffer(peer, np.uint8)[lo:hi],
            )
        )
    else:
        options.append(
            ("another PE's copy", nvshmem.get_peer_array(sym.view(lo, hi), (w.me + 1) % w.n))
        )
    if written:
        ro = sym.view(lo, hi)
        ro.flags.writeable = False
        options.append(("a read-only view", ro))
    return r.choice(options)


def private(w, ctx, r, dtype, count, written):
    """(obj, Z, lo): count elements of dtype that only this PE uses: a new NumPy
    array, a bytearray or bytes of its bytes, or elements [lo, lo+count) of
    an allocation Z that no PE reaches in this step."""
    x = r.random()
    if x < 0.2:
        Z = w.pick(r, lambda s: s.dtype == dtype and s.count >= count and s not in ctx.busy)
        if Z is not None:
            lo = r.randint(0, Z.count - count)
            return Z.view(lo, lo + count), Z, lo
    data = draw_values(r, dtype, count)
    if x < 0.3:
        return bytearray(data.tobytes()), None, 0
    if x < 0.35 and not written:
        return data.tobytes(), None, 0
    return data, None, 0


def content(w, p, obj, Z, lo):
    """The bytes PE p's private object holds before its call."""
    if Z is not None:
        return Z.bytes(p, lo, lo + nbytes_of(obj) // Z.dtype.itemsize).copy()
    return as_bytes(obj)


# ---------------------------------------------------------------- put and get


def rma(w, ctx, p, r):
    name = r.choice(["put", "get", "put_nbi", "get_nbi"])
    fn, is_put = getattr(nvshmem, name), name.startswith("put")
    X, t = ctx.X, ctx.perm[p]
    lo, hi = w.region(r, X, 0, 12)
    sym = w.sym_arg(r, X, lo, hi)
    pdt = X.dtype if r.random() < 0.8 else r.choice(DTYPES)
    pcount = max(0, (hi - lo) * X.dtype.itemsize // pdt.itemsize + r.choice([0, 0, 0, 1, -1]))
    priv, Z, zlo = private(w, ctx, r, pdt, pcount, not is_put)
    before = content(w, p, priv, Z, zlo)
    dst, src = (sym, priv) if is_put else (priv, sym)
    dst_size = dtype_of(dst).itemsize
    cap = nbytes_of(dst) // dst_size
    count = r.randint(0, cap) if r.random() < 0.9 else r.choice([cap + 1, cap + 5])
    form = r.randrange(7)
    forms = [
        ((dst, src, t), {}, None),
        ((dst, src, t, None), {}, None),
        ((dst, src, count, t), {}, count),
        ((dst, src), {"count": count, "pe": t}, count),
        ((dst, src), {"remote_pe": t, "stream": 0}, None),
        ((dst, src, np.int64(count), np.int32(t)), {}, count),
        ((dst, src, t), {"count": count}, count),
    ]
    args, kwargs, used = forms[form]
    what = f"{name}({X.label}[{lo}:{hi}] on pe {t}, {type(priv).__name__} of {pcount} {pdt}"
    what += f", form {form}" + (f", count={used}" if used is not None else "") + ")"

    def call(*a, **k):
        return lambda: fn(*a, **k)

    if r.random() < MALFORMED:
        kind = r.choice(["pe", "count", "sym", "sym", "private", "args", "stream"])
        if kind == "pe":
            value = bad_pe(r, w.n)
            if form in (0, 1, 4, 6):
                args = (dst, src, value) if form != 4 else (dst, src)
                kwargs = dict(kwargs, remote_pe=value) if form == 4 else kwargs
            else:
                args, kwargs = (dst, src, count), {"pe": value}
            return bad(f"{what} with pe={value!r}", call(*args, **kwargs), [f"{name}: remote_pe"])
        if kind == "count":
            value = r.choice([-1, -5, 2**63, 10**20, 1.5, "2", True, cap + 1])
            # a count that parses is checked once dst and src are (their dtypes first)
            said = (
                "dst is "
                if type(value) is int and value == cap + 1 and two_dtypes(dst, src)
                else "count"
            )
            return bad(
                f"{what} with count={value!r}",
                call(dst, src, count=value, pe=t),
                [f"{name}: {said}"],
            )
        if kind == "stream":
            value = r.choice(["x", -1, object(), 2**70, 1.5])
            return bad(
                f"{what} with stream={value!r}",
                call(dst, src, t, stream=value),
                [f"{name}: stream"],
            )
        if kind == "args":
            how, a, k, said = r.choice(
                [
                    (
                        "6 positional arguments",
                        (dst, src, count, t, None, 1),
                        {},
                        "takes at most 5",
                    ),
                    (
                        "an unknown keyword",
                        (dst, src, t),
                        {"bogus": 1},
                        "unexpected keyword argument 'bogus'",
                    ),
                    ("no remote_pe", (dst, src), {}, "remote_pe (or pe=) is required"),
                    ("only dst", (dst,), {}, "missing required argument 'src'"),
                    (
                        "pe= and remote_pe=",
                        (dst, src),
                        {"count": 0, "pe": t, "remote_pe": t},
                        "got argument 'remote_pe' twice",
                    ),
                ]
            )
            return bad(f"{what} with {how}", call(*a, **k), [f"{name}: {said}"])
        side_is_sym = kind == "sym"
        written = is_put == side_is_sym
        if side_is_sym and r.random() < 0.5 and hi > lo:
            found = bad_symmetric_view(w, r, X, lo, hi, written)
        else:
            found = bad_memory(w, r, written)
        how, obj = found
        a = list(args)
        which = 0 if is_put == side_is_sym else 1
        a[which] = obj
        what = f"{what} with {'the symmetric' if side_is_sym else 'the private'} side {how}"
        moved = min(nbytes_of(dst), nbytes_of(src)) if used is None else used * dst_size
        fits = used is None or (used <= cap and used * dst_size <= nbytes_of(src))
        if how == "another PE's copy" and two_dtypes(a[0], a[1]):  # memory, of a dtype
            return bad(what, call(*a, **kwargs), [f"{name}: dst is "])
        if how == "another PE's copy" and moved == 0 and fits:
            return ok(what, call(*a, **kwargs))  # no byte moves: no memory is needed
        said = ("dst", "src")[which] if fits else ""  # else the count may be named first
        return bad(what, call(*a, **kwargs), [f"{name}: {said}"])

    if two_dtypes(dst, src):
        return bad(
            f"{what}: dst and src of two dtypes",
            call(*args, **kwargs),
            [
                f"{name}: dst is {dtype_of(dst)} but src is {dtype_of(src)}",
                f"src.view('{dtype_of(dst)}')",
            ],
        )
    if used is None:
        nbytes = min(nbytes_of(dst), nbytes_of(src))
    elif used > cap or used * dst_size > nbytes_of(src):
        return bad(
            f"{what}: count exceeds dst or src", call(*args, **kwargs), [f"{name}: count={used}"]
        )
    else:
        nbytes = used * dst_size
    at = lo * X.dtype.itemsize
    if is_put:

        def effect():
            X.model[t][at : at + nbytes] = before[:nbytes]

        return ok(what, call(*args, **kwargs), effect=effect)
    want = X.model[t][at : at + nbytes].copy()
    if Z is not None:
        zat = zlo * Z.dtype.itemsize

        def effect():
            Z.model[p][zat : zat + nbytes] = want

        return ok(
            what,
            call(*args, **kwargs),
            effect=effect,
            check=(lambda _: nvshmem.quiet()) if name == "get_nbi" else None,
        )

    def check(_):
        if name == "get_nbi":
            nvshmem.quiet()
        expected = np.concatenate([want, before[nbytes:]])
        got = as_bytes(priv)
        if not np.array_equal(got, expected):
            return f"dst holds {got.tolist()}, expected {expected.tolist()}"

    return ok(what, call(*args, **kwargs), check=check)


# ---------------------------------------------------------------- p and g


def one_value(r, dtype):
    """A value to store in an element of dtype, as a program would pass it."""
    v = draw_values(r, dtype, 1)[0]
    if dtype == np.bool_:
        return r.choice([bool(v), int(v), np.bool_(v)])
    if dtype.kind in "iu":
        return r.choice([int(v), int(v), v])
    return float(v)


def p_g(w, ctx, p, r):
    X, t = ctx.X, ctx.perm[p]
    lo, hi = w.region(r, X, 1 if r.random() < 0.95 else 0, 6)
    obj = w.sym_arg(r, X, lo, hi)
    dt = dtype_of(obj)
    at = lo * X.dtype.itemsize
    if r.random() < 0.5:
        value = one_value(r, dt)
        what = f"p({X.label}[{lo}:{hi}] as {dt}, {value!r}, pe {t})"
        if r.random() < MALFORMED:
            kind = r.choice(["value", "pe", "memory", "view", "args"])
            if kind == "value":
                if dt == np.bool_:  # bool takes any object's truth: not one that fails
                    value = Unbooled()
                elif dt.kind == "f" or dt == BF16:
                    value = r.choice([None, "x", object()])
                else:
                    info = np.iinfo(dt)
                    value = r.choice([None, "x", 1.5, 2**64, int(info.max) + 1, int(info.min) - 1])
                return bad(
                    f"{what} with value={value!r}",
                    lambda: nvshmem.p(obj, value, t),
                    ["p: value" if hi > lo else "p: "],
                )
            if kind == "pe":
                pe = bad_pe(r, w.n)
                return bad(f"{what} with pe={pe!r}", lambda: nvshmem.p(obj, value, pe), ["p: pe"])
            if kind == "view" and hi > lo:
                how, v = bad_symmetric_view(w, r, X, lo, hi, True)
            else:
                how, v = bad_memory(w, r, True)
            if kind == "args":
                return bad(
                    f"{what} without pe",
                    lambda: nvshmem.p(obj, value),
                    ["p: missing required argument 'pe'"],
                )
            return bad(f"{what} into {how}", lambda: nvshmem.p(v, value, t), ["p: dst"])
        if hi == lo:
            return bad(
                f"{what}: dst is empty", lambda: nvshmem.p(obj, value, t), ["p: dst is empty"]
            )
        if dt.kind == "f" and dt.itemsize == 2 and dt != BF16 and abs(float(value)) >= 65520:
            return bad(what, lambda: nvshmem.p(obj, value, t), ["p: value"])
        new = np.frombuffer(np.array([value], dtype=dt).tobytes(), np.uint8)
        old = X.model[t][at : at + dt.itemsize].copy()

        def effect():
            X.model[t][at : at + dt.itemsize] = new

        wake = None
        if dt.kind in "iu" and dt == X.dtype and not np.array_equal(new, old):
            wake = ("ivar", X, lo, int(new.view(dt)[0]), None)
        return ok(what, lambda: nvshmem.p(obj, value, t), effect=effect, wake=wake)
    what = f"g({X.label}[{lo}:{hi}] as {dt}, pe {t})"
    if r.random() < MALFORMED:
        if r.random() < 0.4:
            pe = bad_pe(r, w.n)
            return bad(f"{what} with pe={pe!r}", lambda: nvshmem.g(obj, pe), ["g: pe"])
        how, v = bad_memory(w, r, False)
        return bad(f"{what} from {how}", lambda: nvshmem.g(v, t), ["g: src"])
    if hi == lo:
        return bad(f"{what}: src is empty", lambda: nvshmem.g(obj, t), ["g: src is empty"])
    want = X.model[t][at : at + dt.itemsize].copy()

    def check(got):
        if not same_value(got, want, dt):
            return f"returned {got!r}, expected {want.view(dt)[0]!r}"

    return ok(what, lambda: nvshmem.g(obj, t), check=check)


class Unbooled:
    """A value whose truth cannot be told."""

    def __bool__(self):
        raise RuntimeError("no truth here")

    def __repr__(self):
        return "Unbooled()"


# ---------------------------------------------------------------- atomics


def atomic_result(name, dt, old, value, cond):
    """(new, returned) of an atomic on an element holding old."""
    if dt.kind == "f":
        if name in ("atomic_add", "atomic_fetch_add"):
            new = (np.array([old], dt) + np.array([value], dt))[0]
        elif name in ("atomic_set", "atomic_swap"):
            new = np.array([value], dt)[0]
        else:
            new = old
        return new, old
    bits = 8 * dt.itemsize
    o = int(old)
    v = int(value) if value is not None else 0
    step = {
        "atomic_fetch": o,
        "atomic_set": v,
        "atomic_inc": o + 1,
        "atomic_fetch_inc": o + 1,
        "atomic_add": o + v,
        "atomic_fetch_add": o + v,
        "atomic_and": o & v,
        "atomic_fetch_and": o & v,
        "atomic_or": o | v,
        "atomic_fetch_or": o | v,
        "atomic_xor": o ^ v,
        "atomic_fetch_xor": o ^ v,
        "atomic_swap": v,
        "atomic_compare_swap": v if cond is not None and o == int(cond) else o,
    }[name]
    step %= 2**bits
    if dt.kind == "i" and step >= 2 ** (bits - 1):
        step -= 2**bits
    return np.array([step], dt)[0], old


def atomic(w, ctx, p, r):
    name, operands = r.choice(ATOMIC_OPS)
    fn = getattr(nvshmem, name)
    X, t = ctx.X, ctx.perm[p]
    kwargs = {}
    if (X.dtype not in INT_ATOMIC | FLOAT_ATOMIC and r.random() < 0.8) or r.random() < 0.1:
        # dtype= reads the target's bytes as another type: start at its alignment
        dt = r.choice(sorted(INT_ATOMIC | FLOAT_ATOMIC, key=str) + [np.dtype("int8")])
        kwargs["dtype"] = r.choice([dt.name, dt, dt.type])
        step = max(1, dt.itemsize // X.dtype.itemsize)
        lo = r.randrange(0, X.count + 1, step) if r.random() < 0.9 else r.randint(0, X.count)
        hi = r.randint(lo, min(X.count, lo + 8 * step))
        target = w.sym_arg(r, X, lo, hi)
    else:
        lo, hi = w.region(r, X, 1 if r.random() < 0.95 else 0, 8)
        target = w.sym_arg(r, X, lo, hi)
        dt = dtype_of(target)
    count = nbytes_of(target) // dt.itemsize
    offset = r.randint(0, count - 1) if count else 0
    if offset or r.random() < 0.3:
        kwargs["offset"] = offset if r.random() < 0.8 else np.int64(offset)
    byte_at = lo * X.dtype.itemsize + offset * dt.itemsize
    old = X.model[t][byte_at : byte_at + dt.itemsize].view(dt)[0] if count else None
    if (
        name in ("atomic_add", "atomic_fetch_add")
        and dt.kind == "f"
        and old is not None
        and np.isnan(old)
    ):
        name, operands, fn = "atomic_set", ("value",), nvshmem.atomic_set  # NaN + x: any NaN
    cond = None
    if "cond" in operands:
        cond = old if old is not None and r.random() < 0.5 else draw_values(r, dt, 1)[0]
    value = draw_values(r, dt, 1, nice=True)[0] if "value" in operands else None
    ops = [x for x in (cond, value) if x is not None]
    ops = [int(x) if dt.kind in "iu" else float(x) for x in ops]
    pe_arg = [t] if t != p or r.random() < 0.5 else ([] if r.random() < 0.5 else [-1])
    what = (
        f"{name}({X.label}[{lo}:{hi}], {', '.join(map(repr, ops))}, pe {t}, "
        f"{', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    )
    words = [f"{name}:"]
    if r.random() < MALFORMED:
        kind = r.choice(["offset", "value", "pe", "dtype", "memory", "args"])
        if kind == "offset":
            bad_offset = r.choice(
                [-1, count, count + 7, 2**63, 2**64 + 2, -(2**63), 1.5, "1", None, True]
            )
            return bad(
                f"{what} with offset={bad_offset!r}",
                lambda: fn(target, *ops, *pe_arg, **dict(kwargs, offset=bad_offset)),
                [f"{name}: offset"],
            )
        if kind == "value" and ops:
            choices = [None, "x", object()]
            if dt.kind in "iu":
                info = np.iinfo(dt)
                choices += [1.5, int(info.max) + 1, int(info.min) - 1, 2**64]
            bad_ops = list(ops)
            i = r.randrange(len(ops))
            bad_ops[i] = r.choice(choices)
            # an empty target: the offset is wrong first; bool takes any object's truth
            said = operands[i] if count and dt != np.bool_ else ""
            return bad(
                f"{what} with operands {bad_ops!r}",
                lambda: fn(target, *bad_ops, *pe_arg, **kwargs),
                [f"{name}: {said}"],
            )
        if kind == "pe":
            pe = r.choice([w.n, w.n + 1, -2, 2**40, -(2**63), None, "0", 0.0, True])
            return bad(
                f"{what} with remote_pe={pe!r}",
                lambda: fn(target, *ops, pe, **kwargs),
                [f"{name}: remote_pe"],
            )
        if kind == "dtype":
            bad_dtype = r.choice(["int7", object, "float16", "bool", "complex64", 3, "int8"])
            # a dtype symmem has (but the atomics do not) is refused after other checks
            said = "" if bad_dtype in ("float16", "bool", "int8") else "dtype="
            return bad(
                f"{what} with dtype={bad_dtype!r}",
                lambda: fn(target, *ops, *pe_arg, **dict(kwargs, dtype=bad_dtype)),
                [f"{name}: {said}"],
            )
        if kind == "memory":
            if r.random() < 0.5 and hi > lo:
                how, v = bad_symmetric_view(w, r, X, lo, hi, name != "atomic_fetch")
            else:
                how, v = bad_memory(w, r, name != "atomic_fetch")
            # another PE's copy is refused by the library, after the dtype
            said = "" if how == "another PE's copy" else "target"
            return bad(
                f"{what} on {how}", lambda: fn(v, *ops, *pe_arg, **kwargs), [f"{name}: {said}"]
            )
        how, a, k, said = r.choice(
            [
                ("too many positional arguments", (target, *ops, t, 0, 1), {}, "takes at most"),
                (
                    "an unknown keyword",
                    (target, *ops),
                    {"bogus": 2},
                    "unexpected keyword argument 'bogus'",
                ),
                ("no target", (), {}, "missing required argument 'target'"),
            ]
            + ([("a missing operand", (target,), {}, "missing required argument")] if ops else [])
        )
        return bad(f"{what} with {how}", lambda: fn(*a, **k), [f"{name}: {said}"])
    thunk = lambda: fn(target, *ops, *pe_arg, **kwargs)
    supported = dt in INT_ATOMIC or (dt in FLOAT_ATOMIC and name in FLOAT_OPS)
    if not supported or count == 0 or byte_at % dt.itemsize:
        return bad(f"{what}: not an atomic's dtype, empty or misaligned", thunk, words)
    new, returned = atomic_result(name, dt, old, value, cond)
    new_bytes = np.frombuffer(np.array([new], dt).tobytes(), np.uint8)

    def effect():
        X.model[t][byte_at : byte_at + dt.itemsize] = new_bytes

    want = np.frombuffer(np.array([returned], dt).tobytes(), np.uint8)

    def check(got):
        if name in (
            "atomic_set",
            "atomic_inc",
            "atomic_add",
            "atomic_and",
            "atomic_or",
            "atomic_xor",
        ):
            return None if got is None else f"returned {got!r}, expected None"
        if not same_value(got, want, dt):
            return f"returned {got!r}, expected {returned!r}"

    wake = None
    if dt in INT_ATOMIC and dt == X.dtype and "dtype" not in kwargs and new != old:
        wake = ("ivar", X, lo + offset, int(new), None)
    return ok(what, thunk, check=check, effect=effect, wake=wake)
