"""The own engine's copy (_own.put, get, put_signal, push): nbytes between
two addresses by every thread of a Triton program, in the widest unit
the alignment allows. Plain loads and stores (gets load past L1); what
makes a copy visible elsewhere is the caller's (a fence, a barrier, a
release)."""

import triton
import triton.language as tl


@triton.constexpr_function
def _lanes(threads):
    """Elements a copy loop moves per step: 8 a thread, 2 where the program
    has more than 512 threads (so that two programs of 1024 threads still
    fit in an SM's registers)."""
    return threads * (8 if threads <= 512 else 2)


@triton.jit
def _copy_units(dst, src, count, UNIT: tl.constexpr, FRESH: tl.constexpr):
    """count elements of type UNIT from src to dst (FRESH: loads past L1)."""
    LANES: tl.constexpr = _lanes(tl.extra.cuda.num_threads())
    d = dst.to(tl.pointer_type(UNIT))
    s = src.to(tl.pointer_type(UNIT))
    for start in range(0, count, LANES):
        offs = start + tl.arange(0, LANES)
        mask = offs < count
        tl.store(
            d + offs, tl.load(s + offs, mask=mask, cache_modifier=".cg" if FRESH else ""), mask=mask
        )


@triton.jit
def _copy_one(dst, src, UNIT: tl.constexpr, FRESH: tl.constexpr):
    """One UNIT from src to dst (a scalar: Triton stores it once)."""
    tl.store(
        dst.to(tl.pointer_type(UNIT)),
        tl.load(src.to(tl.pointer_type(UNIT)), cache_modifier=".cg" if FRESH else ""),
    )


@triton.constexpr_function
def _load_16(fresh):
    return "ld.global.cg.v2.u64" if fresh else "ld.global.v2.u64"


@triton.jit
def _copy_16(dst, src, units, FRESH: tl.constexpr):
    """units 16-byte units from src to dst, both 16-byte aligned, in explicit
    16-byte loads and stores (Triton cannot be told that a pointer made
    from an integer is aligned); each thread has all its loads in flight
    before its stores."""
    LANES: tl.constexpr = _lanes(tl.extra.cuda.num_threads())
    for start in range(0, units, LANES):
        offs = (start + tl.arange(0, LANES)).to(tl.uint64)
        live = (offs < units).to(tl.int32)
        lo, hi = tl.inline_asm_elementwise(
            """{
            .reg .pred live;
            setp.ne.b32 live, $3, 0;
            mov.u64 $0, 0;
            mov.u64 $1, 0;
            @live """
            + _load_16(FRESH)
            + """ {$0, $1}, [$2];
            }""",
            "=l,=l,l,r",
            [src + offs * 16, live],
            dtype=(tl.uint64, tl.uint64),
            is_pure=False,
            pack=1,
        )
        tl.inline_asm_elementwise(
            """{
            .reg .pred live;
            setp.ne.b32 live, $4, 0;
            @live st.global.v2.u64 [$1], {$2, $3};
            mov.u32 $0, 0;
            }""",
            "=r,l,l,l,r",
            [dst + offs * 16, lo, hi, live],
            dtype=tl.int32,
            is_pure=False,
            pack=1,
        )


@triton.jit
def copy(dst, src, nbytes, FRESH: tl.constexpr):
    """nbytes from src to dst (uint64 addresses) by every thread of the
    program, in the widest unit the alignment allows; every thread's share
    is issued when it returns (visible elsewhere after a fence). FRESH (a
    get): loads bypass L1, so each reads the peer's memory now, not a line
    an earlier read of the kernel left there. Every thread runs every
    instruction here: whole 16-byte units skip the rest in two tests, and
    the 16-byte loop has one call site (two took the registers that a
    second program of 1024 threads on the SM needs)."""
    if ((dst | src | nbytes) & 15) != 0:
        # dst and src equally misaligned (a slice at the same offset of two
        # symmetric buffers, a grid's programs each at its own offset): the
        # bytes up to their common boundary first, then wide units
        head = _head(dst, src, nbytes)
        if head > 0:
            _copy_units(dst, src, tl.cast(head, tl.int64), tl.int8, FRESH)
            dst += head
            src += head
            nbytes -= head
    aligned = dst | src
    done = tl.cast(0, tl.uint64)
    if (aligned & 15) == 0:
        done = nbytes // 16 * 16
        _copy_16(dst, src, nbytes // 16, FRESH)
    elif (aligned & 7) == 0:
        done = nbytes // 8 * 8
        _copy_units(dst, src, tl.cast(done // 8, tl.int64), tl.int64, FRESH)
    elif (aligned & 3) == 0:
        done = nbytes // 4 * 4
        _copy_units(dst, src, tl.cast(done // 4, tl.int64), tl.int32, FRESH)
    if done < nbytes:
        _copy_tail(dst + done, src + done, nbytes - done, aligned, FRESH)


@triton.jit
def _head(dst, src, nbytes):
    """Bytes to copy one by one before dst and src are both aligned to the
    widest unit they can share; 0 where that does not pay (short copies)."""
    apart = dst ^ src
    head = tl.cast(0, tl.uint64)
    if nbytes >= 32:
        if (apart & 15) == 0:
            head = (0 - dst) & 15
        elif (apart & 7) == 0:
            head = (0 - dst) & 7
        elif (apart & 3) == 0:
            head = (0 - dst) & 3
    return head


@triton.jit
def _copy_tail(dst, src, nbytes, aligned, FRESH: tl.constexpr):
    """What is left after the wide units: one 8- and one 4-byte scalar
    where aligned (an 8-byte put is one load and one store), then bytes."""
    done = tl.cast(0, tl.uint64)
    if ((aligned & 7) == 0) & (nbytes >= 8):
        _copy_one(dst, src, tl.int64, FRESH)
        done = tl.cast(8, tl.uint64)
    if ((aligned & 3) == 0) & (nbytes - done >= 4):
        _copy_one(dst + done, src + done, tl.int32, FRESH)
        done += 4
    if done < nbytes:
        _copy_units(dst + done, src + done, tl.cast(nbytes - done, tl.int64), tl.int8, FRESH)
