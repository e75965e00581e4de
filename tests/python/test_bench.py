"""python -m symmem.bench on the cpu backend: one small sweep, checked for
every operation's records, the tables, the JSON and the plots; the options
it refuses and how -n is spelled; rounds (the fastest kept, what is within
noise); and the first use of each call. The mpi4py comparison is
test_bench_mpi.py, the device operations' options and tables
test_bench_device.py, the gpu comparison's libraries test_bench_gpu_libraries.py."""

import json
import re
import subprocess
import sys

import pytest

from bench_options import HAVE_MPI, _parse
from conftest import clean_env, cpu_only
from symmem.bench import mpi_worker, plan


def test_one_command_compares_symmem_with_numpy(tmp_path):
    out = tmp_path / "bench"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "symmem.bench",
            "--backend",
            "cpu",
            "-n",
            "2",
            "--max-size",
            "64K",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "libraries: symmem, symmem njit, numpy" + (", mpi4py" if HAVE_MPI else "") in result.stdout
    )
    for op in plan.OPS:
        assert f"== {op}: " in result.stdout, op
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["backend"] == "cpu" and data["meta"]["n_pes"] == 2
    rows = data["rows"]
    for op in plan.OPS:
        sizes = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "symmem"}
        expected = (
            {8}
            if op == "call_cost"
            else {0}
            if op == "barrier"
            else set(plan.sizes(op, 8, 64 << 10, 2))
        )
        assert sizes == expected, (op, sizes)
    for op in plan.OPS:  # the device calls from njit loops: every op, every size
        sizes = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "symmem njit"}
        mine = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "symmem"}
        assert sizes == mine, (op, sizes)
    if HAVE_MPI:  # MPI's counterparts, at the same sizes as symmem's
        for op in plan.OPS:
            sizes = {r["bytes"] for r in rows if r["op"] == op and r["lib"] == "mpi4py"}
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
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "symmem.bench",
            "--load",
            str(out / "results.json"),
            "--out",
            str(tmp_path / "again"),
            "--no-plots",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "symmem.bench:" not in again.stdout  # nothing ran
    assert json.loads((tmp_path / "again" / "results.json").read_text())["rows"] == rows


def test_bad_options_are_refused_by_name():
    result = subprocess.run(
        [sys.executable, "-m", "symmem.bench", "--ops", "put,teleport"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "--ops: unknown teleport" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "symmem.bench", "--min-size", "1M", "--max-size", "4K"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "--min-size" in result.stderr


def test_rounds_keep_the_fastest_and_mark_what_is_within_noise():
    from symmem.bench import report

    records = [  # two rounds; symmem's second put round is 4% slower than its first
        dict(lib="symmem", op="put", bytes=8, us=10.0, round=1),
        dict(lib="symmem", op="put", bytes=8, us=10.4, round=2),
        dict(lib="other", op="put", bytes=8, us=9.8, round=1),  # 2% ahead: noise
        dict(lib="other", op="put", bytes=8, us=9.9, round=2),
        dict(lib="symmem", op="get", bytes=8, us=10.0, round=1),
        dict(lib="symmem", op="get", bytes=8, us=10.1, round=2),
        dict(lib="other", op="get", bytes=8, us=9.0, round=1),  # 10% ahead: real
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
    result = subprocess.run(
        [sys.executable, "-m", "symmem.bench", "--backend", "cpu", "--rounds", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "--rounds: need at least 1, got 0" in result.stderr


def test_npes_is_spelled_as_the_launcher_spells_it(capsys):
    from symmem.run import build_parser

    launcher = {s for a in build_parser()._actions for s in a.option_strings}
    assert {"-n", "--npes"} <= launcher
    for argv in (("-n", "3"), ("--npes", "3"), ("--npes=3",), ("--pes", "3")):
        assert _parse("--backend", "cpu", *argv).pes == 3, argv
    assert _parse("--backend", "cpu").pes == 2
    from symmem.bench.__main__ import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--help"])
    help_text = capsys.readouterr().out
    assert "-n N, --npes N" in help_text
    assert "--pes" not in help_text  # the earlier spelling still works, unlisted
    with pytest.raises(SystemExit) as exit_:
        _parse("--backend", "cpu", "--npes", "0")
    assert exit_.value.code == 2
    assert "-n/--npes: need at least 1 PE, got 0" in capsys.readouterr().err


@cpu_only("the gpu backend's first use is measured on GPUs (docs/gpu.md)")
def test_first_use_times_init_and_each_first_call_on_every_pe():
    result = subprocess.run(
        [sys.executable, "-m", "symmem.run", "-n", "2", "-m", "symmem.bench.first_use"],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    timed = re.findall(r"^\[pe (\d)\] (\S.*?)\s+(\d+\.\d\d) ms", result.stdout, re.M)
    for pe in "01":
        assert [label for p, label, _ in timed if p == pe] == [
            "init",
            "reduce float32 sum",
            "reduce float32 sum",
            "reduce float16 sum",
            "reduce int64 max",
            "reduce float64 prod",
            "fcollect",
            "fcollect",
            "barrier",
            "barrier",
        ], result.stdout
