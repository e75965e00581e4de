"""python -m symmem.bench: symmem beside the libraries a user would
otherwise pick, in one run on the same machine.

    python -m symmem.bench                          # gpu if there are GPUs, else cpu
    python -m symmem.bench --backend cpu -n 4 --max-size 64M
    python -m symmem.bench --backend cpu -n 2 -v    # every size's time as it is measured
    python -m symmem.bench --ops put,reduce --libs symmem,nccl --out results/
    python -m symmem.bench --ops device -n 2        # only the device-initiated calls
    python -m symmem.bench --load a/results.json b/results.json --out both/

On GPUs: symmem (on a stream, and blocking), the C program calling NVSHMEM
directly, NVSHMEM4Py, NCCL (torch.distributed), NCCL's symmetric kernels
(nccl4py) and PyTorch's symmetric memory on its CUDA and NCCL backends; and
the device-initiated calls: symmem.device.numba kernels against the same
kernels written with NVSHMEM's device API (a CUDA C program) and symmem's
host calls, and Triton and CuTe DSL kernels on symmem.device.triton's and
symmem.device.cute's two engines. On the cpu backend: symmem, its device
calls from @numba.njit code, NumPy in one process, and MPI (mpi4py). Shows
its progress while it measures, then prints perftest-style tables with
symmem's ratio to each library and a summary of where symmem is ahead,
level or behind; writes results.json, report.md and PNG plots to --out.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time

from symmem.bench import gpu_sharing, libraries, plan, plots, progress, report, setups
from symmem.bench.help_text import EPILOG


def parse_args(argv):
    ops, device_ops = (
        "\n".join(f"  {op:22}{what}" for op, what in table.items())
        for table in (plan.HOST_OPS, plan.DEVICE_OPS)
    )
    parser = argparse.ArgumentParser(
        prog="python -m symmem.bench",
        description=__doc__.split("\n\n")[0],
        epilog=EPILOG.format(ops=ops, device_ops=device_ops),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--backend",
        choices=("auto", "cpu", "gpu", "mpi"),
        default="auto",
        help="default auto: gpu where there is a GPU for every PE, else cpu "
        "(gpu with more PEs than GPUs runs them sharing the GPUs: no speed claim); "
        "mpi: the mpi backend through RMA and on the node path, beside "
        "the cpu backend and mpi4py",
    )
    parser.add_argument(
        "-n",
        "--npes",
        dest="pes",
        type=int,
        default=2,
        metavar="N",
        help="PEs, one process each (on GPUs one per GPU); default 2",
    )
    parser.add_argument(
        "--pes", dest="pes", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )  # the earlier spelling of --npes
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print each library's rounds and every size's time as it is measured",
    )
    shown.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress display: only the tables, the summary and errors",
    )
    parser.add_argument(
        "--ops", default=None, help="comma-separated operations or groups (listed below)"
    )
    parser.add_argument("--libs", default=None, help="comma-separated libraries (listed below)")
    parser.add_argument("--min-size", default="8", help="smallest message in bytes (default 8)")
    parser.add_argument(
        "--max-size",
        default=None,
        help="largest message (default 1G on GPUs, 64M on the cpu backend)",
    )
    parser.add_argument(
        "--out",
        default="symmem-bench",
        help="folder for results.json, report.md, run.log and the plots (default symmem-bench)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="times every library runs, in alternating order; each size "
        "keeps its fastest round (default 2 on GPUs, 1 on the cpu)",
    )
    parser.add_argument(
        "--iters",
        type=int,
        default=None,
        metavar="N",
        help="calls in each timed run, at every size (default 200, 50 from 1M, 10 from "
        "64M); few keep a run whose PEs time-share a GPU short",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=900,
        help="seconds one library's run under symmem's launcher may take (default 900)",
    )
    parser.add_argument(
        "--graph",
        action="store_true",
        help="also time the collectives replayed from a CUDA graph of up to "
        "100 calls (gpu: symmem, nccl, nccl symmetric, torch symm-mem, torch symm-mem "
        "nccl), as LIB (graph)",
    )
    parser.add_argument(
        "--no-plots", action="store_true", help="write no PNG plots (they need matplotlib)"
    )
    parser.add_argument(
        "--load",
        nargs="+",
        metavar="RESULTS_JSON",
        help="run nothing: report on the records of earlier runs' results.json files together",
    )
    opts = parser.parse_args(argv)
    if opts.pes < 1:
        parser.error(f"-n/--npes: need at least 1 PE, got {opts.pes}")
    if opts.iters is not None and opts.iters < 1:
        parser.error(f"--iters: need at least 1, got {opts.iters}")
    choose_backend(opts)
    opts.ops_given = opts.ops  # None: the default for the backend
    opts.ops, opts.device_ops = split_ops(parser, opts)
    if opts.rounds is None:
        opts.rounds = 2 if opts.backend == "gpu" else 1
    if opts.rounds < 1:
        parser.error(f"--rounds: need at least 1, got {opts.rounds}")
    opts.min_bytes = plan.parse_size(opts.min_size)
    opts.max_bytes = plan.parse_size(opts.max_size or ("1G" if opts.backend == "gpu" else "64M"))
    if not 0 < opts.min_bytes <= opts.max_bytes:
        parser.error(
            f"sizes: need 0 < --min-size ({opts.min_bytes}) <= --max-size ({opts.max_bytes})"
        )
    return opts


def choose_backend(opts):
    """opts.backend for auto, and how the PEs would share GPUs (opts.sharing,
    gpu_sharing.sharing()) and why auto chose (opts.backend_why). auto takes
    gpu only where every PE has a GPU: PEs time-sharing one measure the
    GPU's switching between them, no speed, and the references that need
    a GPU a PE (NVSHMEM's, NCCL's) could not run beside them; --backend gpu
    runs them so."""
    gpus = libraries.gpu_count() if opts.backend in ("auto", "gpu") else 0
    opts.backend_why = ""
    if opts.backend == "auto":
        opts.backend = "gpu" if gpus >= opts.pes else "cpu"
        if 0 < gpus < opts.pes:
            opts.backend_why = (
                f"auto: {opts.pes} PEs and {gpus} GPU(s) here, so the cpu backend; --backend "
                f"gpu runs the PEs sharing the GPU(s) (a check that the paths run, not a "
                "speed claim)"
            )
    opts.sharing = gpu_sharing.sharing(opts.pes, gpus) if opts.backend == "gpu" else None


def split_ops(parser, opts):
    """(host operations, device operations), each comma-separated, from
    --ops (names and groups) or the default for the backend and PE count
    (no device operation where PEs time-share a GPU: each of their kernels
    waits on peers thousands of times, a turn of the GPU each)."""
    if opts.ops is None:
        sharing = getattr(opts, "sharing", None)
        both = opts.backend == "gpu" and opts.pes >= 2 and not (sharing and not sharing["mps"])
        names = (
            list(plan.OPS)
            + (list(plan.DEVICE_OPS) if both else [])
            + (list(plan.ATOMIC_OPS) if opts.backend in ("mpi", "gpu") else [])
            + (list(plan.INIT_OPS) if opts.backend == "gpu" else [])
        )
    else:
        words = opts.ops.split(",")
        unknown = [w for w in words if w not in plan.ALL_OPS and w not in plan.OP_GROUPS]
        if unknown:
            parser.error(
                f"--ops: unknown {', '.join(unknown)}; choose from "
                f"{', '.join([*plan.OP_GROUPS, *plan.ALL_OPS])}"
            )
        names = [op for w in words for op in plan.OP_GROUPS.get(w, (w,))]
    device = [op for op in dict.fromkeys(names) if op in plan.DEVICE_OPS]
    if device and opts.backend != "gpu":
        parser.error(
            f"--ops: {', '.join(device)}: device operations run on the gpu backend "
            "(on the cpu backend the device calls are the 'symmem njit' library, "
            "which runs the host operations)"
        )
    if device and opts.pes < 2:
        parser.error(
            f"--ops: {', '.join(device)}: device operations need 2 PEs or more "
            f"(PE 0 puts to PE 1); got -n {opts.pes}"
        )
    host = [op for op in dict.fromkeys(names) if op in plan.HOST_OPS]
    return ",".join(host), ",".join(device)


def choose_libraries(opts):
    """[(name, runner)] of the libraries that can run, and {name: why not}.
    A library with no operation of its kind (host or device) in --ops is
    left out, saying so only if --libs named it."""
    table = {"gpu": libraries.GPU_LIBRARIES, "mpi": libraries.MPI_LIBRARIES}.get(
        opts.backend, libraries.CPU_LIBRARIES
    )
    wanted = opts.libs.split(",") if opts.libs else list(table)
    chosen, skipped = [], {}
    for name in wanted:
        name = libraries.LIBRARY_ALIASES.get(name, name)
        if name not in table:
            skipped[name] = f"not a library of the {opts.backend} backend ({', '.join(table)})"
            continue
        device = name in libraries.DEVICE_LIBRARIES
        if not (libraries.device_ops(name, opts) if device else opts.ops):
            if opts.libs:
                skipped[name] = f"--ops has no {'device' if device else 'host'} operation"
            continue
        try:
            chosen.append((name, table[name](opts)))
        except libraries.Unavailable as why:
            skipped[name] = str(why)
    return chosen, skipped


def versions():
    found = {"python": platform.python_version()}
    for module in ("symmem", "numpy", "mpi4py", "cupy", "torch", "nvshmem", "nvidia.nvshmem"):
        try:
            mod = __import__(module, fromlist=["_"])
            found[module] = getattr(mod, "__version__", "installed")
        except Exception:
            pass
    try:
        import nvshmem.core

        found["libnvshmem"] = nvshmem.core.get_version().libnvshmem_version
    except Exception:
        pass
    try:
        import nccl.core

        found["nccl4py"] = nccl.core.__version__
        found["libnccl (nccl4py)"] = str(nccl.core.get_version().libnccl)
    except Exception:
        pass
    try:
        import torch

        found["libnccl (torch)"] = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:
        pass
    return found


def machine():
    text = f"{platform.node()}, {os.cpu_count()} CPUs"
    if libraries.gpu_count():
        try:
            import cupy

            name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
            text += f", {libraries.gpu_count()} x {name}"
        except Exception:
            pass
    return text


def load(paths):
    """(records, meta) of earlier runs, as one run: the first one's meta,
    with every run's command."""
    records, metas = [], []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        records += data["records"]
        metas.append(data["meta"])
    meta = dict(metas[0], command=" ; ".join(m["command"] for m in metas))
    for m in metas[1:]:
        meta["skipped"].update(m.get("skipped", {}))
        meta["setup"] = {**meta.get("setup", {}), **m.get("setup", {})}
    return records, meta


def main(argv=None):
    opts = parse_args(argv if argv is not None else sys.argv[1:])
    os.makedirs(opts.out, exist_ok=True)
    if opts.load:
        records, meta = load(opts.load)
        opts.pes, opts.rounds, opts.backend = meta["n_pes"], meta.get("rounds", 1), meta["backend"]
        opts.sharing = meta.get("sharing")
        return finish(opts, records, meta)
    chosen, skipped = choose_libraries(opts)
    meta = dict(
        command="python -m symmem.bench " + " ".join(argv or sys.argv[1:]),
        date=datetime.datetime.now().isoformat(timespec="seconds"),
        rounds=opts.rounds,
        machine=machine(),
        backend=opts.backend,
        n_pes=opts.pes,
        versions=versions(),
        skipped=skipped,
        load_average=os.getloadavg()[0],
        setup={name: setups.setup(name, opts.backend) for name, _ in chosen},
        sharing=opts.sharing,
        iters=opts.iters,
    )
    # Other work on the machine slows every library; the load says how busy it was.
    print(
        f"symmem.bench: {opts.backend} backend, {opts.pes} PEs, {meta['machine']}, "
        f"load average {meta['load_average']:.2f}"
    )
    if opts.backend_why:
        print(f"  {opts.backend_why}")
    if opts.backend in ("cpu", "mpi") and opts.pes > os.cpu_count():
        print(
            f"  note: {opts.pes} PEs share {os.cpu_count()} CPUs: barriers and small "
            "messages measure time slicing as much as the operation"
        )
    if opts.sharing:
        print(f"  note: {gpu_sharing.note(opts.sharing)}")
        if not opts.sharing["mps"] and opts.ops_given is None:
            print("  note: no device operations by default here (--ops device runs them)")
    print(f"  libraries: {', '.join(name for name, _ in chosen) or 'none'}")
    for name, why in skipped.items():
        print(f"  left out {name}: {why}")
    sys.stdout.flush()
    records = measure(opts, chosen, meta)
    return finish(opts, records, meta)


def measure(opts, chosen, meta):
    """Every library's records, round after round, with the progress display."""
    # Alternate the order: a library that always ran first or last would
    # meet the machine in the same state every time.
    runs = [
        (name, round_, run)
        for round_ in range(opts.rounds)
        for name, run in (chosen if round_ % 2 == 0 else chosen[::-1])
    ]
    shown = progress.Progress(
        [
            (name, round_, progress.planned(getattr(run, "ops", opts.ops), opts))
            for name, round_, run in runs
        ],
        progress.mode_for(sys.stderr, opts.quiet),
    )
    # each size's time only with -v; errors always
    say = shown.say if opts.verbose else (lambda line: None)
    records = []
    with open(os.path.join(opts.out, "run.log"), "w") as log:
        try:
            for index, (name, round_, run) in enumerate(runs):
                if name in meta["skipped"]:  # failed in an earlier round
                    shown.end(index)
                    continue
                started = time.perf_counter()
                shown.begin(index)
                say(f"[{name}] round {round_ + 1} of {opts.rounds} ...")
                try:
                    for record in run(log):
                        records.append(dict(record, round=round_ + 1))
                        shown.measured(record)
                        say(f"  [{record['lib']}] {describe(record)}")
                except RuntimeError as error:
                    meta["skipped"][name] = f"failed: {str(error)[-400:]}"
                    shown.say(f"[{name}] FAILED: {error}")
                say(f"[{name}] done in {time.perf_counter() - started:.0f} s")
                shown.end(index)
        finally:  # Ctrl-C too: the terminal line ends before the traceback
            shown.close()
    return records


def finish(opts, records, meta):
    """Prints the tables and writes results.json, report.md and the plots."""
    sharing = getattr(opts, "sharing", None)
    print(report.text_tables(records, opts.pes, sharing))
    report.write_json(os.path.join(opts.out, "results.json"), records, meta, opts.pes)
    with open(os.path.join(opts.out, "report.md"), "w") as f:
        load = f", load average {meta['load_average']:.2f}" if "load_average" in meta else ""
        f.write(
            f"`{meta['command']}` on {meta['machine']}{load}, {meta['date']}, "
            f"{opts.backend} backend, {gpu_sharing.heading(opts.pes, sharing)}, "
            f"{opts.rounds} round(s)\n\n"
        )
        f.write(report.markdown(records, opts.pes, setup=meta.get("setup"), sharing=sharing))
    written = [] if opts.no_plots else plot_or_explain(opts, records)
    print(
        f"\nwrote {opts.out}/results.json, {opts.out}/report.md"
        + "".join(f", {path}" for path in written)
    )
    return 0 if records else 1


def describe(record):
    if record["op"] == "init":
        return f"init {record['seconds']:.2f} s"
    if record["op"] in plan.INIT_OPS:
        return f"{record['op']}: {record['us'] / 1e3:.1f} ms (init + finalize)"
    return f"{record['op']} {plan.format_size(record['bytes'])}: {record['us']:.2f} us"


def plot_or_explain(opts, records):
    try:
        pes = gpu_sharing.heading(opts.pes, getattr(opts, "sharing", None))
        return plots.plots(
            opts.out, records, opts.pes, f"symmem.bench, {opts.backend} backend, {pes}"
        )
    except ImportError:
        print("no plots: matplotlib is not installed (pip install matplotlib)")
        return []


if __name__ == "__main__":
    sys.exit(main())
