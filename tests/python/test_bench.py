"""python -m symmem.bench on the cpu backend: one small sweep, checked for
every operation's records, the tables, the JSON and the plots; and the C
program of the gpu comparison, shipped inside an installed package."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from symmem.bench import mpi_worker, plan

REPO = Path(__file__).resolve().parents[2]
HAVE_MPI = importlib.util.find_spec("mpi4py") is not None


def test_one_command_compares_symmem_with_numpy(tmp_path):
    out = tmp_path / "bench"
    result = subprocess.run([sys.executable, "-m", "symmem.bench", "--backend", "cpu", "-n", "2",
                             "--max-size", "64K", "--out", str(out)],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "libraries: symmem, symmem njit, numpy" + (", mpi" if HAVE_MPI else "") \
        in result.stdout
    for op in plan.OPS:
        assert f"== {op}: " in result.stdout, op
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["backend"] == "cpu" and data["meta"]["n_pes"] == 2
    rows = data["rows"]
    for op in plan.OPS:
        sizes = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "symmem"}
        expected = {8} if op == "call_cost" else {0} if op == "barrier" else \
            set(plan.sizes(op, 8, 64 << 10, 2))
        assert sizes == expected, (op, sizes)
    for op in plan.OPS:  # the device calls from njit loops: every op, every size
        sizes = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "symmem njit"}
        mine = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "symmem"}
        assert sizes == mine, (op, sizes)
    if HAVE_MPI:  # MPI's two-sided counterparts, at the same sizes as symmem's
        for op in plan.OPS:
            sizes = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "mpi"}
            mine = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "symmem"}
            assert sizes == (mine if op in mpi_worker.MPI_OPS else set()), (op, sizes)
    for r in rows:
        assert r["us"] > 0, r
        if r["lib"] != "symmem":
            assert r["symmem_speedup"] > 0, r
        if r["bytes"]:
            assert abs(r["algbw"] - r["bytes"] / r["us"] / 1e3) < 1e-6 * r["algbw"] + 1e-9
    reduce = next(r for r in rows if r["op"] == "reduce" and r["bytes"] == 2048)
    assert abs(reduce["busbw"] - reduce["algbw"]) < 1e-9  # 2(n-1)/n = 1 at 2 PEs
    for name in ("bandwidth.png", "latency.png", "summary.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG", name
    assert "| size | library | latency us |" in (out / "report.md").read_text()
    # the report again from the saved records, without running anything
    again = subprocess.run([sys.executable, "-m", "symmem.bench", "--load",
                            str(out / "results.json"), "--out", str(tmp_path / "again"),
                            "--no-plots"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "symmem.bench:" not in again.stdout  # nothing ran
    assert json.loads((tmp_path / "again" / "results.json").read_text())["rows"] == rows


def test_bad_options_are_refused_by_name():
    result = subprocess.run([sys.executable, "-m", "symmem.bench", "--ops", "put,teleport"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--ops: unknown teleport" in result.stderr
    result = subprocess.run([sys.executable, "-m", "symmem.bench", "--min-size", "1M",
                             "--max-size", "4K"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--min-size" in result.stderr


def test_gpu_libraries_that_cannot_run_say_why():
    from types import SimpleNamespace
    from symmem.bench import libraries
    opts = SimpleNamespace(out="/tmp", ops="put", min_bytes=8, max_bytes=64, pes=2,
                           backend="gpu", timeout=60)
    try:
        import nvshmem.core  # noqa: F401
    except Exception:
        try:
            libraries.nvshmem4py_runner(opts)
            raise AssertionError("nvshmem4py_runner did not refuse")
        except libraries.Unavailable as why:
            assert "NVSHMEM4Py" in str(why)


def test_rounds_keep_the_fastest_and_mark_what_is_within_noise():
    from symmem.bench import report
    records = [  # two rounds; symmem's second put round is 4% slower than its first
        dict(lib="symmem", op="put", bytes=8, us=10.0, round=1),
        dict(lib="symmem", op="put", bytes=8, us=10.4, round=2),
        dict(lib="other", op="put", bytes=8, us=9.8, round=1),   # 2% ahead: noise
        dict(lib="other", op="put", bytes=8, us=9.9, round=2),
        dict(lib="symmem", op="get", bytes=8, us=10.0, round=1),
        dict(lib="symmem", op="get", bytes=8, us=10.1, round=2),
        dict(lib="other", op="get", bytes=8, us=9.0, round=1),   # 10% ahead: real
        dict(lib="other", op="get", bytes=8, us=9.0, round=2),
        dict(lib="symmem", op="init", seconds=1.5, round=1),
        dict(lib="symmem", op="init", seconds=1.2, round=2),
    ]
    rows = {(r["op"], r["lib"]): r for r in report.rows(records, 2)}
    assert rows["put", "symmem"]["us"] == 10.0
    assert abs(rows["put", "symmem"]["spread"] - 0.04) < 1e-9
    assert abs(rows["put", "other"]["symmem_speedup"] - 0.98) < 1e-9
    assert rows["put", "other"]["within_noise"] is True
    assert rows["get", "other"]["within_noise"] is False
    assert report.organise(records)[1] == {"symmem": 1.2}
    text = report.text_tables(records, 2)
    assert "0.98x ~" in text and "0.90x" in text and "0.90x ~" not in text


def test_rounds_must_be_positive():
    result = subprocess.run([sys.executable, "-m", "symmem.bench", "--backend", "cpu",
                             "--rounds", "0"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--rounds: need at least 1, got 0" in result.stderr


@pytest.mark.skipif(not HAVE_MPI, reason="mpi4py is not installed")
def test_three_pes_against_mpi(tmp_path):
    """Not only powers of two: collective sizes are whole float32 blocks of 3."""
    out = tmp_path / "bench"
    result = subprocess.run([sys.executable, "-m", "symmem.bench", "--backend", "cpu", "-n", "3",
                             "--ops", "put_signal,reducescatter,alltoall,barrier", "--libs",
                             "symmem,mpi", "--max-size", "1K", "--out", str(out), "--no-plots"],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads((out / "results.json").read_text())["rows"]
    for lib in ("symmem", "mpi"):
        got = {(r["op"], r["bytes"]) for r in rows if r["lib"] == lib}
        assert got == {("put_signal", s) for s in (8, 32, 128, 512, 1024)} | \
            {(op, s) for op in ("reducescatter", "alltoall") for s in (12, 24, 120, 504, 1020)} | \
            {("barrier", 0)}, (lib, got)


def _can_build_here():
    """--no-build-isolation where this Python has setuptools >= 77 and wheel
    (pyproject's build requirements); else pip fetches them."""
    try:
        import setuptools
        import wheel  # noqa: F401
    except ImportError:
        return []
    return ["--no-build-isolation"] if int(setuptools.__version__.split(".")[0]) >= 77 else []


def test_an_installed_symmem_ships_the_nvshmem_c_program(tmp_path):
    """The C program the gpu benchmarks compile is package data: installed
    into a target folder, symmem holds it (and the header it includes), and
    the bench looks for it there, not in the source checkout."""
    if not (REPO / "pyproject.toml").exists():
        pytest.skip("needs symmem's source checkout to build from")
    # A copy without build outputs: setuptools builds in the source tree and
    # would install whatever an earlier build left in its build/ folder.
    source, target = tmp_path / "source", tmp_path / "site"
    shutil.copytree(REPO, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "*.so", "__pycache__", ".pytest_cache"))
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                            *_can_build_here(), "--target", str(target), str(source)],
                           capture_output=True, text=True, timeout=280)
    if build.returncode != 0 and ("No matching distribution" in build.stderr
                                  or "Could not find a version" in build.stderr):
        pytest.skip(f"the build tools cannot be had here: {build.stderr.strip()[-300:]}")
    assert build.returncode == 0, build.stdout + build.stderr
    shipped = target / "symmem" / "bench"
    for name in ("nvshmem_floor.c", "nvshmem_abi.h"):
        assert (shipped / name).is_file() and not (shipped / name).is_symlink(), name
    assert "NV_UNIQUEID_VERSION" in (shipped / "nvshmem_abi.h").read_text()
    found = subprocess.run([sys.executable, "-c", "import symmem.bench.libraries as lib; "
                            "print(lib.FLOOR_SOURCE)"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(target)))
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) == shipped / "nvshmem_floor.c"
