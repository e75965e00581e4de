"""python -m symmem.bench against mpi4py on the cpu backend: put through an MPI
window, Allreduce and Barrier with their ratios to symmem's, at 3 PEs too;
what is printed with and without -v; the library's earlier name."""

import json
import subprocess
import sys

import pytest

from bench_options import HAVE_MPI, _parse
from symmem.bench import plan


@pytest.mark.skipif(not HAVE_MPI, reason="mpi4py is not installed")
def test_three_pes_against_mpi(tmp_path):
    """Not only powers of two: collective sizes are whole float32 blocks of 3;
    put into the window of rank 1 of 3."""
    out = tmp_path / "bench"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "symmem.bench",
            "--backend",
            "cpu",
            "-n",
            "3",
            "--ops",
            "put,put_signal,reducescatter,alltoall,barrier",
            "--libs",
            "symmem,mpi4py",
            "--max-size",
            "1K",
            "--out",
            str(out),
            "--no-plots",
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads((out / "results.json").read_text())["rows"]
    for lib in ("symmem", "mpi4py"):
        got = {(r["op"], r["bytes"]) for r in rows if r["lib"] == lib}
        assert got == {(op, s) for op in ("put", "put_signal") for s in (8, 32, 128, 512, 1024)} | {
            (op, s) for op in ("reducescatter", "alltoall") for s in (12, 24, 120, 504, 1020)
        } | {("barrier", 0)}, (lib, got)


def _quick_mpi_run(tmp_path, *flags):
    """The bench on the cpu backend, symmem against mpi4py for put, reduce
    and barrier, 8 B to 1 KiB: (its stdout, its rows)."""
    out = tmp_path / "bench"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "symmem.bench",
            "--backend",
            "cpu",
            "--ops",
            "put,reduce,barrier",
            "--libs",
            "symmem,mpi4py",
            "--max-size",
            "1K",
            "--rounds",
            "1",
            "--no-plots",
            "--out",
            str(out),
            *flags,
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout, json.loads((out / "results.json").read_text())["rows"]


@pytest.mark.skipif(not HAVE_MPI, reason="mpi4py is not installed")
def test_mpi4py_put_allreduce_and_barrier_get_numbers_and_ratios(tmp_path):
    """put (Put + Flush into a window), reduce (Allreduce) and barrier:
    mpi4py rows at symmem's sizes, each with its time and its ratio to
    symmem's, in the JSON and in the printed tables. By default nothing
    but the tables (and the run's header) is printed."""
    stdout, rows = _quick_mpi_run(tmp_path, "--npes", "2")
    assert "libraries: symmem, mpi4py" in stdout
    for op in ("put", "reduce", "barrier"):
        mine = {r["bytes"]: r for r in rows if r["op"] == op and r["lib"] == "symmem"}
        theirs = {r["bytes"]: r for r in rows if r["op"] == op and r["lib"] == "mpi4py"}
        assert set(theirs) == set(mine) == set(plan.sizes(op, 8, 1024, 2)), op
        for size, row in theirs.items():
            assert row["us"] > 0 and mine[size]["us"] > 0, row
            assert row["symmem_speedup"] == pytest.approx(row["us"] / mine[size]["us"]), row
    # each table prints a line per mpi4py row: size, library, time, ratio (then the summary)
    tables = stdout[: stdout.index("== summary")]
    printed = [line.split() for line in tables.splitlines() if " mpi4py " in line]
    assert len(printed) == sum(r["lib"] == "mpi4py" for r in rows)
    for cells in printed:
        assert cells[1] == "mpi4py" and float(cells[2]) > 0 and cells[5].endswith("x"), cells
        float(cells[5].rstrip("x"))
    assert "== put: " in stdout and "== reduce: " in stdout and "== barrier: " in stdout
    # no progress: no rounds, no per-size lines, no timings of a library's run
    assert "round 1 of 1" not in stdout and "done in" not in stdout
    assert "[symmem] put 8:" not in stdout and "[mpi4py]" not in stdout


@pytest.mark.skipif(not HAVE_MPI, reason="mpi4py is not installed")
def test_verbose_prints_progress_size_by_size(tmp_path):
    stdout, rows = _quick_mpi_run(tmp_path, "-n", "2", "-v")
    for name in ("symmem", "mpi4py"):
        assert f"[{name}] round 1 of 1 ..." in stdout and f"[{name}] done in " in stdout
        assert f"  [{name}] init " in stdout
        for op in ("put", "reduce"):
            for size in plan.sizes(op, 8, 1024, 2):
                assert f"  [{name}] {op} {plan.format_size(size)}: " in stdout, (name, op, size)
        assert f"  [{name}] barrier 0: " in stdout
    assert stdout.index("done in") < stdout.index("== put: ")  # progress, then the tables
    assert {r["lib"] for r in rows} == {"symmem", "mpi4py"}


def test_the_earlier_name_of_the_mpi_library_still_picks_it():
    from symmem.bench.__main__ import choose_libraries

    chosen, skipped = choose_libraries(_parse("--backend", "cpu", "--libs", "mpi"))
    names = [name for name, _ in chosen] + list(skipped)
    assert names == ["mpi4py"], names  # chosen, or left out saying why
