"""The state a property-test PE keeps (test_property.py, _property_pe.py).

Every PE runs the same seeded program, so every PE knows every PE's calls:
each step draws, for every PE, a Call (what it does, and what must happen)
from the same random streams, and every PE keeps a model of every PE's copy
of every symmetric allocation, as bytes. A PE runs only its own call, then
checks what it can see: the call's result, the exception it raised, and
(after a barrier) its own copies against the model.

Steps keep one-sided calls free of races: each PE reaches at most one peer
(a permutation of the PEs), and only in two allocations, X (data) and S
(signals), which no PE uses as private memory in that step.
"""

import random
import sys
import traceback

import numpy as np

import symmem as nvshmem

INV, ERR = nvshmem.NvshmemInvalid, nvshmem.NvshmemError
try:  # bfloat16 arrays need ml_dtypes
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BF16 = None

DTYPES = [
    np.dtype(d)
    for d in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
    )
]
DTYPES += [BF16] if BF16 is not None else []
U64 = np.dtype("uint64")
# What new allocations are made of: every dtype, and more of those signals and atomics take.
POOL_DTYPES = DTYPES + [U64, U64, np.dtype("int32"), np.dtype("int64"), np.dtype("float64")]


class Failure(AssertionError):
    """The contract was broken: the message names the seed, step, PE and call."""


class Call:
    """One PE's call in a step. raises=None: it must succeed; then check(result)
    runs on the calling PE, effect() updates every PE's model, and wake (if
    set) lets the peer it reached wait for it. raises=an exception type: the
    call must raise exactly that, its message holding every one of words,
    and nothing changes."""

    __slots__ = ("desc", "thunk", "raises", "words", "check", "effect", "wake")

    def __init__(self, desc, thunk, raises=None, words=(), check=None, effect=None, wake=None):
        self.desc, self.thunk, self.raises, self.words = desc, thunk, raises, words
        self.check, self.effect, self.wake = check, effect, wake


def ok(desc, thunk, check=None, effect=None, wake=None):
    return Call(desc, thunk, None, (), check, effect, wake)


def bad(desc, thunk, words=(), exc=INV):
    return Call(desc, thunk, exc, tuple(words))


def skip(desc="(nothing)"):
    """A PE that takes no part in a step."""
    return Call(desc, None)


class Sym:
    """One symmetric allocation (array, bytearray or Buffer), the same on every
    PE, with the model of every PE's copy of its bytes."""

    def __init__(self, label, obj, buf, dtype, shape, n_pes):
        self.label, self.obj, self.buf = label, obj, buf
        self.dtype = np.dtype(dtype)
        self.shape = shape
        self.count = int(np.prod(shape)) if shape else 1
        self.nbytes = self.count * self.dtype.itemsize
        self.is_buffer = obj is buf
        # Memory order, one dimension: views into the allocation are its slices.
        if self.is_buffer:
            self.flat = np.frombuffer(buf, np.uint8)
        else:
            self.flat = obj.ravel(order="K")
        self.model = [np.zeros(self.nbytes, np.uint8) for _ in range(n_pes)]

    def __repr__(self):
        return self.label

    def whole(self):
        """The object the program holds (array or Buffer)."""
        return self.obj

    def view(self, lo, hi, step=1):
        """Elements [lo, hi) as a NumPy view into the allocation."""
        return self.flat[lo:hi:step]

    def bytes(self, pe, lo, hi):
        """The model of PE pe's elements [lo, hi), as bytes."""
        size = self.dtype.itemsize
        return self.model[pe][lo * size : hi * size]

    def values(self, pe, lo, hi):
        return self.bytes(pe, lo, hi).view(self.dtype)

    def local(self):
        """This PE's copy, as bytes (what the model must equal)."""
        if self.nbytes == 0:
            return np.zeros(0, np.uint8)
        return np.frombuffer(self.buf, np.uint8)[: self.nbytes]


class Interface:
    """Memory named only by __array_interface__: symmem cannot ask it which
    allocation it came from; it finds the view it keeps alive, as an exporter
    must (src/extension/owner_search.c)."""

    def __init__(self, view):
        self.view = view
        self.dtype = view.dtype
        self.__array_interface__ = {
            "data": (view.__array_interface__["data"][0], False),
            "shape": (len(view),),
            "typestr": view.dtype.str,
            "version": 3,
        }

    def __repr__(self):
        return f"Interface({self.dtype}[{self.__array_interface__['shape'][0]}])"


class TeamRec:
    """A team: groups[pe] is PE pe's team (world PEs in team order; None where
    pe is in none), known to every PE (a 2-D split makes a team per row, so
    PEs can be in different ones); mine is this PE's handle."""

    def __init__(self, label, groups, mine, me):
        self.label, self.groups, self.mine, self.me = label, groups, mine, me

    def __repr__(self):
        return f"{self.label}{self.groups[self.me]}"

    def group(self, pe):
        return self.groups[pe]

    def handle(self, pe):
        """PE pe's handle: this PE's own; for others a stand-in that is never
        used (their calls run on their PEs)."""
        return self.mine if pe == self.me else (0 if self.groups[pe] is not None else None)


def draw_values(r, dtype, count, nice=False):
    """count values of dtype: small ones, the type's extremes, random bits.
    nice: floats whose sums and products over a few PEs are exact in every
    float type (any order of accumulation gives the same bits)."""
    dt = np.dtype(dtype)
    if count > 64:  # large: NumPy's generator, seeded from r
        g = np.random.default_rng(r.getrandbits(64))
        if dt == np.bool_:
            return g.random(count) < 0.5
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return g.integers(int(info.min), int(info.max), count, dtype=dt, endpoint=True)
        return (g.integers(-4 if nice else -32, 5 if nice else 33, count) / 2).astype(dt)
    if dt == np.bool_:
        return np.array([r.random() < 0.5 for _ in range(count)], dtype=bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        small = list(range(max(int(info.min), -9), min(int(info.max), 9) + 1))
        edges = [int(info.min), int(info.max), int(info.max) // 2 + 1, 0]
        out = []
        for _ in range(count):
            x = r.random()
            out.append(
                r.choice(small)
                if x < 0.7
                else r.choice(edges)
                if x < 0.85
                else r.randint(int(info.min), int(info.max))
            )
        return np.array(out, dtype=dt)
    span = 4 if nice else 32
    return np.array([r.randint(-span, span) / 2 for _ in range(count)]).astype(dt)


def same_value(got, want_bytes, dtype):
    """Whether a value a call returned is the element whose bytes the model has
    (NaN for NaN: a NaN's payload may change on its way through a double)."""
    want = want_bytes.view(dtype)[0]
    if dtype == np.bool_:
        return got is bool(want_bytes[0])
    if dtype.kind == "f" or dtype == BF16:
        want = float(want)
        return isinstance(got, float) and (got == want or (got != got and want != want))
    return type(got) is int and got == int(want)


class World:
    """The pool of allocations and teams, the model, and the step's random
    streams: identical on every PE."""

    def __init__(self, seed, n, me):
        self.seed, self.n, self.me = seed, n, me
        self.syms, self.freed, self.teams, self.dead_teams = [], [], [], []
        everyone = [list(range(n))] * n
        T = nvshmem.Teams
        self.predefined = [
            TeamRec(t.name, everyone, t, me)
            for t in (T.TEAM_WORLD, T.TEAM_SHARED, T.TEAM_NODE, T.TEAM_GPU_LEADERS)
        ]
        self.predefined += [
            TeamRec(t.name, [[pe] for pe in range(n)], t, me)
            for t in (T.TEAM_SAME_MYPE_NODE, T.TEAM_SAME_GPU)
        ]
        self.labels = 0
        self.step = 0
        self.shared = random.Random(f"{seed}")
        self.calls = 0
        self.laters = []
        self.outcomes = {}  # call name -> [succeeded, raised as documented]

    # ---- random streams: shared by all PEs, or one per PE (known to all)
    def begin(self, step):
        self.step = step
        self.shared = random.Random(f"{self.seed}:{step}")
        self.laters = []

    def later(self, fn):
        """Runs fn on every PE after its call in this step (before the barrier)."""
        self.laters.append(fn)

    def pe_random(self, pe):
        return random.Random(f"{self.seed}:{self.step}:{pe}")

    def label(self, prefix):
        self.labels += 1
        return f"{prefix}{self.labels}"

    # ---- the pool
    def add(self, sym, fill_rng):
        """A new allocation: every PE fills its copy with values all PEs know."""
        self.syms.append(sym)
        for pe in range(self.n):
            data = draw_values(random.Random(f"{fill_rng}:{pe}"), sym.dtype, sym.count)
            sym.model[pe][:] = np.frombuffer(data.tobytes(), np.uint8)
        if sym.nbytes:
            sym.local()[:] = sym.model[self.me]

    def retire(self, sym):
        """sym was freed: it stays, for calls that must refuse it."""
        self.syms.remove(sym)
        self.freed = (self.freed + [sym])[-8:]

    def fill(self, sym, lo, hi, per_pe):
        """Every PE stores per_pe[pe] into its own elements [lo, hi) (a plain
        local store, before a collective reads them)."""
        size = sym.dtype.itemsize
        for pe, data in enumerate(per_pe):
            if data is not None:
                sym.model[pe][lo * size : hi * size] = np.frombuffer(data.tobytes(), np.uint8)
        if per_pe[self.me] is not None and hi > lo:
            sym.view(lo, hi)[:] = per_pe[self.me]

    def pick(self, r, want=None, exclude=()):
        """A live allocation (want(sym) true), or None."""
        choices = [s for s in self.syms if s not in exclude and (want is None or want(s))]
        return r.choice(choices) if choices else None

    def region(self, r, sym, least=0, most=None):
        """(lo, hi): a random run of `least` (or as many as sym has) to `most`
        elements (now and then to all of them: copies past 64 KiB take
        another path)."""
        most = sym.count if most is None or r.random() < 0.1 else min(most, sym.count)
        least = min(least, most)
        length = r.randint(least, most)
        lo = r.randint(0, sym.count - length)
        return lo, lo + length

    def sym_arg(self, r, sym, lo, hi):
        """An object naming elements [lo, hi) of sym: the whole array or Buffer
        where that is all of it, else a NumPy view (of a Buffer: sometimes a
        memoryview, or an array over it by DLPack or a memoryview)."""
        if lo == 0 and hi == sym.count and r.random() < 0.5:
            return sym.whole()
        if r.random() < 0.05 and sym.dtype != BF16 and hi > lo:  # bfloat16 has no typestr
            return Interface(sym.view(lo, hi))
        if sym.is_buffer and r.random() < 0.3:
            return r.choice(
                [
                    lambda: np.frombuffer(memoryview(sym.buf)[lo:hi], np.uint8),
                    lambda: memoryview(sym.buf)[lo:hi],
                    lambda: np.from_dlpack(sym.buf)[lo:hi],
                ]
            )()
        return sym.view(lo, hi)

    # ---- checking
    def fail(self, what, calls=None):
        lines = [
            f"PROPERTY FAILURE seed={self.seed} n_pes={self.n} step={self.step} "
            f"pe={self.me}: {what}"
        ]
        for pe, call in enumerate(calls or ()):
            lines.append(f"  pe {pe} called: {call.desc}")
        lines.append(
            f"  replay: SYMMEM_PROPERTY_SEED={self.seed} SYMMEM_PROPERTY_PES={self.n} "
            "pytest tests/python/test_property.py"
        )
        raise Failure("\n".join(lines))

    def execute(self, call, calls):
        """Runs this PE's call and checks its outcome against the contract."""
        if call.thunk is None:
            return
        self.calls += 1
        tally = self.outcomes.setdefault(call.desc.partition("(")[0].split()[0], [0, 0])
        tally[call.raises is not None] += 1
        try:
            result = call.thunk()
        except BaseException as error:  # noqa: B902 (every other type is a failure)
            if call.raises is not None and isinstance(error, call.raises):
                msg = str(error)
                lacking = [w for w in call.words if w not in msg]
                if isinstance(error, ImportError):  # torch missing: Python's own kind of error
                    if lacking:
                        self.fail(f"{call.desc}: message {msg!r} lacks {lacking}", calls)
                    return
                prefixes = msg.count("[pe ")
                if lacking or prefixes > 1 or (prefixes == 0 and nvshmem.my_pe() >= 0):
                    self.fail(
                        f"{call.desc}: {type(error).__name__} message {msg!r} lacks "
                        f"{lacking} or has not one [pe N] prefix",
                        calls,
                    )
                if (
                    getattr(error, "msg", None) != msg
                    or type(getattr(error, "status", None)) is not int
                ):
                    self.fail(
                        f"{call.desc}: {type(error).__name__} {msg!r} has .msg="
                        f"{getattr(error, 'msg', None)!r}, .status="
                        f"{getattr(error, 'status', None)!r}",
                        calls,
                    )
                return
            want = call.raises.__name__ if call.raises else "success"
            self.fail(
                f"{call.desc}: expected {want}, got {type(error).__name__}: {error}\n"
                + "".join(traceback.format_exception(error)),
                calls,
            )
        if call.raises is not None:
            self.fail(
                f"{call.desc}: expected {call.raises.__name__}, but it returned {result!r}", calls
            )
        if call.check is not None:
            problem = call.check(result)
            if problem:
                self.fail(f"{call.desc}: {problem}", calls)

    def check_local(self, calls):
        """This PE's copy of every live allocation equals the model, and the
        package tracks exactly the live allocations (no failed call left one)."""
        tracked = len(nvshmem._memory._live)
        if tracked != sum(1 for s in self.syms if s.nbytes):
            self.fail(
                f"the package tracks {tracked} allocations, the pool has "
                f"{[s.label for s in self.syms if s.nbytes]}",
                calls,
            )
        for sym in self.syms:
            got, want = sym.local(), sym.model[self.me]
            if not np.array_equal(got, want):
                bad_at = np.flatnonzero(got != want)
                self.fail(
                    f"{sym.label} ({sym.dtype}, {sym.count} elements) differs from the "
                    f"model at bytes {bad_at[:12].tolist()}: got "
                    f"{got[bad_at[:12]].tolist()}, expected {want[bad_at[:12]].tolist()}",
                    calls,
                )


def trail_writer(path):
    """A function that records each step's description in path, unbuffered, so
    the test can name the last step of a PE that crashed or hung."""
    if not path:
        return lambda text: None
    fd = open(path, "w", buffering=1)

    def write(text):
        fd.write(text + "\n")

    return write


def say(text):
    print(text, flush=True)
    sys.stdout.flush()
