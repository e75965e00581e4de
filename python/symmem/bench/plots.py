"""The report's plots, from the records of one run (matplotlib, pip install
'symmem[bench]'): bandwidth.png, latency.png and summary.png."""

import math

from symmem.bench.report import BANDWIDTH_OPS, LATENCY_OPS, bandwidths, organise


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
    for name, ops, metric in (
        ("bandwidth", BANDWIDTH_OPS, "busbw GB/s"),
        ("latency", LATENCY_OPS, "latency us"),
    ):
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
                ys = [
                    us if metric == "latency us" else bandwidths(op, s, us, n_pes)[1]
                    for s, us in points
                ]
                ax.plot(
                    xs,
                    ys,
                    marker=".",
                    label=lib,
                    color=colours[lib],
                    linestyle="--" if "blocking" in lib else "-",
                )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(op)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(metric)
            ax.grid(True, which="both", alpha=0.3)
        for ax in list(axes.flat)[len(ops) :]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=8)
        fig.suptitle(f"{title}: {metric} vs size")
        fig.tight_layout()
        path = f"{out_dir}/{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    singles = [
        ("host cost of one 8-byte put (us)", table.get("call_cost", {}), 8),
        ("barrier (us)", table.get("barrier", {}), 0),
    ]
    singles = [
        (label, {lib: v[size] for lib, v in data.items() if size in v}, size)
        for label, data, size in singles
    ]
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
