"""Atomics at 1..4 PEs: every operation's result and return
value on every allowed dtype (local and remote, offset= and dtype=), the
dtypes and arguments each one refuses, and hammering from all PEs at once
(fetch_add, inc, float add, fetch_inc, a compare_swap spin lock around a
non-atomic read-modify-write, bit operations, swap, one compare_swap winner).
One launch per PE count and section; each PE prints "PE k OK"."""

import pytest

from _launch import assert_all_ok, run_pes
from conftest import ON_GPU

N_PES = (1, 2, 3, 4)

ATOMIC_OPS = [
    "atomic_fetch",
    "atomic_set",
    "atomic_inc",
    "atomic_fetch_inc",
    "atomic_add",
    "atomic_fetch_add",
    "atomic_and",
    "atomic_fetch_and",
    "atomic_or",
    "atomic_fetch_or",
    "atomic_xor",
    "atomic_fetch_xor",
    "atomic_swap",
    "atomic_compare_swap",
]

# Each PE works on element `me` of the next PE's array (and, with
# remote_pe=-1, on element `me` of its own second array), so that the PEs do
# not disturb each other; then each owner checks what landed in its copy.
SEMANTICS = """
ATOMIC_OPS = %r
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
nxt = (me + 1) %% n
INTS = ["int32", "int64", "uint32", "uint64"]


def args_for(name):
    \"\"\"Positional arguments besides target and remote_pe.\"\"\"
    if name == "atomic_compare_swap":
        return (1, 2)
    if name in ("atomic_fetch", "atomic_inc", "atomic_fetch_inc"):
        return ()
    return (1,)


def script(dt, at, pe, offset, **kw):
    \"\"\"Runs every integer operation on element `offset` of PE pe's copy of
    at; checks each return value; returns the final value.\"\"\"
    A = nvshmem
    def go(fn, *args, expect=None, fetches=True):
        got = fn(at, *args, pe, offset=offset, **kw)
        if not fetches:
            check(got is None, f"{dt} {fn.__name__}: returned {got!r}, expected None")
        else:
            check(type(got) is int and got == expect,
                  f"{dt} {fn.__name__}{args}: returned {got!r}, expected {expect!r}")
    go(A.atomic_set, 5, fetches=False)
    go(A.atomic_fetch, expect=5)
    go(A.atomic_inc, fetches=False)
    go(A.atomic_fetch, expect=6)
    go(A.atomic_fetch_inc, expect=6)
    go(A.atomic_add, 10, fetches=False)
    go(A.atomic_fetch_add, 3, expect=17)
    go(A.atomic_fetch, expect=20)
    go(A.atomic_set, 0b1100, fetches=False)
    go(A.atomic_and, 0b1010, fetches=False)
    go(A.atomic_fetch_and, 0b1100, expect=0b1000)
    go(A.atomic_or, 0b0011, fetches=False)
    go(A.atomic_fetch_or, 0b0100, expect=0b1011)
    go(A.atomic_xor, 0b0101, fetches=False)
    go(A.atomic_fetch_xor, 0b1111, expect=0b1010)
    go(A.atomic_fetch, expect=0b0101)
    go(A.atomic_swap, 42, expect=0b0101)
    go(A.atomic_compare_swap, 41, 7, expect=42)     # no match: unchanged
    go(A.atomic_fetch, expect=42)
    go(A.atomic_compare_swap, 42, 7, expect=42)     # match: swapped
    go(A.atomic_fetch, expect=7)
    # the full width, and wrap-around
    bits = np.iinfo(dt).bits
    lo, hi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    go(A.atomic_set, hi, fetches=False)
    go(A.atomic_fetch_inc, expect=hi)
    go(A.atomic_fetch, expect=lo)
    go(A.atomic_fetch_add, -1 if lo < 0 else 0, expect=lo)
    if lo < 0:
        go(A.atomic_set, -3, fetches=False)
        go(A.atomic_fetch_add, -2, expect=-3)
        go(A.atomic_fetch, expect=-5)
        go(A.atomic_compare_swap, -5, lo, expect=-5)
        go(A.atomic_fetch_xor, -1, expect=lo)       # ~lo == hi
        go(A.atomic_fetch, expect=hi)
    else:
        go(A.atomic_set, hi, fetches=False)
        go(A.atomic_fetch_and, 1 << (bits - 1), expect=hi)
        go(A.atomic_fetch_or, 3, expect=1 << (bits - 1))
        go(A.atomic_fetch_add, hi, expect=(1 << (bits - 1)) | 3)   # wraps
        go(A.atomic_fetch, expect=((1 << (bits - 1)) | 3) + hi - (1 << bits))
    go(A.atomic_swap, 1234, expect=hi if lo < 0 else ((1 << (bits - 1)) | 3) + hi - (1 << bits))
    return 1234


for dt in INTS:
    a = nvshmem.array((n + 2,), dtype=dt)
    b = nvshmem.array((n + 2,), dtype=dt)
    a[:] = 0
    b[:] = 0
    nvshmem.barrier_all()
    final = script(dt, a, nxt, me)                  # remote (or myself when n == 1)
    final_b = script(dt, b, -1, me)                 # remote_pe=-1: this PE
    nvshmem.barrier_all()
    prv = (me - 1) %% n
    expect = np.zeros(n + 2, dtype=dt)
    expect[prv] = final
    if n == 1:
        expect[me] = final
    check_equal(a, expect, f"{dt}: my copy after the previous PE's atomics")
    expect = np.zeros(n + 2, dtype=dt)
    expect[me] = final_b
    check_equal(b, expect, f"{dt}: my copy after remote_pe=-1 atomics")
    # keyword remote_pe, and a view: element 1 of a[1:] is a[2]
    nvshmem.barrier_all()
    if me == 0:
        nvshmem.atomic_set(a[n:], 77, remote_pe=n - 1)
        check(nvshmem.atomic_fetch(a[n:], remote_pe=n - 1, offset=1) == 0, f"{dt}: view offset")
        check(nvshmem.atomic_fetch(a, n - 1, offset=n) == 77, f"{dt}: via a view")
    nvshmem.barrier_all()
    if me == n - 1:
        check(a[n] == 77 and a[n + 1] == 0, f"{dt}: view atomic landed at {a.tolist()}")
    nvshmem.barrier_all()
    nvshmem.free_array(b)
    nvshmem.free_array(a)

# floats: fetch, set, swap, add, fetch_add; everything else is refused
for dt in ("float32", "float64"):
    a = nvshmem.array((n,), dtype=dt)
    a[:] = 0
    nvshmem.barrier_all()
    A = nvshmem
    check(A.atomic_set(a, 1.5, nxt, offset=me) is None, f"{dt} set returned something")
    got = A.atomic_fetch(a, nxt, offset=me)
    check(type(got) is float and got == 1.5, f"{dt} fetch: {got!r}")
    check(A.atomic_add(a, 2.25, nxt, offset=me) is None, f"{dt} add returned something")
    check(A.atomic_fetch_add(a, 0.25, nxt, offset=me) == 3.75, f"{dt} fetch_add")
    check(A.atomic_swap(a, -1.0, nxt, offset=me) == 4.0, f"{dt} swap")
    check(A.atomic_fetch_add(a, 2, nxt, offset=me) == -1.0, f"{dt} fetch_add of an int")
    check(A.atomic_fetch(a, nxt, offset=me) == 1.0, f"{dt} fetch after adding 2")
    A.atomic_set(a, 0.1, nxt, offset=me)
    got = A.atomic_fetch(a, nxt, offset=me)
    check(got == float(np.array(0.1, dtype=dt)), f"{dt}: 0.1 came back as {got!r}")
    A.atomic_set(a, 2.5, -1, offset=me)            # my own copy, one I do not share
    for name in ("atomic_inc", "atomic_fetch_inc", "atomic_and", "atomic_fetch_and",
                 "atomic_or", "atomic_fetch_or", "atomic_xor", "atomic_fetch_xor",
                 "atomic_compare_swap"):
        msg = expect_invalid(name, getattr(A, name), a, *args_for(name), nxt, offset=me)
        check(dt in msg, f"{name}: message {msg!r} does not name {dt}")
    nvshmem.barrier_all()
    if n == 1:
        check(a[me] == 2.5, f"{dt}: my copy holds {a[me]}")
    else:
        check(a[(me - 1) %% n] == float(np.array(0.1, dtype=dt)) and a[me] == 2.5,
              f"{dt}: my copy holds {a.tolist()}")
    nvshmem.barrier_all()
    nvshmem.free_array(a)

# dtypes no atomic takes
for dt in ("int8", "int16", "uint8", "uint16", "float16", "bool"):
    a = nvshmem.array((4,), dtype=dt)
    a[:] = 0
    for name in ATOMIC_OPS:
        expect_invalid(name, getattr(nvshmem, name), a, *args_for(name), nxt)
    check_equal(a, np.zeros(4, dtype=dt), f"{dt}: refused atomics changed the array")
    nvshmem.barrier_all()
    nvshmem.free_array(a)

# offset= on an int32 array: only element 3 changes
a = nvshmem.array((8,), dtype="int32")
a[:] = xp().asarray(np.arange(8) * 10)
nvshmem.barrier_all()
if me == 0:
    for pe in range(n):
        check(nvshmem.atomic_fetch_add(a, 5, pe, offset=3) == 30, "offset=3 fetch_add")
        check(nvshmem.atomic_fetch(a, pe, offset=3) == 35, "offset=3 fetch")
        check(nvshmem.atomic_fetch(a, pe, offset=7) == 70, "offset=7 fetch")
        check(nvshmem.atomic_compare_swap(a, 35, -1, pe, offset=3) == 35, "offset=3 cswap")
nvshmem.barrier_all()
check_equal(a, np.array([0, 10, 20, -1, 40, 50, 60, 70], dtype=np.int32), "offset=3 result")
for off in (8, 9, -1, 1000):
    expect_invalid("atomic_fetch", nvshmem.atomic_fetch, a, me, offset=off)
    expect_invalid("atomic_add", nvshmem.atomic_add, a, 1, me, offset=off)
nvshmem.barrier_all()
nvshmem.free_array(a)

# dtype= on a raw Buffer (and overriding an array's dtype)
buf = nvshmem.buffer(64)
raw = buffer_view(buf, np.uint8)
raw[:] = 0
nvshmem.barrier_all()
if me == n - 1:
    big = 2**40 + 7
    check(nvshmem.atomic_set(buf, big, 0, dtype="int64") is None, "Buffer set")
    check(nvshmem.atomic_fetch(buf, 0, dtype="int64") == big, "Buffer fetch int64")
    check(nvshmem.atomic_fetch_add(buf, 1, 0, dtype=np.int64) == big, "dtype=np.int64")
    check(nvshmem.atomic_fetch(buf, 0, dtype=np.dtype("uint32")) == 8, "low half as uint32")
    check(nvshmem.atomic_fetch(buf, 0, offset=1, dtype="uint32") == 2**8, "high half")
    check(nvshmem.atomic_fetch_inc(buf, 0, offset=3, dtype="uint64") == 0, "offset=3 uint64")
    check(nvshmem.atomic_fetch_add(buf, 2.5, 0, offset=2, dtype="float64") == 0.0, "float64")
    check(nvshmem.atomic_fetch(buf, 0, offset=7, dtype="int64") == 0, "last int64")
    expect_invalid("atomic_fetch", nvshmem.atomic_fetch, buf, 0, offset=8, dtype="int64")
    expect_invalid("atomic_fetch", nvshmem.atomic_fetch, buf, 0)          # bytes: uint8
    expect_invalid("atomic_fetch", nvshmem.atomic_fetch, buf, 0, dtype="complex64")
    expect_invalid("atomic_fetch", nvshmem.atomic_fetch, buf, 0, dtype="int8")
nvshmem.barrier_all()
if me == 0:
    v = buffer_view(buf, np.int64)
    check(v[0] == 2**40 + 8 and v[3] == 1 and v[1] == 0,
          f"Buffer after the atomics: {v.tolist()}")
    check(buffer_view(buf, np.float64)[2] == 2.5, "float64 element 2")
nvshmem.barrier_all()
nvshmem.free(buf)
a = nvshmem.array((4,), dtype="int32")     # dtype= reinterprets an array
a[:] = 0
nvshmem.barrier_all()
nvshmem.atomic_set(a, -1, me, dtype="int64")
check(a[0] == -1 and a[1] == -1 and a[2] == 0, f"int64 over an int32 array: {a.tolist()}")
check(nvshmem.atomic_fetch(a, me, dtype="uint32") == 2**32 - 1, "uint32 over int32")
nvshmem.barrier_all()

# bad arguments
for name in ATOMIC_OPS:
    fn = getattr(nvshmem, name)
    for pe in (n, n + 7, -2, 2**40):
        expect_invalid(name, fn, a, *args_for(name), pe)
    for pe in ("1", 1.0, True, None):
        expect_invalid(name, fn, a, *args_for(name), pe)
    local = np.zeros(4, dtype=np.int32)
    expect_invalid(name, fn, local, *args_for(name), me)
    expect_invalid(name, fn, None, *args_for(name), me)
for value in (2**31, -2**31 - 1, 2**40, 1.5, "1", None):
    expect_invalid("atomic_set", nvshmem.atomic_set, a, value, me)
    expect_invalid("atomic_fetch_add", nvshmem.atomic_fetch_add, a, value, me)
expect_invalid("atomic_compare_swap", nvshmem.atomic_compare_swap, a, 2**40, 1, me)
u = nvshmem.array((2,), dtype="uint32")
expect_invalid("atomic_set", nvshmem.atomic_set, u, -1, me)
expect_invalid("atomic_set", nvshmem.atomic_set, u, 2**32, me)
nvshmem.atomic_set(u, 2**32 - 1, me)
check(nvshmem.atomic_fetch(u, me) == 2**32 - 1, "uint32 top value")
nvshmem.barrier_all()
check_equal(a, np.array([-1, -1, 0, 0], dtype=np.int32), "refused atomics changed the array")
nvshmem.free_array(u)
nvshmem.free_array(a)
nvshmem.finalize()
expect_raises(nvshmem.NvshmemInvalid, ["atomic_fetch"], nvshmem.atomic_fetch,
              np.zeros(1, np.int64), 0)
ok(me)
""" % (ATOMIC_OPS,)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n", N_PES)
def test_atomic_semantics(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, SEMANTICS, timeout=45), n)


# All PEs at once on the same elements.
HAMMER = """
nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
W = Teams.TEAM_WORLD
N = 10_000
counter = nvshmem.array((1,), dtype="int64")
ucount = nvshmem.array((1,), dtype="uint32")
fcount = nvshmem.array((1,), dtype="float64")
tickets = nvshmem.array((1,), dtype="int32")
lock = nvshmem.array((1,), dtype="int64")
plain = nvshmem.array((1,), dtype="int64")
flags = nvshmem.array((2,), dtype="uint64")
mine = nvshmem.array((N,), dtype="int64")
everyone = nvshmem.array((n * N,), dtype="int64")
for x in (counter, ucount, fcount, tickets, lock, plain, flags):
    x[:] = 0
nvshmem.barrier_all()

# 1. fetch_add of 1 on PE 0's int64: every value 0 .. n*N-1 fetched exactly once
for j in range(N):
    mine[j] = nvshmem.atomic_fetch_add(counter, 1, 0)
check(all(mine[j] < mine[j + 1] for j in range(0, N - 1, 97)), "my fetches do not increase")
nvshmem.fcollect(W, everyone, mine)
check_equal(np.sort(host(everyone)), np.arange(n * N, dtype=np.int64), "fetch_add tickets")
check(nvshmem.atomic_fetch(counter, 0) == n * N, "fetch_add total")
if me == 0:
    check(counter[0] == n * N, f"int64 counter is {counter[0]}, expected {n * N}")

# 2. atomic_inc on a uint32 on PE n-1, and float64 add of 1.0 on PE 0, together
for j in range(N):
    nvshmem.atomic_inc(ucount, n - 1)
    nvshmem.atomic_fetch_add(fcount, 1.0, 0) if j % 2 else nvshmem.atomic_add(fcount, 1.0, 0)
nvshmem.barrier_all()
if me == n - 1:
    check(ucount[0] == n * N, f"uint32 counter is {ucount[0]}, expected {n * N}")
if me == 0:
    check(fcount[0] == float(n * N), f"float64 counter is {fcount[0]}, expected {n * N}")
check(nvshmem.atomic_fetch(fcount, 0) == float(n * N), "float64 total via atomic_fetch")

# 3. fetch_inc tickets on an int32 of the last PE: all distinct
M = 3000
for j in range(M):
    mine[j] = nvshmem.atomic_fetch_inc(tickets, n - 1)
nvshmem.fcollect(W, everyone[:n * M], mine[:M])
check_equal(np.sort(host(everyone[:n * M])), np.arange(n * M, dtype=np.int64),
            "fetch_inc tickets")

# 4. a spin lock from compare_swap around a non-atomic read-modify-write
L = 500
spins = 0
for j in range(L):
    while nvshmem.atomic_compare_swap(lock, 0, me + 1, 0) != 0:
        spins += 1
        os.sched_yield()
    value = nvshmem.g(plain, 0) if j % 2 else nvshmem.atomic_fetch(plain, 0)
    nvshmem.p(plain, value + 1, 0)
    nvshmem.quiet()
    owner = nvshmem.atomic_swap(lock, 0, 0)
    check(owner == me + 1, f"lock held by {owner - 1} while I held it")
nvshmem.barrier_all()
if me == 0:
    check(plain[0] == n * L, f"locked counter is {plain[0]}, expected {n * L}")
    check(lock[0] == 0, "lock left held")

# 5. bits: each PE sets its own with or, then clears it with fetch_and, then
#    flips two of its own with xor (twice on element 1: back to 0)
mask = (1 << n) - 1
nvshmem.atomic_or(flags, 1 << me, 0)
nvshmem.barrier_all()
check(nvshmem.atomic_fetch(flags, 0) == mask, "or: all bits")
nvshmem.barrier_all()
old = nvshmem.atomic_fetch_and(flags, ~(1 << me) & (2**64 - 1), 0)
check(old >> me & 1, f"fetch_and: my bit was not set in {old:b}")
nvshmem.barrier_all()
check(nvshmem.atomic_fetch(flags, 0) == 0, "fetch_and: all cleared")
nvshmem.barrier_all()
both = (1 << me) | (1 << (63 - me))
nvshmem.atomic_xor(flags, both, 0)
old = nvshmem.atomic_fetch_or(flags, 0, 0, offset=1)
for _ in range(2):
    nvshmem.atomic_fetch_xor(flags, both, 0, offset=1)
nvshmem.barrier_all()
expect = sum((1 << pe) | (1 << (63 - pe)) for pe in range(n))
check(nvshmem.atomic_fetch(flags, 0) == expect, "xor: every PE's two bits")
check(nvshmem.atomic_fetch(flags, 0, offset=1) == 0, "xor twice: nothing")
nvshmem.barrier_all()

# 6. swap: every PE swaps its number into PE 0's slot, once; what came out
#    plus what is left is exactly the start value and every PE
counter[0] = -1
nvshmem.barrier_all()
mine[0] = nvshmem.atomic_swap(counter, me, 0)
nvshmem.fcollect(W, everyone[:n], mine[:1])
left = nvshmem.atomic_fetch(counter, 0)
check(sorted(everyone[:n].tolist() + [left]) == list(range(-1, n)),
      f"swap chain: {everyone[:n].tolist()} then {left}")
nvshmem.barrier_all()

# 7. one compare_swap winner, repeated
for rnd in range(50):
    lock[0] = 0
    nvshmem.barrier_all()
    mine[0] = nvshmem.atomic_compare_swap(lock, 0, me + 1, 0)
    nvshmem.fcollect(W, everyone[:n], mine[:1])
    winners = [pe for pe in range(n) if everyone[pe] == 0]
    check(len(winners) == 1, f"round {rnd}: winners {winners}")
    check(all(everyone[pe] == winners[0] + 1 for pe in range(n) if pe != winners[0]),
          f"round {rnd}: losers saw {everyone[:n].tolist()}")
    check(nvshmem.atomic_fetch(lock, 0) == winners[0] + 1, "winner's value")
    nvshmem.barrier_all()

print(f"spun {spins} times", flush=True)
for x in (everyone, mine, flags, plain, lock, tickets, fcount, ucount, counter):
    nvshmem.free_array(x)
nvshmem.finalize()
ok(me)
"""


@pytest.mark.timeout(90)
@pytest.mark.parametrize("n", N_PES)
def test_atomic_hammer(tmp_path, n):
    assert_all_ok(run_pes(tmp_path, n, HAMMER, timeout=75), n)


# On the gpu backend, PE 1 taken for a PE on another node (a test hook): PE
# 0's atomics on it run NVSHMEM's device atomics, compiled and linked at the
# first one, while PE 1's own stay PTX atom instructions, in the same words.
@pytest.mark.timeout(150)
@pytest.mark.skipif(not ON_GPU, reason="the gpu backend's path (SYMMEM_BACKEND=gpu)")
@pytest.mark.parametrize("section", ["semantics", "hammer"])
def test_atomics_on_a_pe_outside_the_nvlink_domain_go_through_nvshmem(tmp_path, section):
    code = {"semantics": SEMANTICS, "hammer": HAMMER}[section]
    assert_all_ok(run_pes(tmp_path, 2, code, timeout=120, env={"SYMMEM_GPU_UNMAPPED_PE": "1"}), 2)
