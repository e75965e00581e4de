"""What a program pays the first time it calls a collective: on the gpu
backend symmem compiles each kernel (one per dtype and op for reduce) at its
first use, with NVRTC, and the driver translates its PTX for the GPU:

    python -m symmem.run -n 1 -m symmem.bench.first_use

Prints the time of init, then of each call on a stream, synchronized, twice
for the first one: the first time includes the compile, the second not. Run
it with a fresh CUDA_CACHE_PATH to see a machine's first run, and again with
the same one to see what CUDA's cache of translated kernels saves."""

import time

import symmem as nvshmem

CALLS = [
    ("float32", "sum"),
    ("float32", "sum"),
    ("float16", "sum"),
    ("int64", "max"),
    ("float64", "prod"),
]


def timed(label, fn, sync):
    start = time.perf_counter()
    fn()
    sync()
    print(f"{label:<24} {1e3 * (time.perf_counter() - start):8.2f} ms", flush=True)


def main():
    start = time.perf_counter()
    nvshmem.init()
    print(
        f"{'init':<24} {1e3 * (time.perf_counter() - start):8.2f} ms "
        f"({nvshmem.get_version().backend} backend, {nvshmem.n_pes()} PE(s))",
        flush=True,
    )
    on_gpu = nvshmem.get_version().backend == "gpu"
    if on_gpu:
        import cupy as cp

        import symmem.interop.cupy as scp

        stream = cp.cuda.Stream()
        array, free, sync = scp.array, scp.free_array, stream.synchronize
    else:  # the cpu backend: host calls, nothing to compile
        stream = None
        array, free, sync = nvshmem.array, nvshmem.free_array, lambda: None
    world = nvshmem.Teams.TEAM_WORLD
    made = []
    for dtype, op in CALLS:
        src, dst = array((1024,), dtype=dtype), array((1024 * nvshmem.n_pes(),), dtype=dtype)
        made += [src, dst]
        timed(
            f"reduce {dtype} {op}",
            lambda dst=dst, src=src, op=op: nvshmem.reduce(
                world, dst[:1024], src, op, stream=stream
            ),
            sync,
        )
    src, dst = made[0], made[1]
    for _ in range(2):
        timed("fcollect", lambda: nvshmem.fcollect(world, dst, src, stream=stream), sync)
    for _ in range(2):
        timed("barrier", lambda: nvshmem.barrier(world, stream=stream), sync)
    for x in made:
        free(x)
    nvshmem.finalize()


if __name__ == "__main__":
    main()
