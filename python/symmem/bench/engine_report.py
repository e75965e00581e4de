"""The report's parts about the gpu backend's engines (docs/gpu.md, "GPU
engines"): which engine each symmem library ran on (its records say:
get_version().engine), the table that sets the symmem engine beside the
nvshmem engine and beside cudaMemcpyAsync, and the table of init +
finalize. report.py renders them with the other tables."""

from symmem.bench import plan
from symmem.bench.engine_libraries import MEMCPY

# The library whose rows stand for each engine: its own, and where that
# has none, plain "symmem" where that ran on it (auto's choice).
ENGINE_LIBRARIES = {"symmem": "symmem/symmem_engine", "nvshmem": "symmem/nvshmem_engine"}
TABLE_OPS = ("put", "put_lat", "get", "get_lat", "put_signal", "atomic", *plan.COLLECTIVES)

ENGINES_HEADER = [
    "operation",
    "size",
    "symmem engine us",
    "nvshmem engine us",
    f"{MEMCPY} us",
    "symmem engine GB/s",
    "nvshmem / symmem",
    "memcpy / symmem",
]
ENGINES_TITLE = (
    "the gpu backend's engines: {symmem} as the symmem engine, {nvshmem} as the nvshmem "
    f"engine, and the GPU's own {MEMCPY} of the put and get sizes; nvshmem / symmem is "
    "the nvshmem engine's time over the symmem engine's, memcpy / symmem the copy's time "
    "over the symmem engine's: its bandwidth as a fraction of the copy's (issue 47: 0.9x "
    "or more from 1M on one GPU)"
)
INIT_HEADER = [
    "library",
    "engine",
    "first ms (init + finalize)",
    "again ms (init + finalize)",
    "first / symmem engine's",
]
INIT_TITLE = (
    "symmem.init() + finalize(): the first of a fresh job of every PE, and a second in the "
    "same processes; the slowest PE, the median of {launches} launches, in ms; the last "
    "column, where the symmem engine ran, is the library's first time over the symmem "
    "engine's (issue 47: the nvshmem engine's 10x or more)"
)


def engines_ran(records):
    """{library: engine} of every library whose records name the engine it ran on."""
    return {r["lib"]: r["engine"] for r in records if r.get("engine")}


def standing_for(records):
    """{engine: [the libraries whose rows stand for it, the first first]}
    for the engines of this run: its own library, then plain symmem where
    that ran on it."""
    libs, ran = {r["lib"] for r in records}, engines_ran(records)
    out = {}
    for engine, own in ENGINE_LIBRARIES.items():
        found = [own] if own in libs else []
        found += ["symmem"] if ran.get("symmem") == engine else []
        if found:
            out[engine] = found
    return out


def engine_lines(records):
    """One line per symmem library of the run: the engine it ran on."""
    return [f"{lib}: the {engine} engine" for lib, engine in engines_ran(records).items()]


def _over(row, base):
    """row's time over base's, as the tables print it ("" where either is missing)."""
    if not row or not base:
        return ""
    return f"{row['us'] / base['us']:.2f}x"


def engines_table(all_rows, records):
    """(header, title, lines) of the engines table, or None where the run
    has fewer than two of its columns."""
    stand = standing_for(records)
    columns = [stand.get("symmem", []), stand.get("nvshmem", []), [MEMCPY]]
    at = {}
    for row in all_rows:
        if row["op"] in TABLE_OPS:
            at.setdefault((row["op"], row["bytes"]), {})[row["lib"]] = row

    def cell(by_lib, libs):  # the first of libs with a row here
        return next((by_lib[lib] for lib in libs if lib in by_lib), None)

    filled = {i for by_lib in at.values() for i, libs in enumerate(columns) if cell(by_lib, libs)}
    if len(filled) < 2:
        return None
    lines = []
    for op in TABLE_OPS:
        for size in sorted(size for (o, size) in at if o == op):
            mine, theirs, copy = (cell(at[op, size], libs) for libs in columns)
            if not (mine or theirs):
                continue
            lines.append(
                [
                    op,
                    plan.format_size(size) if size else "",
                    *(f"{row['us']:.2f}" if row else "-" for row in (mine, theirs, copy)),
                    f"{mine['algbw']:.2f}" if mine and size else "",
                    _over(theirs, mine),
                    _over(copy, mine),
                ]
            )
    title = ENGINES_TITLE.format(symmem=_words(columns[0]), nvshmem=_words(columns[1]))
    return ENGINES_HEADER, title, lines


def _words(libs):
    """Which libraries' rows stand for an engine, in words."""
    if not libs:
        return "(none)"
    return libs[0] + "".join(f" (else {lib}'s, which ran on it)" for lib in libs[1:])


def init_table(records):
    """(header, title, lines) of the init table, or None without init records."""
    found = {}
    for r in records:
        if r["op"] in plan.INIT_OPS:
            best = found.setdefault(r["lib"], {}).get(r["op"])
            if best is None or r["us"] < best["us"]:  # the fastest round's
                found[r["lib"]][r["op"]] = r
    if not found:
        return None
    stand = standing_for(records).get("symmem", [])
    mine = next(
        (found[lib]["init_first"] for lib in stand if "init_first" in found.get(lib, {})), None
    )
    lines = []
    for lib, by_op in found.items():
        first, again = by_op.get("init_first"), by_op.get("init_again")
        lines.append(
            [
                lib,
                (first or again).get("engine", ""),
                _ms(first),
                _ms(again),
                _over(first, mine) if first is not mine else "",
            ]
        )
    return INIT_HEADER, INIT_TITLE.format(launches=plan.INIT_LAUNCHES), lines


def _ms(record):
    """A record's init + finalize in ms, with its two parts."""
    if not record:
        return "-"
    ms = record["us"] / 1e3
    return f"{ms:.1f} ({record['init_us'] / 1e3:.1f} + {record['finalize_us'] / 1e3:.1f})"


def tables(all_rows, records):
    """(name, header, title, lines) of each engine table this run has."""
    for name, table in (
        ("engines", engines_table(all_rows, records)),
        ("init", init_table(records)),
    ):
        if table:
            yield (name, *table)
