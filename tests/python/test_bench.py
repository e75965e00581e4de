"""python -m symmem.bench on the cpu backend: one small sweep, checked for
every operation's records, the tables, the JSON and the plots; the mpi4py
comparison (put through an MPI window, Allreduce, Barrier) with its ratios;
what is printed with and without -v; and the C program of the gpu
comparison, shipped inside an installed package."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env, cpu_only
from symmem.bench import mpi_worker, plan

REPO = Path(__file__).resolve().parents[2]
HAVE_MPI = importlib.util.find_spec("mpi4py") is not None


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


def test_gpu_libraries_that_cannot_run_say_why():
    from types import SimpleNamespace
    from symmem.bench import libraries

    opts = SimpleNamespace(
        out="/tmp", ops="put", min_bytes=8, max_bytes=64, pes=2, backend="gpu", timeout=60
    )
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


def test_the_earlier_name_of_the_mpi_library_still_picks_it():
    from symmem.bench.__main__ import choose_libraries

    chosen, skipped = choose_libraries(_parse("--backend", "cpu", "--libs", "mpi"))
    names = [name for name, _ in chosen] + list(skipped)
    assert names == ["mpi4py"], names  # chosen, or left out saying why


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
    shutil.copytree(
        REPO,
        source,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "*.so", "__pycache__", ".pytest_cache"
        ),
    )
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            *_can_build_here(),
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=280,
    )
    if build.returncode != 0 and (
        "No matching distribution" in build.stderr or "Could not find a version" in build.stderr
    ):
        pytest.skip(f"the build tools cannot be had here: {build.stderr.strip()[-300:]}")
    assert build.returncode == 0, build.stdout + build.stderr
    shipped = target / "symmem" / "bench"
    for name in ("nvshmem_floor.c", "nvshmem_abi.h", "nvshmem_device.cu", "launched.h"):
        assert (shipped / name).is_file() and not (shipped / name).is_symlink(), name
    assert "NV_UNIQUEID_VERSION" in (shipped / "nvshmem_abi.h").read_text()
    assert "uid_file_share" in (shipped / "launched.h").read_text()
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "import symmem.bench.libraries as lib; "
            "print(lib.FLOOR_SOURCE); print(lib.DEVICE_SOURCE)",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(target)),
    )
    assert found.returncode == 0, found.stderr
    assert [Path(p) for p in found.stdout.split()] == [
        shipped / "nvshmem_floor.c",
        shipped / "nvshmem_device.cu",
    ]


# ---- the device operations (gpu backend): what can be checked without a GPU ----


def _parse(*argv):
    from symmem.bench.__main__ import parse_args

    return parse_args(list(argv))


def test_device_operations_join_the_default_run_on_gpus_with_two_pes():
    every_host, every_device = ",".join(plan.OPS), ",".join(plan.DEVICE_OPS)
    opts = _parse("--backend", "gpu", "-n", "2")
    assert (opts.ops, opts.device_ops) == (every_host, every_device)
    for argv in (("--backend", "gpu", "-n", "1"), ("--backend", "cpu", "-n", "2")):
        opts = _parse(*argv)
        assert (opts.ops, opts.device_ops) == (every_host, ""), argv
    opts = _parse("--backend", "gpu", "--ops", "device")
    assert (opts.ops, opts.device_ops) == ("", every_device)
    # names and groups mix; each operation once, in the order first named
    opts = _parse("--backend", "gpu", "-n", "3", "--ops", "barrier,device_barrier,host")
    assert opts.ops == "barrier," + ",".join(op for op in plan.OPS if op != "barrier")
    assert opts.device_ops == "device_barrier"


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ("--backend", "cpu", "--ops", "put,device_put"),
            "--ops: device_put: device operations run on the gpu backend (on the cpu backend the "
            "device calls are the 'symmem njit' library",
        ),
        (
            ("--backend", "gpu", "-n", "1", "--ops", "device_p_lat"),
            "--ops: device_p_lat: device operations need 2 PEs or more (PE 0 puts to PE 1); got -n 1",
        ),
        (
            ("--backend", "gpu", "--ops", "device,teleport"),
            "--ops: unknown teleport; choose from host, device, triton, put,",
        ),
    ],
)
def test_device_operations_where_they_cannot_run_are_refused(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        _parse(*argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_device_put_sizes_keep_within_1k_to_64m():
    assert plan.sizes("device_put", 8, 1 << 30, 2) == [1 << s for s in range(10, 27, 2)]
    assert plan.sizes("device_put_grid", 3000, 1 << 20, 2) == [
        3000,
        12000,
        48000,
        192000,
        768000,
        1 << 20,
    ]
    assert plan.sizes("device_put", 128 << 20, 1 << 30, 2) == []
    assert plan.sizes("device_put_signal", 64, 1 << 20, 2) == [8]
    assert plan.sizes("device_barrier_block", 64, 1 << 20, 2) == [0]
    # a put kernel moves 1 GiB, in at most 16384 puts
    assert [plan.device_reps(s) for s in (1 << 10, 1 << 16, 1 << 20, 64 << 20)] == [
        16384,
        16384,
        1024,
        16,
    ]


@pytest.mark.parametrize("size", [1 << 10, 3000, 1 << 20, 16 << 20, 64 << 20])
def test_a_grid_put_s_slices_start_16_byte_aligned_and_cover_the_size(size):
    programs = 264  # 2 a SM of an H200
    chunk = plan.device_chunk(size, programs)
    assert chunk % 16 == 0
    covered = sum(max(0, min(chunk, size - i * chunk)) for i in range(programs))
    assert covered == size
    assert chunk - size / programs < 16  # an even share, give or take the rounding


# What the two device workers print (PE 0), two rounds, with other output between.
CANNED_DEVICE_OUTPUT = [
    '{"lib": "symmem device", "op": "init", "seconds": 2.5, "n_pes": 2}',
    "some line a worker printed",
    '{"lib": "symmem device", "op": "device_put", "bytes": 1048576, "us": 23.3, "round": 1}',
    '{"lib": "symmem host", "op": "device_put", "bytes": 1048576, "us": 10.0, "round": 1}',
    '{"lib": "nvshmem device", "op": "device_put", "bytes": 1048576, "us": 24.465, "round": 1}',
    '{"lib": "symmem device", "op": "device_put", "bytes": 1048576, "us": 23.9, "round": 2}',
    '{"lib": "nvshmem device", "op": "device_put", "bytes": 1048576, "us": 25.0, "round": 2}',
    '{"lib": "symmem device", "op": "device_put_signal", "bytes": 8, "us": 2.9, "round": 1}',
    '{"lib": "symmem host", "op": "device_put_signal", "bytes": 8, "us": 11.6, "round": 1}',
    '{"lib": "nvshmem device", "op": "device_put_signal", "bytes": 8, "us": 2.8, "round": 1}',
    '{"lib": "symmem device", "op": "device_put_signal", "bytes": 8, "us": 3.02, "round": 2}',
    '{"lib": "nvshmem device", "op": "device_put_signal", "bytes": 8, "us": 2.82, "round": 2}',
    '{"lib": "symmem device", "op": "device_barrier", "bytes": 0, "us": 3.49, "round": 1}',
    '{"lib": "symmem host", "op": "device_barrier", "bytes": 0, "us": 12.33, "round": 1}',
]


def test_the_device_table_has_one_line_per_operation_with_both_ratios(tmp_path):
    from symmem.bench import libraries, report

    script = "import sys; sys.stdout.write(sys.argv[1])"
    with open(tmp_path / "log", "w") as log:
        records = list(
            libraries.stream_records(
                [sys.executable, "-c", script, "\n".join(CANNED_DEVICE_OUTPUT) + "\n"],
                dict(os.environ),
                log,
            )
        )
    assert len(records) == len(CANNED_DEVICE_OUTPUT) - 1  # the other line went to the log
    assert "some line a worker printed" in (tmp_path / "log").read_text()
    lines = report.text_tables(records, 2).splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("== device (2 PEs): "))
    assert lines[title + 1].split() == [
        "operation",
        "size",
        "symmem",
        "device",
        "us",
        "nvshmem",
        "device",
        "us",
        "symmem",
        "host",
        "us",
        "device",
        "GB/s",
        "nvshmem",
        "/",
        "device",
        "host",
        "/",
        "device",
    ]
    # each library's fastest round; GB/s of symmem's device put; the other's time over
    # symmem device's: NVSHMEM's put 1.05x slower, the host's put 0.43x (faster)
    assert lines[title + 2].split() == [
        "device_put",
        "1M",
        "23.300",
        "24.465",
        "10.000",
        "45.00",
        "1.05x",
        "0.43x",
    ]
    # symmem's ping-pong 3.6% behind NVSHMEM's, within its own 4.1% spread between rounds
    assert lines[title + 3].split() == [
        "device_put_signal",
        "8",
        "2.900",
        "2.800",
        "11.600",
        "0.97x",
        "~",
        "4.00x",
    ]
    # no nvshmem device line for the barrier: "-", and no ratio
    assert lines[title + 4].split() == ["device_barrier", "3.490", "-", "12.330", "3.53x"]
    assert "== device_put" not in "\n".join(lines)  # no per-library table for device ops
    md = report.markdown(records, 2)
    assert "| device_put | 1M | 23.300 | 24.465 | 10.000 | 45.00 | 1.05x | 0.43x |" in md
    assert "| device_barrier |  | 3.490 | - | 12.330 |  |  | 3.53x |" in md
    assert "| symmem device | 2.50 |" in md  # its start-up
    rows = {(r["op"], r["lib"]): r for r in report.rows(records, 2)}
    assert rows["device_put", "symmem device"]["symmem_speedup"] is None  # the baseline
    assert abs(rows["device_put", "nvshmem device"]["symmem_speedup"] - 1.05) < 1e-9


def test_the_triton_table_puts_the_two_engines_side_by_side():
    from symmem.bench import report

    records = [
        dict(lib="symmem triton", op="triton_put", bytes=1 << 20, us=20.0, round=1),
        dict(lib="nvshmem triton", op="triton_put", bytes=1 << 20, us=21.0, round=1),
        dict(lib="symmem triton", op="triton_put_signal", bytes=8, us=2.0, round=1),
        dict(lib="nvshmem triton", op="triton_put_signal", bytes=8, us=1.9, round=1),
        dict(lib="symmem device", op="device_put", bytes=1 << 20, us=23.3, round=1),
    ]
    lines = report.text_tables(records, 2).splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("== triton (2 PEs): "))
    assert lines[title + 1].split() == [
        "operation",
        "size",
        "symmem",
        "triton",
        "us",
        "nvshmem",
        "triton",
        "us",
        "symmem",
        "triton",
        "GB/s",
        "nvshmem",
        "/",
        "symmem",
    ]
    # symmem's engine's bandwidth; NVSHMEM's time over symmem's
    assert lines[title + 2].split() == ["triton_put", "1M", "20.000", "21.000", "52.43", "1.05x"]
    assert lines[title + 3].split() == ["triton_put_signal", "8", "2.000", "1.900", "0.95x"]
    # the Numba kernels keep their own table, without the Triton rows
    device = next(i for i, line in enumerate(lines) if line.startswith("== device (2 PEs): "))
    assert lines[device + 2].split()[:3] == ["device_put", "1M", "23.300"]
    assert "triton" not in lines[device + 2]
    assert "| triton_put | 1M | 20.000 | 21.000 | 52.43 | 1.05x |" in report.markdown(records, 2)


def test_each_device_library_gets_only_the_operations_it_runs():
    from symmem.bench import libraries
    from symmem.bench.__main__ import choose_libraries

    opts = _parse("--backend", "gpu", "-n", "2", "--ops", "triton_put,device_barrier")
    assert libraries.device_ops("symmem triton", opts) == "triton_put"
    assert libraries.device_ops("nvshmem device", opts) == "device_barrier"
    opts = _parse(
        "--backend", "gpu", "-n", "2", "--ops", "triton", "--libs", "symmem device,symmem triton"
    )
    chosen, skipped = choose_libraries(opts)
    assert skipped["symmem device"] == "--ops has no device operation"
    assert [name for name, _ in chosen] in ([], ["symmem triton"])  # [] where it cannot run
    assert "symmem triton" in skipped or chosen


def _fake_toolchain(tmp_path, nvcc_body):
    """What the device program's build looks for, in tmp_path: an
    nvidia-nvshmem wheel's files (empty) and an executable nvcc (nvcc_body,
    shell). The environment that finds them."""
    wheel = tmp_path / "wheel" / "nvidia" / "nvshmem"
    for name in ("include/nvshmem.h", "lib/libnvshmem_device.a", "lib/libnvshmem_host.so.3"):
        (wheel / name).parent.mkdir(parents=True, exist_ok=True)
        (wheel / name).write_text("")
    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\n" + nvcc_body)
    nvcc.chmod(0o755)
    path = os.pathsep.join([str(tmp_path / "wheel"), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, NVCC=str(nvcc), PYTHONPATH=path, XDG_CACHE_HOME=str(tmp_path / "cache"))


def _device_bench(tmp_path, env):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "symmem.bench",
            "--backend",
            "gpu",
            "-n",
            "2",
            "--ops",
            "device",
            "--libs",
            "nvshmem device",
            "--rounds",
            "1",
            "--max-size",
            "64K",
            "--no-plots",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_a_device_program_that_cannot_be_built_is_left_out_saying_why(tmp_path, monkeypatch):
    from symmem.bench import libraries

    monkeypatch.setenv("NVCC", str(tmp_path / "no-nvcc"))
    with pytest.raises(
        libraries.Unavailable, match=f"^NVCC={tmp_path}/no-nvcc is not an executable$"
    ):
        libraries.build_device_program(tmp_path)
    try:
        import nvidia.nvshmem  # noqa: F401
    except ImportError:
        monkeypatch.setenv("NVCC", sys.executable)  # found, so the wheel is looked for next
        with pytest.raises(
            libraries.Unavailable, match="^the nvidia-nvshmem wheel is not installed"
        ):
            libraries.build_device_program(tmp_path)
    # nvcc fails: the run goes on without the library, and says why
    env = _fake_toolchain(tmp_path, 'echo "nvshmem_device.cu(1): error: no GPU compiler"\nexit 1\n')
    result = _device_bench(tmp_path, env)
    assert (
        "left out nvshmem device: compiling nvshmem_device.cu failed: "
        "nvshmem_device.cu(1): error: no GPU compiler" in result.stdout
    ), result.stdout
    assert "libraries: none" in result.stdout
    assert result.returncode == 1  # nothing measured


# A stand-in for nvcc: the "program" it builds (a Python script, which the
# launcher runs with this Python) prints what nvshmem_device.cu would for
# device_put, one record per size in DEVICE_SIZES, and the other variables it
# was given; each build adds a line to the file builds.
FAKE_NVCC = r"""
[ "$1" = --version ] && { echo "fake nvcc"; exit 0; }
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
cat > "$out" <<'PROGRAM'
import json, os
if os.environ["SYMMEM_RANK"] == "0":
    print("ops={DEVICE_OPS} runs={DEVICE_RUNS} loop={DEVICE_LOOP} reps={DEVICE_MAX_REPS}"
          .format(**os.environ))
    for size in os.environ["DEVICE_SIZES"].split(","):
        print(json.dumps(dict(lib="nvshmem device", op="device_put", bytes=int(size), us=2.0)))
PROGRAM
echo built >> "$(dirname "$0")/builds"
"""


def test_the_device_program_is_built_once_and_run_under_the_launcher(tmp_path):
    env = _fake_toolchain(tmp_path, FAKE_NVCC)
    for _ in range(2):
        result = _device_bench(tmp_path, env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "libraries: nvshmem device" in result.stdout
        lines = result.stdout.splitlines()
        title = next(i for i, line in enumerate(lines) if line.startswith("== device"))
        assert [line.split()[:3] for line in lines[title + 2 : title + 6]] == [
            ["device_put", size, "-"] for size in ("1K", "4K", "16K", "64K")
        ]
    assert (tmp_path / "builds").read_text() == "built\n"  # the second run found it built
    built = [p.name for p in (tmp_path / "cache" / "symmem" / "bench").iterdir()]
    assert len(built) == 1 and built[0].startswith("nvshmem_device-"), built
    log = (tmp_path / "out" / "run.log").read_text()
    assert f"ops={','.join(plan.NUMBA_DEVICE_OPS)} runs=5 loop=10000 reps=16384" in log


@pytest.mark.parametrize(
    "mode", ["nvshmem", "one_shot", "two_shot", "push_one_shot", "push_two_shot"]
)
def test_the_symmem_collectives_libraries_run_the_worker_under_their_mode(mode, monkeypatch):
    """symmem/<mode> runs the collectives asked for, labelled so, with
    SYMMEM_GPU_COLLECTIVES=<mode>; the rest of --ops is left out."""
    from types import SimpleNamespace

    from symmem.bench import libraries

    seen = []
    monkeypatch.setattr(
        libraries,
        "stream_records",
        lambda command, env, log: iter(seen.append((command, env)) or []),
    )
    opts = SimpleNamespace(
        ops="put,reduce,fcollect",
        min_bytes=8,
        max_bytes=64,
        graph=False,
        pes=2,
        timeout=30,
        backend="gpu",
    )
    list(libraries.GPU_LIBRARIES[f"symmem/{mode}"](opts)(None))
    ((command, env),) = seen
    assert env["SYMMEM_GPU_COLLECTIVES"] == mode
    assert command[command.index("--label") + 1] == f"symmem/{mode}"
    assert command[command.index("--ops") + 1] == "reduce,fcollect"
    with pytest.raises(libraries.Unavailable, match="--ops has none of"):
        libraries.GPU_LIBRARIES[f"symmem/{mode}"](SimpleNamespace(ops="put"))


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
