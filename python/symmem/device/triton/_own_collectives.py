"""symmem's own engine for Triton kernels, its collectives' pieces: copies to
every member of a team and reductions over their copies, made between two
syncs (_own.sync) by one program at a time. They read no device address of
their own (remote() and the team table, in _own, do), so they need nothing
of _runtime.configure()."""

import triton
import triton.language as tl

from ._copy import copy
from ._own import address, remote, sync, team_member, team_rank, team_size

REDUCE_BLOCK = tl.constexpr(1024)  # elements a program reduces at a time


@triton.jit
def push(
    team, dst, src, nbytes, TO_SLOT: tl.constexpr, FROM_SLOT: tl.constexpr, CALL: tl.constexpr
):
    """Copies nbytes to every member's dst: from src + i * nbytes to member
    i (FROM_SLOT) or from src, into dst + me * nbytes (TO_SLOT) or dst."""
    dst = address(dst)
    src = address(src)
    nbytes = tl.cast(nbytes, tl.uint64)
    n = team_size(team, CALL)
    me = team_rank(team, CALL).to(tl.uint64)
    into = dst
    if TO_SLOT:
        into = dst + me * nbytes
    for i in range(0, n):
        start = src
        if FROM_SLOT:
            start = src + tl.cast(i, tl.uint64) * nbytes
        copy(remote(into, nbytes, team_member(team, i, CALL), 0, CALL), start, nbytes, False)


@triton.jit
def combine(a, b, OP: tl.constexpr):
    """a, what the members before combined to, op b, the next member's
    values: symmem/vocabulary.h's combine column (min and max: a NaN b wins,
    of equal values such as +0 and -0 a stays), so that every engine gives
    the same bits (docs/reproducibility.md)."""
    if OP == "sum":
        r = a + b
    elif OP == "prod":
        r = a * b
    elif OP == "max":
        r = tl.where((b > a) | (b != b), b, a)
    elif OP == "min":
        r = tl.where((b < a) | (b != b), b, a)
    elif OP == "and":
        r = a & b
    elif OP == "or":
        r = a | b
    else:
        tl.static_assert(
            OP == "xor", "reduce: operation must be sum, prod, max, min, and, or or xor"
        )
        r = a ^ b
    return r


@triton.jit
def reduce_block(team, src, lo, hi, OP: tl.constexpr, CALL: tl.constexpr):
    """Every member's src[lo:lo + REDUCE_BLOCK] (below hi) combined in member
    order, member 0 first (the same bits on every PE); 16-bit floats
    accumulate in float32 and are rounded once, at the end."""
    n = team_size(team, CALL)
    T: tl.constexpr = src.dtype.element_ty
    WIDE: tl.constexpr = tl.float32 if (T == tl.float16) or (T == tl.bfloat16) else T
    src_at = address(src)
    nbytes = tl.cast(hi * (T.primitive_bitwidth // 8), tl.uint64)
    offs = lo + tl.arange(0, REDUCE_BLOCK)
    mask = offs < hi
    first = remote(src_at, nbytes, team_member(team, 0, CALL), 1, CALL)
    acc = tl.cast(tl.load(first.to(src.dtype) + offs, mask=mask), WIDE)
    for i in range(1, n):
        peer = remote(src_at, nbytes, team_member(team, i, CALL), 1, CALL)
        x = tl.load(peer.to(src.dtype) + offs, mask=mask)
        acc = combine(acc, tl.cast(x, WIDE), OP)
    return acc.to(T)


@triton.jit
def reduce_range(team, dst, src, lo, hi, OP: tl.constexpr, CALL: tl.constexpr):
    """dst[lo:hi] = every member's src[lo:hi] combined (reduce_block)."""
    for start in range(lo, hi, REDUCE_BLOCK):
        offs = start + tl.arange(0, REDUCE_BLOCK)
        tl.store(dst + offs, reduce_block(team, src, start, hi, OP, CALL), mask=offs < hi)


@triton.jit
def reduce_in_place(team, dest, nreduce, OP: tl.constexpr, CALL: tl.constexpr):
    """dest = every member's dest combined (a reduce whose source is its
    destination): each block of elements combined in registers from every
    member, then, after a sync (nobody reads it any more), stored."""
    for lo in range(0, nreduce, REDUCE_BLOCK):
        acc = reduce_block(team, dest, lo, nreduce, OP, CALL)
        sync(team, CALL)
        offs = lo + tl.arange(0, REDUCE_BLOCK)
        tl.store(dest + offs, acc, mask=offs < nreduce)
        sync(team, CALL)
