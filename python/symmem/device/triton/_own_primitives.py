"""symmem's own engine for Triton kernels, its primitives: loads at an
address (plain, acquire at system scope, volatile), the system-scope fences,
the global timer, and pointers as integer addresses; inline PTX, mostly.
They read no device address (STATE, CONSTS), so they need nothing of
_runtime.configure(). _own.py builds on them and imports them, so
_own.fence_sc_sys, _own.address and the rest are still there for _api.py."""

import triton
import triton.language as tl


# ---- loads, fences, the clock ----


@triton.jit
def _u64(addr):
    """The uint64 at addr (an integer, or a constant address)."""
    return tl.load(tl.cast(addr, tl.uint64).to(tl.pointer_type(tl.uint64)))


@triton.jit
def _i32(addr):
    return tl.load(tl.cast(addr, tl.uint64).to(tl.pointer_type(tl.int32)))


@triton.jit
def ld_acquire(addr, BITS: tl.constexpr, SIGNED: tl.constexpr):
    """An acquire load at system scope of a BITS-wide integer at addr, widened
    to 64 bits (signed or not)."""
    if BITS == 64:
        v = tl.inline_asm_elementwise(
            "ld.acquire.sys.global.u64 $0, [$1];",
            "=l,l",
            [addr],
            dtype=tl.uint64,
            is_pure=False,
            pack=1,
        )
    elif SIGNED:
        v = tl.inline_asm_elementwise(
            f"ld.acquire.sys.global.s{BITS} $0, [$1];",
            "=r,l",
            [addr],
            dtype=tl.int32,
            is_pure=False,
            pack=1,
        )
    else:
        v = tl.inline_asm_elementwise(
            f"ld.acquire.sys.global.u{BITS} $0, [$1];",
            "=r,l",
            [addr],
            dtype=tl.uint32,
            is_pure=False,
            pack=1,
        )
    if SIGNED:
        wide = tl.cast(v, tl.int64, bitcast=BITS == 64)
    else:
        wide = tl.cast(v, tl.uint64)
    return wide


@triton.jit
def _ld_volatile_u32(addr):
    return tl.inline_asm_elementwise(
        "ld.volatile.global.u32 $0, [$1];", "=r,l", [addr], dtype=tl.uint32, is_pure=False, pack=1
    )


@triton.jit
def fence_sc_sys():
    tl.inline_asm_elementwise(
        "fence.sc.sys; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False, pack=1
    )


@triton.jit
def fence_acq_rel_sys():
    tl.inline_asm_elementwise(
        "fence.acq_rel.sys; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False, pack=1
    )


@triton.jit
def _globaltimer():
    return tl.inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.uint64, is_pure=False, pack=1
    )


# ---- addresses ----


@triton.jit
def address(x):
    """A pointer or an integer address as uint64."""
    if x.dtype.is_ptr():
        return tl.cast(x, tl.uint64, bitcast=True)
    else:
        return tl.cast(x, tl.uint64)


@triton.jit
def same_address(a, b):
    """Whether pointers (or addresses) a and b are one address, decided at
    run time: compared through an opaque move, because where a kernel
    passes one array as both, Triton 3.6 folds a plain comparison and its
    coalescing pass then fails an assertion (reduce(team, x, x, ...))."""
    at = tl.inline_asm_elementwise(
        "mov.b64 $0, $1;", "=l,l", [address(a)], dtype=tl.uint64, is_pure=True, pack=1
    )
    return at == address(b)
