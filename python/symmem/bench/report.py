"""Tables, JSON and plots from the records of one run."""

import itertools
import json
import math
from collections import defaultdict

from symmem.bench import engine_report, gpu_sharing, plan

BANDWIDTH_OPS = (
    "put",
    "get",
    "reduce",
    "reducescatter",
    "broadcast",
    "fcollect",
    "alltoall",
    *plan.DEVICE_PUTS,
)
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


def baseline(op):
    """The library op's ratios compare with: symmem, or for a device
    operation its table's first library ("symmem device", "symmem triton",
    "symmem cute")."""
    for _, ops, libs, _, _ in DEVICE_TABLES:
        if op in ops:
            return libs[0]
    return "symmem"


def standing(ratio, noise):
    """Where symmem stands against a library whose time is ratio x symmem's:
    "ahead" or "behind" by more than noise (the larger of the two
    libraries' spreads between rounds), else "level". The one definition
    of the tables' "~" and of the summary."""
    if ratio > 1 + noise:
        return "ahead"
    if ratio < 1 / (1 + noise):
        return "behind"
    return "level"


def rows(records, n_pes):
    """One row per (op, size, lib): perftest's columns plus symmem's speed
    relative to that library (its time over the baseline's, symmem or
    symmem device: > 1 means symmem is faster), and where symmem stands
    (standing(): ahead, level or behind; level rows are within_noise)."""
    table, _, libs, spread = organise(records)
    out = []
    for op in plan.ALL_OPS:
        mine = baseline(op)
        for size in sorted({s for by_size in table[op].values() for s in by_size}):
            for lib in libs:
                us = table[op].get(lib, {}).get(size)
                if us is None:
                    continue
                # calls replayed from a graph compare with symmem's, replayed
                ref = f"{mine} (graph)" if lib.endswith(" (graph)") else mine
                base = table[op].get(ref, {}).get(size)
                algbw, busbw = bandwidths(op, size, us, n_pes)
                ratio = base and us / base if lib != ref else None
                noise = max(spread[op][lib].get(size, 0), spread[op].get(ref, {}).get(size, 0))
                where = standing(ratio, noise) if ratio else None
                out.append(
                    dict(
                        op=op,
                        bytes=size,
                        lib=lib,
                        us=us,
                        algbw=algbw,
                        busbw=busbw,
                        symmem_speedup=ratio,
                        spread=spread[op][lib].get(size, 0),
                        standing=where,
                        within_noise=where == "level",
                    )
                )
    return out


def _ratio(row):
    """A row's ratio to its baseline, as the tables print it ("" for none)."""
    if row is None or row["symmem_speedup"] is None:
        return ""
    return f"{row['symmem_speedup']:.2f}x" + (" ~" if row["within_noise"] else "")


def _cells(row):
    return [
        plan.format_size(row["bytes"]),
        row["lib"],
        f"{row['us']:.2f}",
        f"{row['algbw']:.2f}",
        f"{row['busbw']:.2f}",
        _ratio(row),
    ]


HEADER = ["size", "library", "latency us", "algbw GB/s", "busbw GB/s", "symmem faster by"]
NOISE_NOTE = (
    "~: symmem and the library differ by less than the spread between rounds of "
    "the same library (within noise: level)"
)

# The device tables, one line per operation and size in each: (name, its
# operations, its libraries (the first is the baseline), header, title).
DEVICE_TABLES = (
    (
        "device",
        plan.NUMBA_DEVICE_OPS,
        ("symmem device", "nvshmem device", "symmem host"),
        [
            "operation",
            "size",
            "symmem device us",
            "nvshmem device us",
            "symmem host us",
            "device GB/s",
            "nvshmem / device",
            "host / device",
        ],
        "device-initiated calls: symmem.device.numba kernels (symmem device), the same "
        "kernels calling NVSHMEM's device API (nvshmem device), symmem's host calls on "
        "a stream (symmem host); a ratio is the other's time over symmem device's",
    ),
    (
        "triton",
        tuple(plan.TRITON_OPS),
        ("symmem triton", "nvshmem triton"),
        [
            "operation",
            "size",
            "symmem triton us",
            "nvshmem triton us",
            "symmem triton GB/s",
            "nvshmem / symmem",
        ],
        "Triton kernels calling symmem.device.triton: on symmem's own engine (symmem triton) "
        "and on NVSHMEM's device bitcode (nvshmem triton), the same kernels; the ratio is "
        "NVSHMEM's time over symmem's",
    ),
    (
        "cute",
        tuple(plan.CUTE_OPS),
        ("symmem cute", "nvshmem cute"),
        [
            "operation",
            "size",
            "symmem cute us",
            "nvshmem cute us",
            "symmem cute GB/s",
            "nvshmem / symmem",
        ],
        "CuTe DSL kernels calling symmem.device.cute: on symmem's own engine (symmem cute) "
        "and on NVSHMEM's device bitcode (nvshmem cute), the same kernels; the ratio is "
        "NVSHMEM's time over symmem's, symmem's speed as a fraction of NVSHMEM's (the goal: "
        "0.95x or more for cute_put_signal and for cute_put from 1M)",
    ),
)


def _by_op(all_rows):
    by_op = defaultdict(list)
    for row in all_rows:
        by_op[row["op"]].append(row)
    return by_op


def device_cells(all_rows, ops, libs):
    """A device table's lines, from rows(): each library's time, the
    baseline's (libs[0]) bandwidth (copies) and each other library's ratio
    (above 1: the baseline is faster)."""
    lines = defaultdict(dict)
    for row in all_rows:
        if row["op"] in ops:
            lines[row["op"], row["bytes"]][row["lib"]] = row
    out = []
    for (op, size), by_lib in lines.items():
        mine = by_lib.get(libs[0])
        out.append(
            [
                op,
                plan.format_size(size) if size else "",
                *(f"{by_lib[lib]['us']:.3f}" if lib in by_lib else "-" for lib in libs),
                f"{mine['algbw']:.2f}" if mine and op in plan.DEVICE_PUTS else "",
                *(_ratio(by_lib.get(lib)) for lib in libs[1:]),
            ]
        )
    return out


def _device_tables(all_rows):
    """(name, header, title, lines) of each device table with lines."""
    for name, ops, libs, header, title in DEVICE_TABLES:
        lines = device_cells(all_rows, ops, libs)
        if lines:
            yield name, header, title, lines


def _text(header, widths, body, left):
    """Fixed-width lines; the columns in left are left-aligned."""

    def line(cells):
        return "".join(
            "  " + c.ljust(w - 2) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths))
        )

    return [line(header)] + [line(cells) for cells in body]


def _markdown(header, body):
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(cells) + " |" for cells in body
    ]


KERNELS_TITLE = (
    "which NCCL kernels ran, by the names CUPTI recorded (nccl_kernels.py): "
    "ncclSymDevKernel_* and ncclSymkDevKernel_* are its symmetric kernels, ncclDevKernel_* "
    "its regular ones; a library's (fell back) rows ran only regular ones, (unchecked) "
    "rows none the profiler saw"
)


def kernel_lines(records):
    """For each library and operation whose records name the NCCL kernels
    they ran (the symmetric libraries'): the kernels, by runs of
    consecutive sizes with the same ones (a size's first round)."""
    by_size = {}
    for r in records:
        if "kernels" in r:
            by_size.setdefault((r["lib"], r["op"]), {}).setdefault(r["bytes"], tuple(r["kernels"]))
    lines = []
    for (lib, op), kernels_at in by_size.items():
        for kernels, run in itertools.groupby(sorted(kernels_at), key=kernels_at.get):
            sizes = [plan.format_size(size) for size in run]
            span = sizes[0] + (f" to {sizes[-1]}" if len(sizes) > 1 else "")
            lines.append(f"{lib}, {op} {span}: {', '.join(kernels) or 'none seen'}")
    return lines


def _tabled(op):
    """Whether op has a table of its own (the init operations are in the
    init table, in ms)."""
    return op in plan.HOST_OPS and op not in plan.INIT_OPS


def text_tables(records, n_pes, sharing=None):
    """The tables printed at the end of a run: one per host operation, one
    for the device operations, the engines'; sharing (gpu_sharing.sharing()):
    how the PEs shared GPUs, which every heading and the summary say."""
    lines = []
    all_rows = rows(records, n_pes)
    pes = gpu_sharing.heading(n_pes, sharing)
    for op, op_rows in _by_op(all_rows).items():
        if _tabled(op):
            lines.append(f"\n== {op}: {plan.HOST_OPS[op]} ({pes})")
            lines += _text(HEADER, [8, 22, 12, 12, 12, 18], map(_cells, op_rows), {1})
    for name, header, title, body in _device_tables(all_rows):
        lines.append(f"\n== {name} ({pes}): {title}")
        widths = [24, 6] + [len(h) + 2 for h in header[2:]]
        lines += _text(header, widths, body, {0})
    for name, header, title, body in engine_report.tables(all_rows, records):
        lines.append(f"\n== {name} ({pes}): {title}")
        widths = [max(len(cells[i]) for cells in [header, *body]) + 2 for i in range(len(header))]
        lines += _text(header, widths, body, {0, 1} if name == "init" else {0})
    kernels = kernel_lines(records)
    if kernels:
        lines.append(f"\n== NCCL kernels ({pes}): {KERNELS_TITLE}")
        lines += [f"  {line}" for line in kernels]
    engines = engine_report.engine_lines(records)
    if engines:
        lines.append("\n== which engine: the gpu backend's engine each symmem library ran on")
        lines += [f"  {line}" for line in engines]
    lines.append("\n" + NOISE_NOTE)
    body, note = summary(all_rows)
    if body:  # last: what is on the screen when the run ends
        lines.append(f"\n== summary ({pes}): {SUMMARY_TITLE}")
        widths = [max(len(cells[i]) for cells in [SUMMARY_HEADER, *body]) + 2 for i in range(5)]
        lines += [line.rstrip() for line in _text(SUMMARY_HEADER, widths, body, set(range(5)))]
        lines += note
    if sharing:
        lines.append(gpu_sharing.note(sharing))
    return "\n".join(lines)


SUMMARY_HEADER = ["operation", "library", "symmem ahead", "level", "symmem behind"]
SUMMARY_TITLE = (
    "by operation and library, the sizes where symmem is ahead, level (within "
    "the spread between rounds) or behind, with the library's time over symmem's"
)


def summary(all_rows):
    """(lines, notes) of the summary, from rows(): for each operation and
    library compared with symmem (or symmem device), its sizes by standing,
    each run of consecutive sizes as "8 to 32K (1.10-2.31x)"."""
    by_pair = defaultdict(list)
    for row in all_rows:
        if row["standing"]:
            by_pair[row["op"], row["lib"]].append(row)
    lines = []
    for (op, lib), pair_rows in by_pair.items():
        cells = {where: [] for where in ("ahead", "level", "behind")}
        ordered = sorted(pair_rows, key=lambda row: row["bytes"])
        for where, run in itertools.groupby(ordered, key=lambda row: row["standing"]):
            cells[where].append(_span(list(run)))
        lines.append([op, lib, *(", ".join(spans) for spans in cells.values())])
    one_round = lines and not any(row["spread"] for row in all_rows)
    notes = (
        [
            "one round: no spread between rounds was measured, so only equal times are "
            "level (--rounds 2 or more measures it)"
        ]
        if one_round
        else []
    )
    return lines, notes


def _span(run):
    """Consecutive rows of one standing: their sizes and ratios, in words."""
    sizes = [plan.format_size(row["bytes"]) for row in run if row["bytes"]]
    ratios = [f"{row['symmem_speedup']:.2f}" for row in run]
    low, high = min(ratios, key=float), max(ratios, key=float)
    ratio = f"{low}x" if low == high else f"{low}-{high}x"
    if not sizes:  # barrier: one size, 0
        return ratio
    return f"{sizes[0]}{' to ' + sizes[-1] if len(sizes) > 1 else ''} ({ratio})"


def markdown(records, n_pes, ops_to_show=None, setup=None, sharing=None):
    """The same tables in Markdown, for docs/benchmarks.md: first how the
    PEs shared GPUs (sharing, where they did) and the summary, then how
    each library was set up ({library: line}) and the engine each symmem
    library ran on, then the tables."""
    _, init, _, _ = organise(records)
    all_rows = rows(records, n_pes)
    body, notes = summary(all_rows)
    parts = [f"**{gpu_sharing.heading(n_pes, sharing)}**: {gpu_sharing.note(sharing)}", ""]
    parts = (parts if sharing else []) + (
        [f"**summary**: {SUMMARY_TITLE}", ""]
        + _markdown(SUMMARY_HEADER, body)
        + [""]
        + notes
        + ([""] if notes else [])
        if body
        else []
    )
    if setup:
        parts += ["**setup**:", ""] + [f"- {lib}: {line}" for lib, line in setup.items()] + [""]
    engines = engine_report.engine_lines(records)
    if engines:
        parts += ["**engines** (get_version().engine):", ""] + [f"- {e}" for e in engines] + [""]
    parts += [NOISE_NOTE, "", "| library | start-up s |", "|---|---|"]
    parts += [f"| {lib} | {seconds:.2f} |" for lib, seconds in init.items()]
    for op, op_rows in _by_op(all_rows).items():
        if not _tabled(op) or (ops_to_show and op not in ops_to_show):
            continue
        parts += ["", f"**{op}**: {plan.HOST_OPS[op]}", ""] + _markdown(
            HEADER, map(_cells, op_rows)
        )
    for name, header, title, body in [
        *_device_tables(all_rows),
        *engine_report.tables(all_rows, records),
    ]:
        parts += ["", f"**{name}**: {title}", ""] + _markdown(header, body)
    kernels = kernel_lines(records)
    if kernels:
        parts += ["", f"**NCCL kernels**: {KERNELS_TITLE}", ""] + [f"- {line}" for line in kernels]
    return "\n".join(parts) + "\n"


def write_json(path, records, meta, n_pes):
    with open(path, "w") as f:
        json.dump(dict(meta=meta, records=records, rows=rows(records, n_pes)), f, indent=1)
