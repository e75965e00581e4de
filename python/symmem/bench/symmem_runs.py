"""How a library of symmem's runs its operations: the init operations
(plan.INIT_OPS) through init_worker.py, plan.INIT_LAUNCHES launches of a
fresh job each, then the rest through shmem_worker.py in one launch. Every
symmem library (libraries.py, engine_libraries.py) runs through here."""

import os

from symmem.bench import plan
from symmem.bench.launching import heap_env, launch, stream_records, sweep_args


def symmem_records(opts, label, env_extra, ops, log, backend="gpu", blocking=False):
    """The records of library label: symmem on backend with env_extra set,
    measuring ops (comma-separated); with blocking, shmem_worker also times
    the blocking calls (stream=None)."""
    wanted = [op for op in ops.split(",") if op]
    starts = [op for op in wanted if op in plan.INIT_OPS]
    rest = ",".join(op for op in wanted if op not in plan.INIT_OPS)
    if starts:
        # the heap at the defaults a user gets (unless this environment sets it)
        env = dict(os.environ, SYMMEM_BACKEND=backend, **env_extra)
        yield from init_records(opts, label, env, log, starts)
    if rest:
        args = ["-m", "symmem.bench.shmem_worker", "--lib", "symmem", "--label", label]
        args += sweep_args(opts, rest) + (["--blocking"] if blocking else [])
        env = dict(heap_env(opts.max_bytes, backend), **env_extra)
        yield from stream_records(launch(opts.pes, args, env, opts.timeout), env, log)


def init_records(opts, label, env, log, ops):
    """One record per init operation in ops for library label: of
    plan.INIT_LAUNCHES launches of init_worker.py under env (each a fresh
    job of opts.pes PEs), the median of each launch's slowest PE."""
    launches = []
    for _ in range(plan.INIT_LAUNCHES):
        command = launch(opts.pes, ["-m", "symmem.bench.init_worker"], env, opts.timeout)
        launches.append(list(stream_records(command, env, log)))
    for op in ops:
        yield median_launch(label, op, [slowest_pe(found, op, opts.pes) for found in launches])


def slowest_pe(found, op, n_pes):
    """Of one launch's records (every PE's), the PE whose init + finalize of
    op took longest; a PE that printed none is an error."""
    mine = {r["pe"]: r for r in found if r.get("op") == op and "pe" in r}
    missing = sorted(set(range(n_pes)) - set(mine))
    if missing:
        raise RuntimeError(f"init_worker: PE {missing[0]} printed no {op} time")
    return max(mine.values(), key=lambda r: r["init_s"] + r["finalize_s"])


def median_launch(label, op, slowest):
    """The record of op for label: the launch in the middle by init +
    finalize (the lower middle of an even count), with every launch's time."""
    totals = [r["init_s"] + r["finalize_s"] for r in slowest]
    middle = sorted(slowest, key=lambda r: r["init_s"] + r["finalize_s"])[(len(slowest) - 1) // 2]
    return dict(
        lib=label,
        op=op,
        bytes=0,
        us=(middle["init_s"] + middle["finalize_s"]) * 1e6,
        init_us=middle["init_s"] * 1e6,
        finalize_us=middle["finalize_s"] * 1e6,
        engine=middle.get("engine", ""),
        launches_us=[t * 1e6 for t in totals],
    )
