"""python -m symmem.bench --help's text after the options: the operations,
the libraries, the sizes, the environment, the GPUs a run's PEs share."""

EPILOG = """\
operations (--ops; default put to barrier, with atomic on the mpi and gpu
backends, init_first and init_again on the gpu backend, and there with 2 PEs
or more every device operation, but not where PEs time-share a GPU (each of
their kernels waits on peers 10,000 times); "host" (put to barrier),
"device", "triton", "cute" and "init" name groups):
{ops}
device operations (gpu backend, 2 PEs or more; PE 0 works, PE 1 is the target):
{device_ops}

libraries (--libs; default every one of the backend that can run here):
  gpu backend:
    symmem          on a CUDA stream, and with stream=None as "symmem (blocking)";
                    on the engine SYMMEM_GPU_ENGINE picks (auto: nvshmem where
                    NVSHMEM loads and every PE has a GPU, else symmem), which
                    the report names
    symmem/symmem_engine, symmem/nvshmem_engine
                    symmem on one engine (SYMMEM_GPU_ENGINE=symmem|nvshmem): put,
                    put_lat, get, put_signal, atomic, init and the collectives;
                    one is left out, with symmem's reason, where its engine
                    cannot run the PEs (nvshmem: NVSHMEM missing, or PEs
                    sharing a GPU)
    cudaMemcpyAsync the GPU's own device-to-device copy (CuPy) of the put and
                    get sizes, timed as symmem's calls on a stream: within the
                    GPU where PE 0 and PE 1 share one, else from PE 0's GPU to
                    PE 1's (get: back); the reference for their bandwidth
    symmem/nvshmem  symmem with NVSHMEM's collectives (SYMMEM_GPU_COLLECTIVES=
                    nvshmem) instead of its own kernels; collectives only
    symmem/one_shot, symmem/two_shot, symmem/push_one_shot, symmem/push_two_shot
                    symmem's reduce forced to one algorithm (SYMMEM_GPU_
                    COLLECTIVES=one_shot|two_shot|push_one_shot|push_two_shot):
                    how the table that picks it by size and PE count is
                    measured; collectives only (the push ones write into
                    the members' staging buffers, SYMMEM_GPU_STAGING)
    torch symm-mem  PyTorch SymmetricMemory's one-shot and two-shot all-reduce
                    (reduce only; needs torch with NCCL)
    torch symm-mem nccl
                    its symmetric memory on its NCCL backend (set_backend(
                    "NCCL"), torch 2.9 on): torch.distributed's all-reduce,
                    reduce-scatter and all-gather on its tensors, which are
                    NCCL symmetric windows (NCCL's symmetric kernels, each row
                    labelled by what ran, as nccl symmetric's), and the one-
                    shot and two-shot all-reduce on them
    nvshmem C       a C program calling NVSHMEM directly, compiled when the run
                    starts (needs cc, the CUDA runtime, the nvidia-nvshmem wheel)
    nvshmem4py      NVSHMEM4Py, started by mpirun
    nccl            NCCL through torch.distributed (collectives only)
    nccl symmetric  NCCL's symmetric kernels (NCCL 2.27 on): all-reduce,
                    reduce-scatter and all-gather on buffers registered as
                    symmetric windows, through nccl4py (pip install
                    'symmem[bench]'); each row labelled by the kernels CUPTI
                    saw run: "nccl symmetric (fell back)" where NCCL ran its
                    regular ones; the NCCL kernels section lists them
    symmem device   the device operations from symmem.device.numba kernels
                    (needs numba-cuda and CuPy) and, as "symmem host", symmem's
                    host calls on a stream doing the same
    nvshmem device  the same kernels calling NVSHMEM's device API: a CUDA C
                    program built with nvcc when the run starts, kept in
                    ~/.cache/symmem/bench (needs nvcc and the nvidia-nvshmem
                    wheel's libnvshmem_device.a)
    symmem triton   the triton_* operations from Triton kernels calling
                    symmem.device.triton on symmem's own engine (needs triton,
                    torch and CuPy)
    nvshmem triton  the same kernels on NVSHMEM's device bitcode (needs the
                    nvidia-nvshmem wheel's libnvshmem_device.bc)
    symmem cute     the cute_* operations from CuTe DSL kernels calling
                    symmem.device.cute on symmem's own engine (needs
                    nvidia-cutlass-dsl, cuda.core and CuPy: symmem[cute])
    nvshmem cute    the same kernels on NVSHMEM's device bitcode
  cpu backend:
    symmem
    symmem njit     the same operations from @numba.njit loops (symmem.device.numba);
                    its call_cost is one 8-byte put inside the loop
    numpy           the same data movement done by one process
    mpi4py          mpi4py under mpirun: put is Put + Flush into an MPI window
                    (Win.Allocate, one Lock_all epoch), put_signal a Send/Recv
                    ping-pong, then the collectives (reduce: Allreduce) and
                    Barrier (pip install 'symmem[mpi]')
  A library that cannot run here is left out, with the reason; the NCCL ones
  (nccl, nccl symmetric, torch symm-mem, torch symm-mem nccl) and NVSHMEM's
  (nvshmem C, nvshmem4py, nvshmem device, and those on the nvshmem engine)
  need a GPU per PE.

PEs sharing GPUs (--backend gpu with more PEs than GPUs; --backend auto then
takes the cpu backend): PE i runs on GPU i % count, on symmem's engine.
Without CUDA MPS the GPU runs one PE at a time, so every wait on a peer
lasts until the peer's turn (milliseconds); with the MPS control daemon
running (found through CUDA_MPS_PIPE_DIRECTORY, default /tmp/nvidia-mps)
their kernels run side by side. Either way the run checks that the paths
work; its numbers are no speed claim, and every table and the summary say
so. --iters 10 and a small --max-size keep such a run short.

sizes: K, M and G suffixes are powers of 2. A sweep runs from --min-size to
--max-size in x4 steps; collective sizes are rounded down to whole float32
blocks of 1/n; put_lat, get_lat and put_signal stop at 4M; device_put and
device_put_grid keep within 1K-64M. Each size: the fastest of 3 timed runs
of 200 calls (50 from 1M, 10 from 64M; --iters sets one count for all).

environment: every variable reaches every PE, so symmem's settings apply
(python -m symmem info lists them; SYMMEM_SPIN_US, for one, sets how long a
wait spins before it sleeps). The symmetric heap is sized for the sweep
unless SYMMEM_SYMMETRIC_SIZE or NVSHMEM_SYMMETRIC_SIZE is set.

progress: on a terminal one line on stderr, rewritten in place: the library,
operation and size running, measurements done of all, the time so far and an
estimate of the time left; elsewhere the same as a plain line every 20 s and
as each library's run ends; none with --quiet.

The output ends with a summary: for each operation and library, the sizes
where symmem is ahead, level (within the spread between rounds: ~ in the
tables) or behind. report.md puts it first and says how each library was
set up (the NumPy reference's buffers are aligned as symmem's heap is).

pip install 'symmem[bench]' brings matplotlib, for the plots, and nccl4py,
for nccl symmetric; the progress display needs nothing more.

To compare PE counts, run once per count (-n 2, -n 3, -n 4), each with its
own --out.
"""
