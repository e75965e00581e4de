"""The CuTe DSL kernels device_cute.py times, on whichever engine of
symmem.device.cute the process uses (apart from the worker, which needs
CuPy and a GPU, so that they compile without either:
tests/python/test_bench_cute.py). One operation a kernel, each with a
@cute.jit launcher whose arguments are all runtime values, so that one
compile serves every size of a run (compiling is slow: NVSHMEM's engine
links its device bitcode into each kernel).

Buffers are uint8 tensors over symmetric arrays; a kernel cuts its views
out of them at runtime (view()), as a Triton kernel offsets a pointer."""

import cutlass
import cutlass.cute as cute

import symmem.device.cute as dev

BLOCK_THREADS = 1024  # a put_block's block, as nvshmem_device.cu's and the other device groups'
LINE = 128  # bytes: an 8-byte get each from its own cache line
WORD = 8  # the latency and ping-pong kernels' message, in bytes


def view(tensor, at, nbytes):
    """Trace time: nbytes of tensor from byte at (a view, no copy)."""
    return cute.make_tensor(tensor.iterator + at, cute.make_layout(nbytes))


@cute.kernel
def copy_kernel(
    dst: cute.Tensor,
    src: cute.Tensor,
    chunk: cutlass.Int32,
    total: cutlass.Int32,
    pe: cutlass.Int32,
    reps: cutlass.Int32,
    slots: cutlass.Int32,
    get: cutlass.Constexpr,
):
    """Block i copies bytes [i * chunk, (i + 1) * chunk) of total with
    put_block (get_block where get), reps times, then quiets; rep r of a
    get reads slot r % slots (each slot total bytes further on), memory no
    earlier get of the kernel read."""
    block, _, _ = cute.arch.block_idx()
    tid, _, _ = cute.arch.thread_idx()
    start = block * chunk
    nbytes = cutlass.min(chunk, total - start)
    if nbytes > 0:
        for rep in cutlass.range(reps):
            at = start + (rep % slots) * total
            if cutlass.const_expr(get):
                dev.get_block(view(dst, at, nbytes), view(src, at, nbytes), pe)
            else:
                dev.put_block(view(dst, at, nbytes), view(src, at, nbytes), pe)
        if tid == 0:  # as nvshmem_device.cu's put_chunks
            dev.quiet()


@cute.jit
def put_chunks(
    dst: cute.Tensor,
    src: cute.Tensor,
    chunk: cutlass.Int32,
    total: cutlass.Int32,
    pe: cutlass.Int32,
    reps: cutlass.Int32,
    slots: cutlass.Int32,
    blocks: cutlass.Int32,
):
    copy_kernel(dst, src, chunk, total, pe, reps, slots, False).launch(
        grid=(blocks, 1, 1), block=(BLOCK_THREADS, 1, 1)
    )


@cute.jit
def get_chunks(
    dst: cute.Tensor,
    src: cute.Tensor,
    chunk: cutlass.Int32,
    total: cutlass.Int32,
    pe: cutlass.Int32,
    reps: cutlass.Int32,
    slots: cutlass.Int32,
    blocks: cutlass.Int32,
):
    copy_kernel(dst, src, chunk, total, pe, reps, slots, True).launch(
        grid=(blocks, 1, 1), block=(BLOCK_THREADS, 1, 1)
    )


@cute.kernel
def latency_kernel(
    dst: cute.Tensor,
    src: cute.Tensor,
    pe: cutlass.Int32,
    count: cutlass.Int32,
    slots: cutlass.Int32,
    get: cutlass.Constexpr,
):
    """One thread: count 8-byte puts each followed by quiet, or count
    8-byte gets (complete on return) each from the next of slots lines."""
    for i in cutlass.range(count):
        if cutlass.const_expr(get):
            at = (i % slots) * LINE
            dev.get(view(dst, at, WORD), view(src, at, WORD), pe)
        else:
            dev.put(view(dst, 0, WORD), view(src, 0, WORD), pe)
            dev.quiet()


@cute.jit
def put_loop(
    dst: cute.Tensor,
    src: cute.Tensor,
    pe: cutlass.Int32,
    count: cutlass.Int32,
    slots: cutlass.Int32,
):
    latency_kernel(dst, src, pe, count, slots, False).launch(grid=(1, 1, 1), block=(1, 1, 1))


@cute.jit
def get_loop(
    dst: cute.Tensor,
    src: cute.Tensor,
    pe: cutlass.Int32,
    count: cutlass.Int32,
    slots: cutlass.Int32,
):
    latency_kernel(dst, src, pe, count, slots, True).launch(grid=(1, 1, 1), block=(1, 1, 1))


@cute.kernel
def ping_pong_kernel(
    buf: cute.Tensor,
    src: cute.Tensor,
    sig: cute.Tensor,
    rounds: cutlass.Int32,
    peer: cutlass.Int32,
    first: cutlass.Int32,
):
    """One thread: rounds of an 8-byte put_signal (SIGNAL_SET r) answered
    by the peer's; first (nonzero) starts each round, the other PE
    answers it."""
    for r in cutlass.range(1, rounds + 1):
        if first != 0:
            dev.put_signal(view(buf, 0, WORD), view(src, 0, WORD), sig, r, dev.SIGNAL_SET, peer)
            dev.signal_wait(sig, dev.CMP_GE, r)
        else:
            dev.signal_wait(sig, dev.CMP_GE, r)
            dev.put_signal(view(buf, 0, WORD), view(src, 0, WORD), sig, r, dev.SIGNAL_SET, peer)


@cute.jit
def ping_pong(
    buf: cute.Tensor,
    src: cute.Tensor,
    sig: cute.Tensor,
    rounds: cutlass.Int32,
    peer: cutlass.Int32,
    first: cutlass.Int32,
):
    ping_pong_kernel(buf, src, sig, rounds, peer, first).launch(grid=(1, 1, 1), block=(1, 1, 1))


# Each op's launcher and the kinds of its runtime arguments after the
# tensors, which the worker passes and a compile check fakes.
LAUNCHERS = {
    "put": (put_chunks, 2, 6),  # (launcher, tensors, ints)
    "get": (get_chunks, 2, 6),
    "put_lat": (put_loop, 2, 3),
    "get_lat": (get_loop, 2, 3),
    "put_signal": (ping_pong, 3, 3),
}
