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

from symmem.bench import libraries, plan, progress, report, setups

EPILOG = """\
operations (--ops; default every host operation, and on the gpu backend with
2 PEs or more every device operation too; "host", "device", "triton" and
"cute" name groups):
{ops}
device operations (gpu backend, 2 PEs or more; PE 0 works, PE 1 is the target):
{device_ops}

libraries (--libs; default every one of the backend that can run here):
  gpu backend:
    symmem          on a CUDA stream, and with stream=None as "symmem (blocking)"
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
  (nccl, nccl symmetric, torch symm-mem, torch symm-mem nccl) need a GPU per
  PE.

sizes: K, M and G suffixes are powers of 2. A sweep runs from --min-size to
--max-size in x4 steps; collective sizes are rounded down to whole float32
blocks of 1/n; put_lat, get_lat and put_signal stop at 4M; device_put and
device_put_grid keep within 1K-64M.

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


def parse_args(argv):
    ops, device_ops = (
        "\n".join(f"  {op:22}{what}" for op, what in table.items())
        for table in (plan.OPS, plan.DEVICE_OPS)
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
        help="default auto: gpu where there is a GPU for every PE, else cpu; "
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
    if opts.backend == "auto":
        opts.backend = "gpu" if libraries.gpu_count() >= opts.pes else "cpu"
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


def split_ops(parser, opts):
    """(host operations, device operations), each comma-separated, from
    --ops (names and groups) or the default for the backend and PE count."""
    if opts.ops is None:
        both = opts.backend == "gpu" and opts.pes >= 2
        names = (
            list(plan.OPS)
            + (list(plan.DEVICE_OPS) if both else [])
            + (list(plan.ATOMIC_OPS) if opts.backend == "mpi" else [])
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
    )
    # Other work on the machine slows every library; the load says how busy it was.
    print(
        f"symmem.bench: {opts.backend} backend, {opts.pes} PEs, {meta['machine']}, "
        f"load average {meta['load_average']:.2f}"
    )
    if opts.backend in ("cpu", "mpi") and opts.pes > os.cpu_count():
        print(
            f"  note: {opts.pes} PEs share {os.cpu_count()} CPUs: barriers and small "
            "messages measure time slicing as much as the operation"
        )
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
    print(report.text_tables(records, opts.pes))
    report.write_json(os.path.join(opts.out, "results.json"), records, meta, opts.pes)
    with open(os.path.join(opts.out, "report.md"), "w") as f:
        load = f", load average {meta['load_average']:.2f}" if "load_average" in meta else ""
        f.write(
            f"`{meta['command']}` on {meta['machine']}{load}, {meta['date']}, "
            f"{opts.backend} backend, {opts.pes} PEs, {opts.rounds} round(s)\n\n"
        )
        f.write(report.markdown(records, opts.pes, setup=meta.get("setup")))
    written = [] if opts.no_plots else plot_or_explain(opts, records)
    print(
        f"\nwrote {opts.out}/results.json, {opts.out}/report.md"
        + "".join(f", {path}" for path in written)
    )
    return 0 if records else 1


def describe(record):
    if record["op"] == "init":
        return f"init {record['seconds']:.2f} s"
    return f"{record['op']} {plan.format_size(record['bytes'])}: {record['us']:.2f} us"


def plot_or_explain(opts, records):
    try:
        return report.plots(
            opts.out, records, opts.pes, f"symmem.bench, {opts.backend} backend, {opts.pes} PEs"
        )
    except ImportError:
        print("no plots: matplotlib is not installed (pip install matplotlib)")
        return []


if __name__ == "__main__":
    sys.exit(main())
