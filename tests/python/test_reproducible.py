"""Reductions are bitwise reproducible (docs/reproducibility.md): every
element of every reduce and reducescatter, for every dtype and op, equals
bit for bit a NumPy reference combined in the one order (member 0's value,
then member 1's, ..., 16-bit floats in float32 rounded once), on every PE.
The values make the order show: magnitudes over most of each float type's
range, cancellation (a value that a later member takes back), signed zeros,
NaNs away from member 0, infinities and subnormals; the program checks that
the reverse order (and, for the 16-bit floats, rounding at every step)
would have given other bits for some elements, so a reduction in another
order fails it. The counts cross every size at which a backend changes its
algorithm or its chunk (THRESHOLDS), in place and not, with the buffers
16-byte aligned and not, and over a strided team (its own order).

One job per PE count does it all. It runs on the backend SYMMEM_BACKEND
names (conftest.py): the cpu engine in CI; SYMMEM_BACKEND=mpi, with and
without SYMMEM_ONE_HOST_PER_PE=1, for the mpi backend's node, exchange, MPI
and RMA paths; SYMMEM_BACKEND=gpu for the gpu backend's kernels, where
SYMMEM_GPU_COLLECTIVES picks each algorithm in turn."""

import pytest

from conftest import ON_GPU, assert_all_ok

HELPERS = r'''
import hashlib

W = nvshmem.Teams.TEAM_WORLD
me, n = nvshmem.my_pe(), nvshmem.n_pes()
backend = nvshmem.get_version().backend
NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64"]
if "floats" in sys.argv[1:]:  # the gpu algorithms' jobs: no order changes an integer's bits
    NAMES = [name for name in NAMES if name.startswith(("float", "bfloat"))]
HALF = ("float16", "bfloat16")
OPS = ["sum", "min", "max", "prod", "and", "or", "xor"]
KIB = 1024
# Byte sizes at which an algorithm changes: the gpu backend's one-phase
# limit (4 KiB) and own_collectives.c's table (64 KiB at 5-8 PEs, 512 KiB at
# 4, 2 MiB at 3); the mpi backend's exchange (8 KiB) and RMA path (64 KiB).
THRESHOLDS = [4 * KIB, 8 * KIB, 64 * KIB] + ([512 * KIB, 2048 * KIB] if backend == "gpu" else [])
# Sizes past which a member's slice spans two chunks: the cpu engine's and
# the mpi node path's 64 KiB, the mpi RMA path's 256 KiB (the cpu engine's
# at 2 to 4 PEs only, to keep CI's 8-PE job small: the same loop).
CHUNKS = {"cpu": [64 * KIB * n] if n <= 4 else [], "mpi": [64 * KIB * n, 256 * KIB * n]}
CHUNKS = CHUNKS.get(backend, [])


def dtype_of(name):
    """The NumPy dtype that holds name's elements: bfloat16 as its bits."""
    return np.dtype(np.uint16) if name == "bfloat16" else np.dtype(name)


def is_float(name):
    return name.startswith(("float", "bfloat"))


def widen(x, name):
    """float16 and bfloat16 (bits) as float32, exactly; others as they are."""
    if name == "bfloat16":
        return (x.astype(np.uint32) << 16).view(np.float32)
    return x.astype(np.float32) if name == "float16" else x


def narrow(f, name):
    """float32 (or float64) values as name's elements, rounded to nearest
    even (bfloat16: as its bits, a NaN kept a NaN)."""
    if name != "bfloat16":
        return f.astype(dtype_of(name), copy=False)
    b = f.astype(np.float32).view(np.uint32)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), ((b >> 16) | 0x40).astype(np.uint16), rounded)


def ops_of(name):
    return OPS if not is_float(name) else OPS[:4]


def counts(name):
    """Element counts: of a float, on both sides of every threshold, past
    every chunk, and a few small ones (513: past symmem__reduce_members'
    block of 512); of an integer or bool, whose results no order changes
    (sum and prod wrap), a small one and one past the thresholds all
    backends share."""
    size = dtype_of(name).itemsize
    if not is_float(name):
        return [17, 64 * KIB // size + 1]
    out = {1, 17, 513} | {t // size + 1 for t in CHUNKS}
    for t in THRESHOLDS:
        out |= {t // size - 1, t // size + 1}
    return sorted(out)


def values(name, count, pe, *salt):
    """PE pe's count elements of dtype name for the case salt names: the
    same on every PE that asks."""
    dt = dtype_of(name)
    rng = np.random.default_rng([49, *salt, count, NAMES.index(name), pe])
    if name == "bool":
        return rng.integers(0, 10, count, dtype=np.uint8) < 7
    if not is_float(name):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, count, dtype=dt, endpoint=True)
    lo, hi = {"float16": (-14, 12), "bfloat16": (-60, 60), "float32": (-60, 60),
              "float64": (-200, 200)}[name]
    # 30 random bits of mantissa, an exponent in [lo, hi), a sign, and bits
    # that pick the specials' signs and sizes
    r = rng.integers(0, 1 << 62, count, dtype=np.int64)
    x = np.ldexp(1 + (r & 0x3FFFFFFF) / 2.0**30, lo + (r >> 30) % (hi - lo))
    x[(r >> 40) & 1 == 1] *= -1
    sign = 1.0 - 2.0 * ((r >> 41) & 1)
    # cancellation: at every 4th element the even members hold a value that
    # every member shares, with alternating signs (1e8, x, -1e8, y, ...)
    if pe % 2 == 0:
        x[::4] = np.ldexp(1 + np.arange(0, count, 4) % 1021 / 1021, hi - 2) * (-1.0) ** (pe // 2)
    x[5::16] = 0.0 * sign[5::16]  # signed zeros
    x[9 + 16 * pe :: 16 * n] = np.nan  # at one member, most not member 0
    x[13::64] = np.inf * sign[13::64]
    tiny = {"float16": 2.0**-24, "bfloat16": 2.0**-133, "float32": 2.0**-149,
            "float64": 2.0**-1074}[name]  # the smallest subnormal
    x[29::64] = (1 + (r[29::64] >> 42) % 7) * tiny
    with np.errstate(all="ignore"):
        return narrow(x, name)


def reference(parts, name, op, step_rounding=False):
    """parts (one array a member, in team order) combined left to right:
    vocabulary.h's combine column; 16-bit floats in float32, rounded once
    (or, step_rounding, after every member: what the order forbids)."""
    if name == "bool":
        f = {"sum": np.logical_or, "max": np.logical_or, "or": np.logical_or,
             "prod": np.logical_and, "min": np.logical_and, "and": np.logical_and,
             "xor": np.logical_xor}[op]
        acc = parts[0] != 0
        for p in parts[1:]:
            acc = f(acc, p != 0)
        return acc
    acc = widen(parts[0], name)
    with np.errstate(all="ignore"):
        for p in parts[1:]:
            b = widen(p, name)
            if op == "sum":
                acc = acc + b
            elif op == "prod":
                acc = acc * b
            elif op == "min":
                acc = np.where((b < acc) | (b != b), b, acc)
            elif op == "max":
                acc = np.where((b > acc) | (b != b), b, acc)
            else:
                acc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](acc, b)
            if step_rounding:
                acc = widen(narrow(acc, name), name)
        return narrow(acc, name)


def differing(got, want, name):
    """Indices where got's bits are not want's (any NaN matches any NaN:
    docs/reproducibility.md leaves a NaN's bits to the backend)."""
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype_of(name).itemsize]
    same = got.view(bits) == want.view(bits)
    if is_float(name):
        same |= np.isnan(widen(got, name)) & np.isnan(widen(want, name))
    return np.flatnonzero(~same)


failures, digests = [], []
order_shows = {name: 0 for name in NAMES if is_float(name)}  # elements another order changes
step_shows = {name: 0 for name in HALF}


def checked(got, parts, name, op, what):
    """got against the reference; counts where other orders would differ."""
    want = reference(parts, name, op)
    bad = differing(got, want, name)
    if bad.size:
        k = bad[:4]
        failures.append(f"{what}: {bad.size} elements differ, first at {k.tolist()}: got "
                        f"{got[k].tolist()}, want {want[k].tolist()}")
    if is_float(name) and op in ("sum", "prod") and len(parts) >= 3:
        order_shows[name] += differing(reference(parts[::-1], name, op), want, name).size
        if name in HALF:
            step_shows[name] += differing(reference(parts, name, op, True), want, name).size


def run(call, team, dst, src, name, op):
    nvshmem.collective_on_buffer(call, team, dst, src, dtype=name, op=op)


def upload(buf8, at, x):
    buf8[at:at + x.nbytes] = xp().asarray(x.view(np.uint8))


def download(buf8, at, name, count):
    nbytes = count * dtype_of(name).itemsize
    return host(buf8[at:at + nbytes]).copy().view(dtype_of(name))

'''

PROGRAM = (
    HELPERS
    + r'''
cases = [(name, count) for name in NAMES for count in counts(name)]
most = max(c * dtype_of(name).itemsize for name, c in cases) + 64
src8 = nvshmem.array((most * n,), dtype="uint8")
dst8 = nvshmem.array((most * n,), dtype="uint8")

# reduce, out of place and aligned: the member that checks a (dtype, count)
# makes every member's values; every member hashes what it got
for k, (name, count) in enumerate(cases):
    size = dtype_of(name).itemsize
    checker = k % n == me
    parts = [values(name, count, pe, 0) if checker or pe == me else None for pe in range(n)]
    upload(src8, 0, parts[me])
    for op in ops_of(name):
        run("reduce", W, dst8[:count * size], src8[:count * size], name, op)
        got = download(dst8, 0, name, count)
        digests.append(int.from_bytes(hashlib.blake2b(got.tobytes(), digest_size=8).digest(), "little"))
        if checker:
            checked(got, parts, name, op, f"reduce {op} {name} x {count}")

# in place, and one element off 16-byte alignment (every member's part 0
# of the values); reducescatter (part q of member p's src: values(..., p,
# 1, q)): each member checks its own result
for name in NAMES:
    size = dtype_of(name).itemsize
    for count in (17, 64 * KIB // size + 1)[: 2 if is_float(name) else 1]:
        firsts = [values(name, count, pe, 1, 0) for pe in range(n)] if is_float(name) else []
        own = np.concatenate([values(name, count, me, 1, q) for q in range(n)])
        mine = [values(name, count, pe, 1, me) for pe in range(n)]
        for op in ops_of(name):
            if is_float(name):  # (integers: any order gives their bits)
                upload(src8, 0, firsts[me])
                run("reduce", W, src8[:count * size], src8[:count * size], name, op)
                checked(download(src8, 0, name, count), firsts, name, op,
                        f"reduce in place {op} {name} x {count}")
                upload(src8, size, firsts[me])
                run("reduce", W, dst8[size:size + count * size],
                    src8[size:size + count * size], name, op)
                checked(download(dst8, size, name, count), firsts, name, op,
                        f"reduce unaligned {op} {name} x {count}")
            upload(src8, 0, own)
            run("reducescatter", W, dst8[:count * size], src8[:count * n * size], name, op)
            checked(download(dst8, 0, name, count), mine, name, op,
                    f"reducescatter {op} {name} x {count}")

# a strided team (members 1, 3, ...): the team's order, not the world's
if n >= 4:
    team = nvshmem.team_split_strided(W, 1, 2, n // 2)
    if team is not None:
        for name in ("bfloat16", "float32"):
            size = dtype_of(name).itemsize
            count = 4 * KIB // size + 1
            parts = [values(name, count, pe, 2) for pe in range(1, n, 2)]
            upload(src8, 0, parts[nvshmem.team_my_pe(team)])
            for op in ("sum", "prod", "min", "max"):
                run("reduce", team, dst8[:count * size], src8[:count * size], name, op)
                checked(download(dst8, 0, name, count), parts, name, op,
                        f"reduce {op} {name} x {count} on PEs 1, 3, ...")
        nvshmem.team_destroy(team)
    nvshmem.barrier_all()

# every member got the same bits; the values made the order show
mine = np.array(digests, dtype=np.uint64)
theirs = nvshmem.array((len(digests) * n,), dtype="uint64")
ours = nvshmem.array((len(digests),), dtype="uint64")
ours[:] = xp().asarray(mine)
nvshmem.fcollect(W, theirs, ours)
everyone = host(theirs).reshape(n, len(digests))
for k in np.flatnonzero((everyone != mine).any(axis=0))[:4]:
    failures.append(f"reduce case {k}: the members' results differ (hashes {everyone[:, k]})")
shows = nvshmem.array((len(order_shows) + len(step_shows),), dtype="int64")
total = nvshmem.array((len(order_shows) + len(step_shows),), dtype="int64")
shows[:] = xp().asarray(np.array(list(order_shows.values()) + list(step_shows.values())))
nvshmem.reduce(W, total, shows, "sum")
if n >= 3:
    for name, count in zip(list(order_shows) + [h + " rounded at every step" for h in step_shows],
                           host(total).tolist()):
        check(count > 0, f"{name}: no element whose bits depend on the order: a weak test")
check(not failures, "\n".join(failures[:12]))
for a in (src8, dst8, theirs, ours, shows, total):
    nvshmem.free_array(a)
ok()
nvshmem.finalize()
'''
)


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_every_reduction_gives_the_fixed_order_s_bits_on_every_pe(run_pes, n):
    # on the gpu backend each PE compiles a kernel module per dtype and op (NVRTC)
    result = run_pes(n, "nvshmem.init()\n" + PROGRAM, timeout=600 if ON_GPU else 120)
    assert_all_ok(result, n)


# the gpu backend's other algorithms, each where it takes the call, for the
# floats (the integers' bits no order changes; each dtype and op is a kernel
# module that every PE compiles)
GPU_ALGORITHMS = ["one_shot", "two_shot", "push_one_shot", "push_two_shot"]


@pytest.mark.skipif(not ON_GPU, reason="SYMMEM_GPU_COLLECTIVES picks the gpu backend's kernels")
@pytest.mark.parametrize("algorithm", GPU_ALGORITHMS)
@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_every_gpu_algorithm_gives_the_same_bits(run_pes, n, algorithm):
    env = {"SYMMEM_GPU_COLLECTIVES": algorithm}
    result = run_pes(n, "nvshmem.init()\n" + PROGRAM, timeout=300, env=env, args=["floats"])
    assert_all_ok(result, n)
