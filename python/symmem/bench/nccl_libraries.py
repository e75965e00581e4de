"""The libraries that run NCCL, each a worker on torch under symmem's
launcher with a file rendezvous, and why one cannot run here:

    nccl                 NCCL through torch.distributed (nccl_worker.py)
    nccl symmetric       NCCL's symmetric kernels through nccl4py, on buffers
                         registered as symmetric windows (nccl_symm_worker.py)
    torch symm-mem       PyTorch SymmetricMemory's one-shot and two-shot
                         all-reduce on its CUDA backend (torch_symm_worker.py)
    torch symm-mem nccl  the same on its NCCL backend: torch.distributed's
                         collectives on NCCL's symmetric windows, and the
                         one-shot and two-shot kernels there

NCCL needs a GPU per rank (it refuses two ranks on one GPU, which symmem's
shared-GPU mode allows): with fewer GPUs than PEs they are left out,
saying so."""

import os
import tempfile

from symmem.bench import plan
from symmem.bench.launching import launch, measuring, missing, stream_records, sweep_args
from symmem.bench.programs import Unavailable

# The collectives NCCL has symmetric kernels for (AllReduce, ReduceScatter,
# AllGather), since this NCCL.
SYMMETRIC_OPS = ("reduce", "reducescatter", "fcollect")
SYMMETRIC_NCCL = (2, 27, 0)
NO_NCCL4PY = (
    "nccl4py is not installed: NCCL's symmetric kernels are called through it "
    "(pip install 'symmem[bench]', or pip install nccl4py)"
)


def torch_nccl():
    """(why torch cannot run NCCL here, or None; the GPUs torch sees)."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        return "torch is not installed (pip install torch)", 0
    if not (torch.cuda.is_available() and dist.is_nccl_available()):
        return "torch has no CUDA or no NCCL here", 0
    return None, torch.cuda.device_count()


def gpu_per_rank(pes, gpus):
    """Why NCCL cannot run pes ranks on gpus GPUs."""
    return (
        f"NCCL needs a GPU per rank: -n {pes} needs {pes} GPUs, {gpus} here "
        "(symmem's PEs may share a GPU, NCCL's ranks may not)"
    )


def need_nccl(opts):
    """Raises Unavailable unless torch runs NCCL here with a GPU per PE."""
    why, gpus = torch_nccl()
    if why:
        raise Unavailable(why)
    if gpus < opts.pes:
        raise Unavailable(gpu_per_rank(opts.pes, gpus))


def ops_in(opts, table):
    """The operations of --ops in table, comma-separated; Unavailable if none."""
    ops = ",".join(op for op in opts.ops.split(",") if op in table)
    if not ops:
        raise Unavailable(f"--ops has none of {', '.join(table)}")
    return ops


def as_version(version):
    """(major, minor, patch) of an NCCL version: a tuple, a packed int
    (2.27.3: 22703), or a string ("2.27.3")."""
    if isinstance(version, int):
        return (version // 10000, version // 100 % 100, version % 100)
    if isinstance(version, str):
        version = version.split("+")[0].split(".")
    return tuple(int(part) for part in tuple(version)[:3])


def too_old(where, version):
    """Why NCCL version (from where) has no symmetric kernels, or None."""
    if as_version(version) >= SYMMETRIC_NCCL:
        return None
    have = ".".join(map(str, as_version(version)))
    return (
        f"{where} NCCL {have}: its symmetric kernels need NCCL 2.27 or later "
        "(pip install -U nvidia-nccl-cu13, or -cu12)"
    )


def nccl4py_version():
    """The version of the NCCL nccl4py loads."""
    try:
        import nccl.core

        loaded = nccl.core.get_version().libnccl
    except Exception as error:
        raise Unavailable(f"nccl4py is installed but does not load: {error}") from None
    if loaded is None:
        raise Unavailable("nccl4py finds no libnccl (pip install nvidia-nccl-cu13, or -cu12)")
    return loaded.version.release


def torch_nccl_version():
    """The version of the NCCL torch runs."""
    import torch

    return torch.cuda.nccl.version()


def torch_has_nccl_backend():
    """Whether torch's symmetric memory can be put on NCCL (set_backend)."""
    try:
        from torch.distributed import _symmetric_memory
    except ImportError:
        return False
    return hasattr(_symmetric_memory, "set_backend")


def worker_run(worker, opts, ops, extra=()):
    """A run of symmem.bench.<worker> on opts.pes ranks measuring ops, its
    rendezvous a file in a fresh folder."""

    def run(log):
        with tempfile.TemporaryDirectory() as tmp:
            store = os.path.join(tmp, "store")
            args = ["-m", f"symmem.bench.{worker}", *sweep_args(opts, ops), "--store", store]
            env = dict(os.environ)
            yield from stream_records(
                launch(opts.pes, [*args, *extra], env, opts.timeout), env, log
            )

    return measuring(run, ops)


def nccl_runner(opts):
    """NCCL through torch.distributed: every collective but the barrier."""
    need_nccl(opts)
    return worker_run("nccl_worker", opts, ops_in(opts, plan.NCCL_OPS))


def nccl_symmetric_runner(opts):
    """NCCL's symmetric kernels through nccl4py."""
    need_nccl(opts)
    ops = ops_in(opts, SYMMETRIC_OPS)
    if missing("nccl.core"):
        raise Unavailable(NO_NCCL4PY)
    why = too_old("nccl4py loads", nccl4py_version())
    if why:
        raise Unavailable(why)
    return worker_run("nccl_symm_worker", opts, ops)


def torch_symm_mem_runner(opts):
    """PyTorch SymmetricMemory's one-shot and two-shot all-reduce."""
    need_nccl(opts)
    return worker_run("torch_symm_worker", opts, ops_in(opts, ("reduce",)))


def torch_symm_mem_nccl_runner(opts):
    """PyTorch SymmetricMemory on its NCCL backend."""
    need_nccl(opts)
    ops = ops_in(opts, SYMMETRIC_OPS)
    if not torch_has_nccl_backend():
        raise Unavailable(
            "this torch cannot put its symmetric memory on NCCL "
            "(torch.distributed._symmetric_memory.set_backend: torch 2.9 or later)"
        )
    why = too_old("torch runs", torch_nccl_version())
    if why:
        raise Unavailable(why)
    return worker_run("torch_symm_worker", opts, ops, ["--backend", "NCCL"])
