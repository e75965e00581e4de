"""The libraries that set the gpu backend's two engines side by side
(docs/gpu.md, "GPU engines"): symmem/symmem_engine and
symmem/nvshmem_engine, symmem's worker with SYMMEM_GPU_ENGINE set, each
left out with symmem's reason where its PEs cannot run on it (engine_preview);
and cudaMemcpyAsync, the GPU's own copy of the put and get sizes, the
reference for their bandwidth (memcpy_reference.py)."""

import os
import sys

from symmem.bench import engine_preview, plan
from symmem.bench.launching import gpu_count, measuring, missing, stream_records, sweep_args
from symmem.bench.programs import Unavailable
from symmem.bench.symmem_runs import symmem_records

# What the engines are compared at: the host calls whose path differs
# between them (the heap, the peer mappings, the copies, the start-up) and
# the collectives, whose kernels are symmem's on both.
ENGINE_OPS = (
    "put",
    "put_lat",
    "get",
    "put_signal",
    *plan.ATOMIC_OPS,
    *plan.INIT_OPS,
    *plan.COLLECTIVES,
)
MEMCPY = "cudaMemcpyAsync"  # the reference's name in the records
MEMCPY_OPS = ("put", "get")


def engine_runner(engine):
    """symmem/<engine>_engine: symmem's worker with SYMMEM_GPU_ENGINE=engine,
    at the operations of ENGINE_OPS in --ops. In the default libraries it
    leaves the engine that plain symmem gets here (auto's) to symmem, whose
    rows the report takes for it: the same measurement twice would only
    lengthen the run; --libs naming it runs it."""
    label = f"symmem/{engine}_engine"

    def runner(opts):
        ops = ",".join(op for op in opts.ops.split(",") if op in ENGINE_OPS)
        if not ops:
            raise Unavailable(f"--ops has none of {', '.join(ENGINE_OPS)}")
        env_extra = {"SYMMEM_GPU_ENGINE": engine}
        engine_preview.need_engine(opts, engine, env_extra)
        auto = engine_preview.ask(opts.pes, {})
        if not getattr(opts, "libs", None) and auto.get("engine") == engine:
            raise Unavailable(
                f"symmem runs on the {engine} engine here ({auto['why']}), and the report "
                f"takes its rows for this engine's (--libs {label} runs it too)"
            )

        def run(log):
            yield from symmem_records(opts, label, env_extra, ops, log)

        return measuring(run, ops)

    return runner


def memcpy_runner(opts):
    """cudaMemcpyAsync: put and get as the GPU's own device-to-device copy,
    between the GPUs of PE 0 and PE 1 (the launcher puts PE i on GPU i %
    count: one GPU, or PEs sharing one, make it a copy within a GPU)."""
    if missing("cupy"):
        raise Unavailable("cupy is not installed (pip install cupy-cuda13x)")
    ops = ",".join(op for op in opts.ops.split(",") if op in MEMCPY_OPS)
    if not ops:
        raise Unavailable(f"--ops has none of {', '.join(MEMCPY_OPS)}")
    gpus = gpu_count()
    if gpus < 1:
        raise Unavailable("no GPU found here (CuPy sees none)")
    pe0, pe1 = 0, (1 % opts.pes) % gpus

    def run(log):
        command = [
            sys.executable,
            "-m",
            "symmem.bench.memcpy_reference",
            *sweep_args(opts, ops),
            "--pe0-gpu",
            str(pe0),
            "--pe1-gpu",
            str(pe1),
        ]
        yield from stream_records(command, dict(os.environ), log)

    return measuring(run, ops)
