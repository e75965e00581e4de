"""How each library of a run is set up, in one line for results.json and
report.md: how its processes start and where its buffers live, which a
reader needs to trust a ratio. The code that does it is the library's
worker; a line here changes with it."""

from symmem.bench import numpy_reference

# init_first and init_again, wherever a symmem library measures them
_INIT = (
    "3 launches of init_worker.py (symmem.run), each a fresh job at the heap's defaults, "
    "timing init() and finalize() twice; the slowest PE of a launch, the median launch"
)
_SYMMEM = {
    "cpu": "one process per PE (symmem.run); arrays on the symmetric heap: a /dev/shm file each "
    "PE maps at a 2 MiB boundary, each array at a 256-byte aligned offset in it",
    "mpi": "one MPI process per PE (symmem.run through mpirun) with SYMMEM_ONE_HOST_PER_PE=1: "
    "each PE a host of its own, everything through MPI RMA on one MPI_Win_allocate "
    "window (Open MPI's osc/sm on one machine); put is MPI_Put + MPI_Win_flush_local, "
    "quiet MPI_Win_flush of the PE written; a collective's fingerprints (and a reduction "
    "of up to 8 KiB) go in one point-to-point exchange among the members",
    "gpu": "one process per PE (symmem.run), PE i on GPU i % count; arrays on the symmetric "
    "heap of the engine it ran on (NVSHMEM's, or CUDA VMM memory on the symmem engine); calls "
    "on a CUDA stream (cuda.core) timed with CUDA events, and with stream=None as "
    "symmem (blocking); the atomic on the host clock; init_first and init_again: " + _INIT,
}
_ENGINE = (
    "symmem's worker with SYMMEM_GPU_ENGINE={}, as symmem; put, put_lat, get, put_signal, "
    "atomic, the collectives and init (" + _INIT + ")"
)
_FORCED = "symmem's worker with SYMMEM_GPU_COLLECTIVES={}: its collectives only"
_TRITON = (
    "Triton kernels (bench/triton_kernels.py) calling symmem.device.triton on {}, "
    "under symmem.run; CUDA-event time of a kernel, the fastest of 5"
)

_CUTE = (
    "CuTe DSL kernels (bench/cute_kernels.py) calling symmem.device.cute on {}, "
    "under symmem.run; CUDA-event time of a kernel, the fastest of 5"
)

SETUP = {
    "symmem/symmem_engine": _ENGINE.format("symmem"),
    "symmem/nvshmem_engine": _ENGINE.format("nvshmem"),
    "cudaMemcpyAsync": "one process (no launcher): CuPy's cudaMemcpyAsync, device to device, "
    "of each put and get size on a non-blocking stream of PE 0's GPU, CUDA events as symmem's "
    "stream calls; within the GPU where PE 0 and PE 1 share one, else a peer copy between "
    "their GPUs (put: PE 0's to PE 1's; get: PE 1's to PE 0's); buffers from CuPy's pool, "
    "each size's destination checked",
    "symmem njit": "as symmem, one process per PE and arrays on the symmetric heap; the calls "
    "from @numba.njit loops (symmem.device.numba)",
    "numpy": numpy_reference.SETUP,
    "symmem node path": "the mpi backend as symmem, without SYMMEM_ONE_HOST_PER_PE: the PEs "
    "map each other's heaps (MPI_Win_allocate_shared), put and get are "
    "copies, the atomics MPI's, the barriers and collectives the node's own over the "
    "shared window (as the cpu backend's)",
    "symmem cpu": "the cpu backend's worker, as its own runs: symmem.run, /dev/shm heaps",
    "mpi4py": "mpirun --oversubscribe --bind-to none; put into a Win.Allocate window (one "
    "Lock_all epoch, Put + Flush), the rest on private NumPy arrays (NumPy's own "
    "allocation)",
    "symmem/nvshmem": _FORCED.format("nvshmem"),
    "symmem/one_shot": _FORCED.format("one_shot"),
    "symmem/two_shot": _FORCED.format("two_shot"),
    "symmem/push_one_shot": _FORCED.format("push_one_shot"),
    "symmem/push_two_shot": _FORCED.format("push_two_shot"),
    "torch symm-mem": "torch.distributed (NCCL) under symmem.run; symm_mem.empty tensors, "
    "rendezvous, one_shot_all_reduce and two_shot_all_reduce_",
    "torch symm-mem nccl": "as torch symm-mem, its backend NCCL (set_backend): symm_mem.empty "
    "(ncclMemAlloc) and rendezvous (an NCCL symmetric window), three tensors of the largest "
    "size, each size on their starts: torch.distributed's all_reduce (in place), "
    "reduce_scatter_tensor and all_gather_into_tensor, labelled as nccl symmetric's by the "
    "kernels that ran; then one_shot_all_reduce and two_shot_all_reduce_ as ... one-shot "
    "and ... two-shot where this torch and NCCL (2.28 on) run them; each size's first "
    "call's data checked",
    "nvshmem C": "a C program calling libnvshmem_host.so.3 (nvshmem_floor.c, compiled at the "
    "start); one pair of max-size buffers, typed float collectives, one stream, "
    "CUDA events",
    "nvshmem4py": "NVSHMEM4Py (nvshmem.core) started by mpirun with emulated_mpi; its arrays; "
    "the same worker code as symmem's",
    "nccl": "torch.distributed with NCCL under symmem.run; torch tensors (PyTorch's caching "
    "allocator); CUDA events on NCCL's stream",
    "nccl symmetric": "nccl4py (nccl.core) under symmem.run, a communicator of its own; three "
    "float32 buffers of the largest size from ncclMemAlloc, each registered as a symmetric "
    "window (WindowFlag.CollSymmetric); each size on their starts, out of place: "
    "Communicator.allreduce, reduce_scatter, allgather (eager rows include nccl4py's Python "
    "per call) on torch's stream, CUDA events; each size's first call profiled "
    "(torch.profiler) and its data checked: (fell back) rows ran NCCL's regular kernels, "
    "(unchecked) rows none the profiler saw",
    "symmem device": "Numba kernels calling symmem.device.numba on symmetric arrays, and "
    "symmem's host calls on a stream as symmem host; CUDA-event time of a "
    "kernel, the fastest of 5",
    "nvshmem device": "the same kernels calling NVSHMEM's device API (nvshmem_device.cu, built "
    "with nvcc), on nvshmem_malloc'd buffers; CUDA-event time, the fastest of 5",
    "symmem triton": _TRITON.format("symmem's own engine"),
    "nvshmem triton": _TRITON.format("NVSHMEM's device bitcode"),
    "symmem cute": _CUTE.format("symmem's own engine"),
    "nvshmem cute": _CUTE.format("NVSHMEM's device bitcode"),
}


def setup(name, backend):
    """The setup line of library name on backend ("cpu" or "gpu")."""
    return _SYMMEM[backend] if name == "symmem" else SETUP.get(name, "")
