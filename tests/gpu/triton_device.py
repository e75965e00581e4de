"""symmem.device.triton on 2 GPUs, with the engine SYMMEM_TRITON_ENGINE
names (symmem or nvshmem). Every PE checks what it received:
- put and get of every element type Triton has, odd sizes, aligned and
  not (one element in); putmem/getmem between byte offsets alike and
  unlike mod 16;
- putmem_signal_block / putmem_signal_nbi_block to the peer and
  signal_wait_until in the same kernel, three rounds, SET and ADD;
- putmem_block, fence, p of a flag, wait_until on it; signal_op;
- p, g, remote_ptr with plain tl.store, my_pe, n_pes, team_my_pe, team_n_pes;
- the atomics on the peer's words;
- alltoall, fcollect, broadcast, reduce (sum, max; twice into fresh arrays;
  in place, over more than one block of 1024), barrier_all, sync_all;
- on the symmem engine, reduce sum and max of 16- and 32-bit floats whose bits
  depend on the order, against docs/reproducibility.md's order (one_order.py).
With TRITON_RESULTS=<dir> each PE saves every received array there, so the
two engines' bytes can be compared (tests/python/test_gpu.py does).
Mode "dead_peer" (argv[1]): PE 1 exits; PE 0's kernel waits for its signal
and must end, naming the call (symmem engine).
Run: python -m symmem.run -n 2 tests/gpu/triton_device.py"""

import os
import sys
import time

import numpy as np
import torch
import triton
import triton.language as tl

import symmem as nvshmem
from one_order import one_order, same_bits, spread
from symmem import _symmem  # the launcher's placement, whichever launcher
import symmem.device.triton as sdt

torch.cuda.set_device(_symmem.launcher()["local_rank"] % torch.cuda.device_count())
DTYPES = [
    torch.int8,
    torch.uint8,
    torch.int16,
    torch.uint16,
    torch.int32,
    torch.uint32,
    torch.int64,
    torch.uint64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
]
SIZES = (1, 3, 1000, 4099)


@sdt.requires_symmem
@triton.jit(do_not_specialize=["n"])
def put_get(dst, src, got, n, pe):
    sdt.put(dst, src, n, pe)
    sdt.get(got, src, n, pe)
    sdt.quiet()


@sdt.requires_symmem
@triton.jit(do_not_specialize=["dst", "src", "got", "nbytes"])
def putmem_getmem(dst, src, got, nbytes, pe):
    # int64 addresses, any alignment: one kernel for every offset
    sdt.putmem_block(dst, src, nbytes, pe)
    sdt.getmem_block(got, src, nbytes, pe)
    sdt.quiet()


@sdt.requires_symmem
@triton.jit
def ping(dst, src, sig, seen, n, value, op, pe, NBI: tl.constexpr):
    if NBI:
        sdt.putmem_signal_nbi_block(dst, src, n * 4, sig, value, op, pe)
    else:
        sdt.putmem_signal_block(dst, src, n * 4, sig, value, op, pe)
    sdt.signal_wait_until(sig, sdt.CMP_GE, value)
    # message passing: every thread reads the data after the wait, in the
    # kernel (a missing acquire or barrier shows as stale values in seen)
    for start in range(0, n, 1024):
        offs = start + tl.arange(0, 1024)
        tl.store(seen + offs, tl.load(dst + offs, mask=offs < n), mask=offs < n)


@sdt.requires_symmem
@triton.jit
def flag_handoff(dst, src, flag, sig, n, pe):
    sdt.putmem_block(dst, src, n * 4, pe)
    sdt.fence()
    sdt.p(flag, 7, pe)
    sdt.wait_until(flag, sdt.CMP_EQ, 7)
    sdt.signal_op(sig, 2, sdt.SIGNAL_ADD, pe)
    sdt.signal_wait_until(sig, sdt.CMP_EQ, 2)


@sdt.requires_symmem
@triton.jit
def point_ops(dst, src, out, pe):
    offs = tl.arange(0, 8)
    sdt.p(dst, sdt.g(src, pe) + 1, pe)
    peer = sdt.remote_ptr(dst, pe)
    tl.store(peer + 1 + offs, tl.load(src + offs))
    sdt.quiet()
    tl.store(out, sdt.my_pe())
    tl.store(out + 1, sdt.n_pes())
    tl.store(out + 2, sdt.team_my_pe(sdt.TEAM_WORLD))
    tl.store(out + 3, sdt.team_n_pes(sdt.TEAM_WORLD))
    sdt.barrier_all()


@sdt.requires_symmem
@triton.jit
def atomics(words, out, value, pe):
    # words[0]: every PE adds; words[1..]: this PE's own word at the peer
    me = sdt.my_pe()
    sdt.atomic_add(words, value, 0)
    tl.store(out, sdt.atomic_fetch_add(words, value, 0) * 0)
    sdt.atomic_inc(words, 0)
    tl.store(out + 1, sdt.atomic_fetch_inc(words, 0) * 0)
    mine = words + 1 + me * 8
    sdt.atomic_set(mine, 40, pe)
    tl.store(out + 2, sdt.atomic_fetch(mine, pe))
    tl.store(out + 3, sdt.atomic_swap(mine, 12, pe))
    tl.store(out + 4, sdt.atomic_compare_swap(mine, 12, 15, pe))
    tl.store(out + 5, sdt.atomic_compare_swap(mine, 99, 1, pe))
    tl.store(out + 6, sdt.atomic_fetch_or(mine, 48, pe))
    tl.store(out + 7, sdt.atomic_fetch_and(mine, 60, pe))
    tl.store(out + 8, sdt.atomic_fetch_xor(mine, 5, pe))
    sdt.atomic_or(mine + 1, 6, pe)
    sdt.atomic_and(mine + 1, 3, pe)
    sdt.atomic_xor(mine + 1, 9, pe)
    sdt.quiet()
    sdt.barrier_all()


@sdt.requires_symmem
@triton.jit
def collectives(
    a2a_dst, a2a_src, fc_dst, fc_src, bc_dst, bc_src, red_dst, red_src, inplace, mx_dst, n
):
    sdt.alltoall(sdt.TEAM_WORLD, a2a_dst, a2a_src, n)
    sdt.fcollect(sdt.TEAM_WORLD, fc_dst, fc_src, n)
    sdt.broadcast(sdt.TEAM_WORLD, bc_dst, bc_src, n, ROOT)
    sdt.reduce(sdt.TEAM_WORLD, red_dst, red_src, n, "sum")
    sdt.reduce(sdt.TEAM_WORLD, inplace, red_src, n, "sum")
    sdt.reduce(sdt.TEAM_WORLD, mx_dst, red_src, n, "max")
    sdt.sync_all()


@sdt.requires_symmem
@triton.jit
def reduce_in_place(x, n):
    sdt.reduce(sdt.TEAM_WORLD, x, x, n, "sum")  # dest is source


@sdt.requires_symmem
@triton.jit
def reduce_sum_max(sum_dst, max_dst, src, n):
    sdt.reduce(sdt.TEAM_WORLD, sum_dst, src, n, "sum")
    sdt.reduce(sdt.TEAM_WORLD, max_dst, src, n, "max")


@sdt.requires_symmem
@triton.jit
def wait_forever(sig):
    sdt.signal_wait_until(sig, sdt.CMP_EQ, 1)


def pattern(pe, count, dtype):
    values = torch.arange(count, dtype=torch.int64) * 3 + 17 * (pe + 1)
    if dtype.is_floating_point:
        return (values % 1000).to(dtype)
    bits = torch.iinfo(dtype).bits
    return (values % (1 << min(bits - 1, 30))).to(dtype)


def raw(t):
    return t.contiguous().cpu().view(torch.uint8).numpy()


def expect(what, got, want):
    if got.dtype != want.dtype or not np.array_equal(raw(got), raw(want)):
        raise AssertionError(
            f"PE {me}: {what}: got {got.cpu()[:8]} ... expected {want.cpu()[:8]} ..."
        )


def check_put_get(results):
    """put/get of every element type (typed pointers), then putmem_block /
    getmem_block (int64 addresses) one element in, odd sizes."""
    for dtype in DTYPES:
        count = max(SIZES)
        src = nvshmem.tensor(count + 1, dtype=dtype)
        dst = nvshmem.tensor(count + 1, dtype=dtype)
        got = torch.zeros(count + 1, dtype=dtype, device="cuda")
        src.copy_(pattern(me, count + 1, dtype).cuda())
        for offset in (0, 1):
            for size in SIZES:
                dst.zero_()
                got.zero_()
                torch.cuda.synchronize()
                nvshmem.barrier_all()
                if offset == 0:
                    put_get[(1,)](dst, src, got, size, peer)
                else:
                    at = offset * src.element_size()
                    putmem_getmem[(1,)](
                        dst.data_ptr() + at,
                        src.data_ptr() + at,
                        got.data_ptr() + at,
                        size * src.element_size(),
                        peer,
                    )
                torch.cuda.synchronize()
                nvshmem.barrier_all()
                want = pattern(peer, count + 1, dtype)[offset : offset + size]
                expect(f"put {dtype} x{size} +{offset}", dst[offset : offset + size], want)
                expect(f"get {dtype} x{size} +{offset}", got[offset : offset + size], want)
                results[f"put_{dtype}_{size}_{offset}"] = raw(dst)
                results[f"get_{dtype}_{size}_{offset}"] = raw(got)
        nvshmem.free_tensor(dst)
        nvshmem.free_tensor(src)


def check_alignments(results):
    """putmem_block / getmem_block (int64 addresses) between byte offsets
    alike and unlike mod 16 (alike: bytes up to the common boundary, then
    16-, 8- or 4-byte units; unlike: a narrower unit or bytes), sizes that
    end on every kind of tail and span several steps of the copy loop."""
    count = 70_000 + 32
    src = nvshmem.tensor(count, dtype=torch.uint8)
    dst = nvshmem.tensor(count, dtype=torch.uint8)
    got = torch.zeros(count, dtype=torch.uint8, device="cuda")
    # bytes of period 251: a slice from the wrong offset differs
    src.copy_((pattern(me, count, torch.int64) % 251).to(torch.uint8).cuda())
    theirs = (pattern(peer, count, torch.int64) % 251).to(torch.uint8)
    for dst_at, src_at in ((3, 3), (9, 9), (12, 12), (1, 2), (4, 12), (8, 0), (0, 8), (7, 0)):
        for nbytes in (1, 15, 17, 1000, 70_001):
            dst.zero_()
            got.zero_()
            torch.cuda.synchronize()
            nvshmem.barrier_all()
            putmem_getmem[(1,)](
                dst.data_ptr() + dst_at,
                src.data_ptr() + src_at,
                got.data_ptr() + dst_at,
                nbytes,
                peer,
            )
            torch.cuda.synchronize()
            nvshmem.barrier_all()
            want = torch.zeros(count, dtype=torch.uint8)
            want[dst_at : dst_at + nbytes] = theirs[src_at : src_at + nbytes]
            where = f"+{dst_at} from +{src_at}, {nbytes} bytes"
            expect(f"putmem_block {where}", dst, want)  # and not a byte around it
            expect(f"getmem_block {where}", got, want)
            results[f"putmem_{dst_at}_{src_at}_{nbytes}"] = raw(dst)
            results[f"getmem_{dst_at}_{src_at}_{nbytes}"] = raw(got)
    nvshmem.free_tensor(dst)
    nvshmem.free_tensor(src)


def check_signals(results):
    n = 1027
    src = nvshmem.tensor(n, dtype=torch.float32)
    dst = nvshmem.tensor(n, dtype=torch.float32)
    sig = nvshmem.tensor(1, dtype=torch.uint64)
    seen = torch.zeros(n, dtype=torch.float32, device="cuda")
    sig.zero_()
    for nbi in (False, True):
        for rnd in (1, 2, 3):
            src.copy_(pattern(me, n, torch.float32).cuda() + rnd)
            torch.cuda.synchronize()
            nvshmem.barrier_all()
            value = rnd + 3 * nbi
            ping[(1,)](dst, src, sig, seen, n, value, sdt.SIGNAL_SET, peer, nbi)
            torch.cuda.synchronize()
            nvshmem.barrier_all()
            expect(
                f"putmem_signal nbi={nbi} round {rnd}", dst, pattern(peer, n, torch.float32) + rnd
            )
            expect(
                f"read in the kernel after signal_wait_until, nbi={nbi} round {rnd}",
                seen,
                pattern(peer, n, torch.float32) + rnd,
            )
            expect("signal value", sig, torch.tensor([value], dtype=torch.uint64))
    # ADD, with NVSHMEM4Py's SignalOp member: the signal goes 6 -> 6 + 4
    nvshmem.barrier_all()
    ping[(1,)](dst, src, sig, seen, n, 4, int(nvshmem.SignalOp.SIGNAL_ADD), peer, False)
    torch.cuda.synchronize()
    nvshmem.barrier_all()
    expect("signal after ADD", sig, torch.tensor([10], dtype=torch.uint64))
    results["signals"] = raw(dst)

    flag = nvshmem.tensor(1, dtype=torch.int32)
    flag.zero_()
    sig.zero_()
    torch.cuda.synchronize()
    nvshmem.barrier_all()
    flag_handoff[(1,)](dst, src, flag, sig, n, peer)
    torch.cuda.synchronize()
    nvshmem.barrier_all()
    expect("putmem_block before the flag", dst, pattern(peer, n, torch.float32) + 3)
    expect("flag", flag, torch.tensor([7], dtype=torch.int32))
    expect("signal_op ADD", sig, torch.tensor([2], dtype=torch.uint64))
    for t in (flag, sig, dst, src):
        nvshmem.free_tensor(t)


def check_point_ops(results):
    src = nvshmem.tensor(16, dtype=torch.int64)
    dst = nvshmem.tensor(16, dtype=torch.int64)
    out = torch.zeros(4, dtype=torch.int32, device="cuda")
    src.copy_(pattern(me, 16, torch.int64).cuda())
    dst.zero_()
    torch.cuda.synchronize()
    nvshmem.barrier_all()
    point_ops[(1,)](dst, src, out, peer)
    torch.cuda.synchronize()
    nvshmem.barrier_all()
    mine = pattern(me, 16, torch.int64)
    want = torch.zeros(16, dtype=torch.int64)
    want[0] = mine[0] + 1  # the peer's p of my own src[0] (its g) + 1
    want[1:9] = pattern(peer, 16, torch.int64)[:8]
    expect("p / g / remote_ptr", dst, want)
    expect(
        "my_pe, n_pes, team_my_pe, team_n_pes",
        out,
        torch.tensor([me, npes, me, npes], dtype=torch.int32),
    )
    results["point_ops"] = raw(dst)
    nvshmem.free_tensor(dst)
    nvshmem.free_tensor(src)


def check_atomics(results):
    for dtype in (torch.int32, torch.uint32, torch.int64, torch.uint64):
        words = nvshmem.tensor(1 + 8 * npes, dtype=dtype)
        words.zero_()
        out = torch.zeros(9, dtype=dtype, device="cuda")
        torch.cuda.synchronize()
        nvshmem.barrier_all()
        atomics[(1,)](words, out, me + 1, peer)
        torch.cuda.synchronize()
        nvshmem.barrier_all()
        if me == 0:
            total = sum(2 * (pe + 1) + 2 for pe in range(npes))
            expect(f"{dtype} counter", words[:1], torch.tensor([total], dtype=dtype))
        # my word at the peer: 40, swap 12, cas 12->15, cas(99) fails, |48 = 63, &60 = 60, ^5 = 57
        expect(f"{dtype} fetched", out[2:], torch.tensor([40, 40, 12, 15, 15, 63, 60], dtype=dtype))
        at = 1 + 8 * peer
        expect(
            f"{dtype} peer's words here",
            words[at : at + 2],
            torch.tensor([57, (6 & 3) ^ 9], dtype=dtype),
        )
        results[f"atomics_{dtype}"] = raw(words)
        nvshmem.free_tensor(words)


def check_collectives(results):
    n = 513
    for dtype in (torch.float32, torch.int32, torch.bfloat16):
        t = {
            name: nvshmem.tensor(n * npes, dtype=dtype)
            for name in (
                "a2a_dst",
                "a2a_src",
                "fc_dst",
                "fc_src",
                "bc_dst",
                "bc_src",
                "red_dst",
                "red_src",
                "inplace",
                "mx_dst",
                "in_place",
            )
        }
        for name, x in t.items():
            x.copy_(
                pattern(me, n * npes, dtype).cuda()
                if "src" in name or "place" in name
                else torch.zeros(n * npes, dtype=dtype)
            )
        torch.cuda.synchronize()
        nvshmem.barrier_all()
        collectives[(1,)](
            t["a2a_dst"],
            t["a2a_src"],
            t["fc_dst"],
            t["fc_src"],
            t["bc_dst"],
            t["bc_src"],
            t["red_dst"],
            t["red_src"],
            t["inplace"],
            t["mx_dst"],
            n,
        )
        reduce_in_place[(1,)](t["in_place"], n * npes)  # more than one block of 1024
        torch.cuda.synchronize()
        nvshmem.barrier_all()
        every = [pattern(pe, n * npes, dtype) for pe in range(npes)]
        expect(
            f"alltoall {dtype}",
            t["a2a_dst"],
            torch.cat([every[pe][me * n : (me + 1) * n] for pe in range(npes)]),
        )
        expect(f"fcollect {dtype}", t["fc_dst"], torch.cat([every[pe][:n] for pe in range(npes)]))
        expect(f"broadcast {dtype}", t["bc_dst"][:n], every[ROOT_PE][:n])
        total = every[0][:n]
        for pe in range(1, npes):
            total = total + every[pe][:n]
        expect(f"reduce sum {dtype}", t["red_dst"][:n], total)
        expect(f"reduce sum again {dtype}", t["inplace"][:n], total)
        whole = every[0]
        for pe in range(1, npes):
            whole = whole + every[pe]
        expect(f"reduce sum in place {dtype}", t["in_place"], whole)
        expect(
            f"reduce max {dtype}",
            t["mx_dst"][:n],
            torch.stack([every[pe][:n] for pe in range(npes)]).max(0).values,
        )
        for name, x in t.items():
            results[f"{name}_{dtype}"] = raw(x)
            nvshmem.free_tensor(x)


def check_one_order(results):
    """The own engine sums in the one order (NVSHMEM's bitcode promises
    none): members 0, 1, ...; 16-bit floats in float32, rounded once; max
    takes a NaN from any member and keeps the earlier of +0 and -0."""
    if engine != "symmem":
        return
    count = 3001  # three blocks of 1024
    kinds = ((torch.float16, "float16"), (torch.bfloat16, "float32"), (torch.float32, "float32"))
    for dtype, name in kinds:  # name: spread()'s range of magnitudes
        every = [torch.from_numpy(spread(pe, npes, count, name)).to(dtype) for pe in range(npes)]
        wide = [e.float().numpy() for e in every]
        src, sums, maxes = (nvshmem.tensor(count, dtype=dtype) for _ in range(3))
        src.copy_(every[me].cuda())
        torch.cuda.synchronize()
        nvshmem.barrier_all()
        reduce_sum_max[(1,)](sums, maxes, src, count)
        torch.cuda.synchronize()
        for op, got in (("sum", sums), ("max", maxes)):
            want = torch.from_numpy(one_order(wide, op, "float32")).to(dtype).float().numpy()
            if not same_bits(got.float().cpu().numpy(), want):
                raise AssertionError(f"PE {me}: reduce {op} {dtype}: not the one order's bits")
        nvshmem.barrier_all()
        for x in (src, sums, maxes):
            nvshmem.free_tensor(x)


def dead_peer():
    sig = nvshmem.tensor(1, dtype=torch.uint64)
    sig.zero_()
    torch.cuda.synchronize()
    nvshmem.barrier_all()
    if me == 1:
        os._exit(0)
    try:
        wait_forever[(1,)](sig)
        torch.cuda.synchronize()
    except Exception as error:  # the kernel trapped: the context is gone
        print(f"PE {me} OK (triton dead peer: {type(error).__name__})", flush=True)
        os._exit(0)
    raise AssertionError("the kernel waiting on the dead PE returned")


nvshmem.init(backend="gpu")
me, npes = nvshmem.my_pe(), nvshmem.n_pes()
ROOT_PE = min(1, npes - 1)  # the broadcast's root: PE 1, or PE 0 alone
ROOT = tl.constexpr(ROOT_PE)
peer = (me + 1) % npes
engine = sdt.configure()
assert engine == os.environ.get("SYMMEM_TRITON_ENGINE", engine), engine
if len(sys.argv) > 1 and sys.argv[1] == "dead_peer":
    dead_peer()
results = {}
started = time.monotonic()
for check in (
    check_put_get,
    check_alignments,
    check_signals,
    check_point_ops,
    check_atomics,
    check_collectives,
    check_one_order,
):
    check(results)
    # progress (compiling against NVSHMEM's bitcode takes seconds a kernel)
    print(
        f"PE {me}: {check.__name__} passed at {time.monotonic() - started:.0f} s",
        file=sys.stderr,
        flush=True,
    )
where = os.environ.get("TRITON_RESULTS")
if where:
    np.savez(os.path.join(where, f"{engine}-pe{me}.npz"), **results)
nvshmem.barrier_all()
nvshmem.finalize()
print(f"PE {me} OK (triton {engine})", flush=True)
