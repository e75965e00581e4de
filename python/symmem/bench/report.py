"""Tables, JSON and plots from the records of one run."""
import json
import math
from collections import defaultdict

from symmem.bench import plan

BANDWIDTH_OPS = ("put", "get", "reduce", "reducescatter", "broadcast", "fcollect", "alltoall")
LATENCY_OPS = ("put_lat", "get_lat", "put_signal", "reduce", "broadcast", "alltoall")


def organise(records):
    """({op: {lib: {bytes: us}}}, {lib: init seconds}, libraries in run order,
    {op: {lib: {bytes: spread}}}), each the fastest of its rounds. spread is
    how much slower the slowest round was than the fastest (0.02: 2%)."""
    table, init, libs = defaultdict(lambda: defaultdict(dict)), {}, []
    times = defaultdict(list)
    for r in records:
        if r["lib"] not in libs:
            libs.append(r["lib"])
        if r["op"] == "init":
            init[r["lib"]] = min(r["seconds"], init.get(r["lib"], math.inf))
        else:
            times[r["op"], r["lib"], r["bytes"]].append(r["us"])
    spread = defaultdict(lambda: defaultdict(dict))
    for (op, lib, size), values in times.items():
        table[op][lib][size] = min(values)
        spread[op][lib][size] = max(values) / min(values) - 1
    return table, init, libs, spread


def bandwidths(op, nbytes, us, n_pes):
    """(algbw, busbw) in GB/s."""
    if nbytes == 0 or us <= 0:
        return 0.0, 0.0
    algbw = nbytes / (us * 1e-6) / 1e9
    return algbw, algbw * plan.bus_factor(op, n_pes)


def rows(records, n_pes):
    """One row per (op, size, lib): perftest's columns plus symmem's speed
    relative to that library (its time over symmem's: > 1 means symmem is
    faster). Where symmem is behind by less than either library's spread
    between rounds, the row is marked within_noise."""
    table, _, libs, spread = organise(records)
    out = []
    for op in plan.OPS:
        for size in sorted({s for by_size in table[op].values() for s in by_size}):
            base = table[op].get("symmem", {}).get(size)
            for lib in libs:
                us = table[op].get(lib, {}).get(size)
                if us is None:
                    continue
                algbw, busbw = bandwidths(op, size, us, n_pes)
                ratio = base and us / base if lib != "symmem" else None
                noise = max(spread[op][lib].get(size, 0),
                            spread[op].get("symmem", {}).get(size, 0))
                within_noise = bool(ratio and ratio < 1 and 1 / ratio - 1 <= noise)
                out.append(dict(op=op, bytes=size, lib=lib, us=us, algbw=algbw, busbw=busbw,
                                symmem_speedup=ratio, spread=spread[op][lib].get(size, 0),
                                within_noise=within_noise))
    return out


def _cells(row):
    ratio = "" if row["symmem_speedup"] is None else f"{row['symmem_speedup']:.2f}x"
    if row["within_noise"]:
        ratio += " ~"
    return [plan.format_size(row["bytes"]), row["lib"], f"{row['us']:.2f}",
            f"{row['algbw']:.2f}", f"{row['busbw']:.2f}", ratio]


HEADER = ["size", "library", "latency us", "algbw GB/s", "busbw GB/s", "symmem faster by"]
NOISE_NOTE = ("~: symmem is behind by less than the spread between rounds of the same "
              "library (within noise)")


def text_tables(records, n_pes):
    """The tables printed at the end of a run, one per operation."""
    lines = []
    by_op = defaultdict(list)
    for row in rows(records, n_pes):
        by_op[row["op"]].append(row)
    widths = [8, 22, 12, 12, 12, 18]
    for op, op_rows in by_op.items():
        lines.append(f"\n== {op}: {plan.OPS[op]} ({n_pes} PEs)")
        lines.append("".join(h.rjust(w) if i != 1 else "  " + h.ljust(w - 2)
                             for i, (h, w) in enumerate(zip(HEADER, widths))))
        for row in op_rows:
            cells = _cells(row)
            lines.append("".join(c.rjust(w) if i != 1 else "  " + c.ljust(w - 2)
                                 for i, (c, w) in enumerate(zip(cells, widths))))
    lines.append("\n" + NOISE_NOTE)
    return "\n".join(lines)


def markdown(records, n_pes, ops_to_show=None):
    """The same tables in Markdown, for docs/benchmarks.md."""
    _, init, _, _ = organise(records)
    parts = [NOISE_NOTE, "", "| library | init s |", "|---|---|"]
    parts += [f"| {lib} | {seconds:.2f} |" for lib, seconds in init.items()]
    by_op = defaultdict(list)
    for row in rows(records, n_pes):
        by_op[row["op"]].append(row)
    for op, op_rows in by_op.items():
        if ops_to_show and op not in ops_to_show:
            continue
        parts += ["", f"**{op}**: {plan.OPS[op]}", "", "| " + " | ".join(HEADER) + " |",
                  "|" + "---|" * len(HEADER)]
        parts += ["| " + " | ".join(_cells(row)) + " |" for row in op_rows]
    return "\n".join(parts) + "\n"


def write_json(path, records, meta, n_pes):
    with open(path, "w") as f:
        json.dump(dict(meta=meta, records=records, rows=rows(records, n_pes)), f, indent=1)


def plots(out_dir, records, n_pes, title):
    """bandwidth.png (bus bandwidth vs size) and latency.png (latency vs size),
    one panel per operation and one line per library; summary.png for the
    single numbers (host cost per call, barrier, init). The paths written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    table, init, libs, _ = organise(records)
    colours = {lib: f"C{i}" for i, lib in enumerate(libs)}
    written = []
    for name, ops, metric in (("bandwidth", BANDWIDTH_OPS, "busbw GB/s"),
                              ("latency", LATENCY_OPS, "latency us")):
        ops = [op for op in ops if table.get(op)]
        if not ops:
            continue
        cols = min(3, len(ops))
        rows_ = math.ceil(len(ops) / cols)
        fig, axes = plt.subplots(rows_, cols, figsize=(5 * cols, 3.6 * rows_), squeeze=False)
        for ax, op in zip(axes.flat, ops):
            for lib in libs:
                points = sorted(table[op].get(lib, {}).items())
                if metric == "latency us":
                    points = [(s, us) for s, us in points if s <= 1 << 20]
                if not points:
                    continue
                xs = [s for s, _ in points]
                ys = [us if metric == "latency us" else bandwidths(op, s, us, n_pes)[1]
                      for s, us in points]
                ax.plot(xs, ys, marker=".", label=lib, color=colours[lib],
                        linestyle="--" if "blocking" in lib else "-")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(op)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(metric)
            ax.grid(True, which="both", alpha=0.3)
        for ax in list(axes.flat)[len(ops):]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=8)
        fig.suptitle(f"{title}: {metric} vs size")
        fig.tight_layout()
        path = f"{out_dir}/{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    singles = [("host cost of one 8-byte put (us)", table.get("call_cost", {}), 8),
               ("barrier (us)", table.get("barrier", {}), 0)]
    singles = [(label, {lib: v[size] for lib, v in data.items() if size in v}, size)
               for label, data, size in singles]
    singles.append(("init (s)", init, None))
    fig, axes = plt.subplots(1, len(singles), figsize=(5 * len(singles), 3.6))
    for ax, (label, values, _) in zip(axes, singles):
        names = list(values)
        ax.barh(names, [values[k] for k in names], color=[colours[k] for k in names])
        ax.set_title(label)
        for i, k in enumerate(names):
            ax.text(values[k], i, f" {values[k]:.2f}", va="center", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    path = f"{out_dir}/summary.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    return written
