"""The Triton kernels device_triton.py times, on whichever engine of
symmem.device.triton is configured (apart from the worker, which needs
CuPy and a GPU, so that tests/python/test_triton.py compiles them
without either)."""

import triton
import triton.language as tl

import symmem.device.triton as sdt

LINE = tl.constexpr(128)  # bytes: an 8-byte get each from its own cache line


@sdt.requires_symmem
@triton.jit(do_not_specialize=["chunk", "total", "reps", "slots"])
def copy_chunks(dst, src, chunk, total, pe, reps, slots, GET: tl.constexpr):
    """Program i copies bytes [i * chunk, (i + 1) * chunk) of total, reps
    times, then quiets; rep r of a get reads slot r % slots (each slot
    total bytes further on), memory no earlier get of the kernel read."""
    start = tl.program_id(0).to(tl.int64) * chunk
    nbytes = tl.minimum(chunk, total - start)
    if nbytes > 0:
        for rep in range(reps):
            at = start + (rep % slots).to(tl.int64) * total
            if GET:
                sdt.getmem_block(dst + at, src + at, nbytes, pe)
            else:
                sdt.putmem_block(dst + at, src + at, nbytes, pe)
        sdt.quiet()


@sdt.requires_symmem
@triton.jit(do_not_specialize=["count", "slots"])
def latency_loop(dst, src, pe, count, slots, GET: tl.constexpr):
    """count 8-byte puts each followed by quiet, or count 8-byte gets each
    from the next of slots cache lines."""
    for i in range(count):
        if GET:
            at = (i % slots).to(tl.int64) * LINE
            sdt.getmem_block(dst + at, src + at, 8, pe)
        else:
            sdt.putmem_block(dst, src, 8, pe)
            sdt.quiet()


@sdt.requires_symmem
@triton.jit(do_not_specialize=["rounds"])
def ping_pong(buf, src, sig, rounds, peer, FIRST: tl.constexpr):
    """rounds of an 8-byte putmem_signal_block (SIGNAL_SET r) answered by
    the peer's; FIRST starts each round, the other PE answers it."""
    for r in range(1, rounds + 1):
        if FIRST:
            sdt.putmem_signal_block(buf, src, 8, sig, r, sdt.SIGNAL_SET, peer)
            sdt.signal_wait_until(sig, sdt.CMP_GE, r)
        else:
            sdt.signal_wait_until(sig, sdt.CMP_GE, r)
            sdt.putmem_signal_block(buf, src, 8, sig, r, sdt.SIGNAL_SET, peer)
