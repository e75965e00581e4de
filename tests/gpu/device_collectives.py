"""Teams, collectives, get_peer_array, float atomics, the shared-memory
staging names and get_multicast_array's compile error inside
@numba.cuda.jit kernels on 2+ GPUs, against NumPy: every PE checks all it
received. Run: python -m symmem.run -n 2 tests/gpu/device_collectives.py all|bad_team|overlap|
empty_p|empty_atomic|unreachable_put|unreachable_barrier (the last two with
SYMMEM_GPU_UNMAPPED_PE=1)"""

import os
import sys
import time

import symmem.device.numba as dev  # before numba.cuda: puts back np.row_stack on NumPy 2.5

import cupy as cp
import numba
import numpy as np
from numba import cuda

import symmem as nvshmem
from one_order import one_order, same_bits, spread
from symmem import _symmem  # the launcher's placement, whichever launcher

numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
cuda.select_device(_symmem.launcher()["local_rank"] % len(cuda.gpus))

nvshmem.init()
me, n = nvshmem.my_pe(), nvshmem.n_pes()
WORLD = nvshmem.Teams.TEAM_WORLD
SCOPES = {"": 1, "_warp": 32, "_block": 256}  # threads per launch


def view(a):
    return cuda.as_cuda_array(a)


def check(what, got, want):
    """Every element equal; floats bit for bit (-0 is not 0), any NaN as any NaN."""
    got, want = cp.asnumpy(got), np.asarray(want)
    if not same_bits(got, want):
        bad = np.flatnonzero(got.ravel() != want.ravel())
        raise AssertionError(
            f"PE {me} {what}: {bad.size} elements differ, first at {bad[:5]}: "
            f"got {got.ravel()[bad[:5]]}, want {want.ravel()[bad[:5]]}"
        )


def source(pe, size, dtype):
    """PE pe's data: small values, so sums and products stay exact."""
    i = np.arange(size)
    if np.dtype(dtype).kind == "f":
        return ((i % 7) + pe + 1).astype(dtype) / 2
    return ((i * 3 + pe * 5 + 1) % 50).astype(dtype)


# ---- team syncs between phases ----


@cuda.jit
def team_phases(team, box, rounds, leader, errors):
    """Each round every member adds 1 to the team leader's box (leader: its
    world PE), then a team barrier; the leader then sees members * round."""
    members = dev.team_n_pes(team)
    for r in range(1, rounds + 1):
        if cuda.threadIdx.x == 0:
            dev.atomic_add(box, 1, leader)
        dev.barrier_block(team)
        if cuda.threadIdx.x == 0 and dev.team_my_pe(team) == 0 and box[0] != r * members:
            errors[0] += 1
        dev.sync_block(team)  # the leader has looked before anyone adds again


def team_syncs(rounds=1000):
    box = nvshmem.array((1,), dtype="int64")
    errors = cp.zeros(1, dtype="int64")
    # WORLD, a split with every PE (its own handle and sync slots), and the
    # odd PEs (PE 0 alone at 1 PE); PEs outside a team skip it.
    everyone = nvshmem.team_split_strided(WORLD, 0, 1, n)
    odd = nvshmem.team_split_strided(WORLD, 1 if n > 1 else 0, 2, max(n // 2, 1))
    for what, team, first in (
        ("world", WORLD, 0),
        ("split", everyone, 0),
        ("odd", odd, 1 if n > 1 else 0),
    ):
        if team is None:
            continue
        box[:] = 0
        nvshmem.barrier(team)
        team_phases[1, 128](int(team), view(box), rounds, first, view(errors))
        cuda.synchronize()
        check(f"{what} team barriers", errors, [0])
        who = cp.zeros(2, dtype="int32")
        team_query[1, 1](int(team), view(who))
        size = n if what != "odd" else max(n // 2, 1)
        index = me if what != "odd" else (me // 2 if n > 1 else 0)
        check(f"{what} team_my_pe/team_n_pes", who, [index, size])
    for team in (odd, everyone):
        if team is not None:
            nvshmem.team_destroy(team)
    nvshmem.barrier_all()
    nvshmem.free_array(box)


@cuda.jit
def team_query(team, out):
    out[0] = dev.team_my_pe(team)
    out[1] = dev.team_n_pes(team)


# ---- reduce, reducescatter, fcollect, alltoall, broadcast at every scope ----


def _reduce_kernel(name, op):
    fn = getattr(dev, name)

    @cuda.jit
    def kernel(team, dst, src):
        fn(team, dst, src, op)  # noqa: B023 (op is the kernel's constant)

    return kernel


EVERY_OP = (
    ("int32", ("sum", "min", "max", "and", "or", "xor")),
    ("int64", ("sum", "prod")),
    ("uint8", ("max", "xor")),
    ("float32", ("sum", "min", "max", "prod")),
    ("float64", ("sum",)),
    ("float16", ("sum", "max")),
)
SOME_OPS = (("int32", ("sum",)), ("float32", ("max",)))  # each kernel is a compile


def reductions(size=1000):
    for scope, threads in SCOPES.items():
        for dtype, ops in EVERY_OP if scope == "_block" else SOME_OPS:
            src = nvshmem.array((n * size,), dtype=dtype)
            dst = nvshmem.array((n * size,), dtype=dtype)
            every = [spread(pe, n, n * size, dtype) for pe in range(n)]
            for op in ops:
                want = one_order(every, op, dtype)
                for in_place in (False, True):
                    src[:] = cp.asarray(every[me])
                    dst[:] = 0
                    out = src if in_place else dst
                    nvshmem.barrier_all()
                    _reduce_kernel("reduce" + scope, op)[1, threads](
                        int(WORLD), view(out)[:size], view(src)[:size]
                    )
                    cuda.synchronize()
                    check(
                        f"reduce{scope} {dtype} {op} in_place={in_place}", out[:size], want[:size]
                    )
                    if not in_place:
                        check(
                            f"reduce{scope} left the rest of dst",
                            dst[size:],
                            np.zeros_like(want[size:]),
                        )
                src[:] = cp.asarray(every[me])
                dst[:] = 0
                nvshmem.barrier_all()
                _reduce_kernel("reducescatter" + scope, op)[1, threads](
                    int(WORLD), view(dst)[:size], view(src)
                )
                cuda.synchronize()
                check(
                    f"reducescatter{scope} {dtype} {op}",
                    dst[:size],
                    want[me * size : (me + 1) * size],
                )
            nvshmem.barrier_all()
            nvshmem.free_array(src)
            nvshmem.free_array(dst)


def _move_kernel(name):
    fn = getattr(dev, name)

    @cuda.jit
    def kernel(team, dst, src):
        fn(team, dst, src)

    return kernel


def _broadcast_kernel(name):
    fn = getattr(dev, name)

    @cuda.jit
    def kernel(team, dst, src, root):
        fn(team, dst, src, root)

    return kernel


def moves(size=777):
    for scope, threads in SCOPES.items():
        for dtype in ("uint8", "int32", "float64"):
            src = nvshmem.array((n * size,), dtype=dtype)
            dst = nvshmem.array((n * size + 5,), dtype=dtype)
            every = [source(pe, n * size, dtype) for pe in range(n)]
            src[:] = cp.asarray(every[me])
            dst[:] = 9
            nvshmem.barrier_all()
            _move_kernel("fcollect" + scope)[1, threads](
                int(WORLD), view(dst)[: n * size], view(src)[:size]
            )
            cuda.synchronize()
            check(
                f"fcollect{scope} {dtype}",
                dst,
                np.concatenate([e[:size] for e in every] + [np.full(5, 9, dtype)]),
            )
            dst[:] = 9
            nvshmem.barrier_all()
            _move_kernel("alltoall" + scope)[1, threads](
                int(WORLD), view(dst)[: n * size], view(src)
            )
            cuda.synchronize()
            check(
                f"alltoall{scope} {dtype}",
                dst,
                np.concatenate(
                    [e[me * size : (me + 1) * size] for e in every] + [np.full(5, 9, dtype)]
                ),
            )
            for root in sorted({0, n - 1}):
                dst[:] = 9
                nvshmem.barrier_all()
                _broadcast_kernel("broadcast" + scope)[1, threads](
                    int(WORLD), view(dst)[:size], view(src)[:size], root
                )
                cuda.synchronize()
                check(
                    f"broadcast{scope} {dtype} root {root}",
                    dst,
                    np.concatenate([every[root][:size], np.full(n * size - size + 5, 9, dtype)]),
                )
            nvshmem.barrier_all()
            nvshmem.free_array(src)
            nvshmem.free_array(dst)


# ---- bfloat16 (numba-cuda's, from ml_dtypes): reduce, p and g ----


@cuda.jit
def bf16_sum_then_p_g(team, dst, src, flag, pe, out):
    dev.reduce_block(team, dst, src, "sum")
    if cuda.threadIdx.x == 0:
        dev.p(flag, 2.5, pe)
        dev.barrier_all()
        out[0] = dev.g(flag, pe)


def bfloat16s(size=1000):
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    src, dst, flag = (nvshmem.array((k,), dtype="uint16") for k in (size, size, 1))
    every = [spread(pe, n, size, "float32").astype(bf16) for pe in range(n)]
    src[:] = cp.asarray(every[me].view("uint16"))
    dst[:] = 0
    flag[:] = 0
    out = cp.zeros(1, dtype="uint16")
    nvshmem.barrier_all()
    bf16_sum_then_p_g[1, 256](
        int(WORLD),
        view(dst).view(bf16),
        view(src).view(bf16),
        view(flag).view(bf16),
        (me + 1) % n,
        view(out).view(bf16),
    )
    cuda.synchronize()
    want = one_order([e.astype("float32") for e in every], "sum", "float32").astype(bf16)

    def wide(bits):  # bfloat16 bits as float32, exactly
        return (cp.asnumpy(bits).astype(np.uint32) << 16).view(np.float32)

    check("bfloat16 reduce_block sum (float32, rounded once)", wide(dst), wide(want.view("uint16")))
    check("bfloat16 p and g", out, np.array([2.5], dtype=bf16).view("uint16"))
    nvshmem.barrier_all()
    for x in (flag, dst, src):
        nvshmem.free_array(x)


# ---- get_peer_array and float atomics ----


@cuda.jit
def write_through_peer(a, pe):
    peer = dev.get_peer_array(a, pe)
    i = cuda.grid(1)
    if i < peer.size:
        peer[i] = peer[i] * 2 + 1
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        dev.quiet()


@cuda.jit
def float_adds(counter32, counter64):
    dev.atomic_add(counter32, 1.0, 0)
    dev.atomic_add(counter64, 0.5, 0)


def peer_arrays_and_float_atomics(size=4096, blocks=16, threads=256):
    a = nvshmem.array((size,), dtype="float32")
    a[:] = cp.arange(size, dtype="float32") + 1000 * me
    nvshmem.barrier_all()
    write_through_peer[(size + 255) // 256, 256](view(a), (me + 1) % n)
    cuda.synchronize()
    nvshmem.barrier_all()
    check("get_peer_array stores", a, (np.arange(size, dtype="float32") + 1000 * me) * 2 + 1)
    c32 = nvshmem.array((1,), dtype="float32")
    c64 = nvshmem.array((1,), dtype="float64")
    c32[:] = 0
    c64[:] = 0
    nvshmem.barrier_all()
    float_adds[blocks, threads](view(c32), view(c64))
    cuda.synchronize()
    nvshmem.barrier_all()
    if me == 0:
        check("float32 atomic_add from every thread", c32, [n * blocks * threads])
        check("float64 atomic_add from every thread", c64, [n * blocks * threads / 2])
    nvshmem.barrier_all()
    for x in (c64, c32, a):
        nvshmem.free_array(x)


# ---- NVSHMEM4Py's shared-memory staging names and get_multicast_array ----


@cuda.jit
def staged_put(dst, src, pe, sizes):
    """NVSHMEM4Py's TMA kernel shape: give the dynamic shared memory, put, release."""
    smem = cuda.shared.array(0, dtype=numba.uint8)
    dev.give_smem(smem)
    cuda.syncthreads()
    dev.put_block(dst, src, pe)
    dev.quiet()
    cuda.syncthreads()
    dev.release_smem()
    if cuda.threadIdx.x == 0:
        sizes[0] = dev.ask_smem(dev.SmemAmount.SMEM_RECOMMENDED)
        sizes[1] = dev.ask_smem(dev.SmemAmount.SMEM_MINIMUM)
        sizes[2] = dev.ask_smem(2)


def staging_and_multicast(size=4096):
    from numba.core.errors import TypingError

    src, dst = nvshmem.array((size,), dtype="int32"), nvshmem.array((size,), dtype="int32")
    src[:] = cp.arange(size, dtype="int32") + 1000 * me
    dst[:] = -1
    sizes = cp.zeros(3, dtype="int32")
    nvshmem.barrier_all()
    staged_put[1, 128, 0, nvshmem.ask_smem()](view(dst), view(src), (me + 1) % n, view(sizes))
    cuda.synchronize()
    nvshmem.barrier_all()
    check("the staged put", dst, np.arange(size, dtype="int32") + 1000 * ((me - 1) % n))
    check("ask_smem in a kernel", sizes, [16, 16, 16])

    @cuda.jit
    def multicast_store(team, a):
        mc = dev.get_multicast_array(team, a)
        if dev.team_my_pe(team) == 0:
            mc[0] = 1

    try:
        multicast_store[1, 1](WORLD, view(dst))
    except TypingError as error:
        if (
            "get_multicast_array: NVLink multicast is disabled in this environment "
            "(NVSHMEM_DISABLE_NVLS is set)"
        ) not in str(error):
            raise AssertionError(f"PE {me}: the TypingError does not say why: {error}")
    else:
        raise AssertionError(f"PE {me}: get_multicast_array compiled with multicast off")
    for a in (dst, src):
        nvshmem.free_array(a)


# ---- kernels that must end with the reason ----


def ends_on_pe_0(launch):
    """PE 0 launches a kernel that must trap; it prints that the kernel
    ended (the watch thread prints why), PE 1 waits and leaves."""
    nvshmem.barrier_all()
    if me == 0:
        launch()
        try:
            cuda.synchronize()
        except Exception as error:
            time.sleep(0.5)  # the watch thread prints the kernel's error record
            print(f"PE {me} kernel ended: {type(error).__name__}", flush=True)
            os._exit(0)
        print(f"PE {me}: the kernel did not end", flush=True)
        os._exit(3)
    time.sleep(3)
    os._exit(0)


@cuda.jit
def sync_bad_team(team):
    dev.sync(team)


@cuda.jit
def reduce_shifted(a):
    """reduce with dst overlapping src but not src itself."""
    dev.reduce_block(0, a[1:], a[:-1], "sum")


@cuda.jit
def put_to(a, pe):
    dev.put(a, a, pe)


@cuda.jit
def barrier_once():
    dev.barrier_all()


@cuda.jit
def p_into(a):
    dev.p(a, 1, 0)


@cuda.jit
def add_into(a):
    dev.atomic_add(a, 1, 0)


def pe_must_be_an_integer():
    """A pe that is not an integer is refused when the kernel compiles."""
    from numba.core.errors import TypingError

    @cuda.jit
    def put_float_pe(a):
        dev.put(a, a, 0.0)

    a = nvshmem.array((4,), dtype="int64")
    try:
        put_float_pe[1, 1](view(a))
    except TypingError as error:
        if "put: pe must be an integer, got float64" not in str(error):
            raise AssertionError(f"PE {me}: the TypingError does not say why: {error}")
    else:
        raise AssertionError(f"PE {me}: put with a float pe compiled")
    nvshmem.free_array(a)


# Under SYMMEM_GPU_UNMAPPED_PE=1, PE 0's kernels see PE 1 as on another node.
MODES = {
    "bad_team": lambda: sync_bad_team[1, 1](37),
    "empty_p": lambda: p_into[1, 1](view(a64)[4:]),
    "empty_atomic": lambda: add_into[1, 1](view(a64)[:0]),
    "overlap": lambda: reduce_shifted[1, 32](view(a32)),
    "unreachable_put": lambda: put_to[1, 1](view(a64), 1),
    "unreachable_barrier": lambda: barrier_once[1, 1](),
}
if sys.argv[1] in MODES:
    a32 = nvshmem.array((64,), dtype="int32")  # collective: every PE allocates
    a64 = nvshmem.array((4,), dtype="int64")
    ends_on_pe_0(MODES[sys.argv[1]])
started = time.monotonic()
for step in (
    team_syncs,
    reductions,
    moves,
    bfloat16s,
    peer_arrays_and_float_atomics,
    pe_must_be_an_integer,
    staging_and_multicast,
):
    t0 = time.monotonic()
    step()
    print(f"PE {me} {step.__name__} ok ({time.monotonic() - t0:.1f} s)", flush=True)
nvshmem.finalize()
print(f"PE {me} OK (device collectives, {time.monotonic() - started:.0f} s)")
