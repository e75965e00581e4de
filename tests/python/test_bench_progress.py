"""What python -m symmem.bench shows while it runs and what it says at the
end (issue 41): on a terminal one progress line rewritten in place and
erased for a closing line; in a pipe plain lines; nothing with --quiet; the
summary's ahead / level / behind by size, from recorded results (--load);
and the NumPy reference's buffers aligned as symmem's heap is."""

import io
import json
import os
import pty
import re
import subprocess
import sys

import pytest

from symmem.bench import numpy_reference, plan, progress

QUICK = ["--backend", "cpu", "-n", "2", "--ops", "put,barrier", "--max-size", "1K", "--no-plots"]


def run_on_a_terminal(tmp_path, *argv, columns=60):
    """The bench with stdin, stdout and stderr on a pseudo-terminal of
    columns columns: (exit status, everything it wrote)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "symmem.bench", *argv, "--out", str(tmp_path / "out")],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=dict(os.environ, COLUMNS=str(columns), TERM="xterm"),
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's last writer has gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(timeout=120), b"".join(chunks).decode()


def test_on_a_terminal_one_line_is_rewritten_in_place_and_ends_cleanly(tmp_path):
    status, text = run_on_a_terminal(tmp_path, *QUICK, "--libs", "symmem,numpy")
    assert status == 0, text
    # symmem: put at 8, 32, 128, 512, 1K and the barrier; numpy: the puts (no barrier)
    total = 2 * len(plan.sizes("put", 8, 1024, 2)) + 1
    closing = f"\r\x1b[Ksymmem.bench: {total} measurements in 0:"
    assert closing in text, repr(text)
    during, after = text.split(closing)
    drawn = [
        part[: -len("\x1b[K")]
        for part in during.split("\r")
        if part.endswith("\x1b[K") and part != "\x1b[K"
    ]
    assert drawn and all(len(line) <= 59 for line in drawn), drawn  # within COLUMNS=60
    assert any(line.startswith("[symmem] put 128: 2/") for line in drawn), drawn
    assert any(line.startswith("[numpy] put ") for line in drawn), drawn
    assert f"{total}/{total} measured" in during
    # after the closing line: no more drawing, the tables, then the summary last
    assert "\x1b[K" not in after and after.index("== put: ") < after.index("== summary")


def test_quiet_shows_no_progress(tmp_path):
    status, text = run_on_a_terminal(tmp_path, *QUICK, "--libs", "numpy", "--quiet")
    assert status == 0, text
    assert "\x1b[K" not in text and "measurements in" not in text and "[numpy]" not in text
    assert "== put: " in text


def test_in_a_pipe_plain_lines_come_from_the_workers_records(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "symmem.bench",
            *QUICK,
            "--libs",
            "symmem",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    total = len(plan.sizes("put", 8, 1024, 2)) + 1
    lines = result.stderr.splitlines()
    assert re.fullmatch(
        rf"symmem\.bench: \[symmem\] done in 0:\d\d; {total}/{total} measured, "
        r"0:\d\d so far, about 0:00 left",
        lines[0],
    ), lines
    assert re.fullmatch(rf"symmem\.bench: {total} measurements in 0:\d\d", lines[-1]), lines
    assert "\r" not in result.stderr and "measured" not in result.stdout


def test_a_library_that_fails_leaves_what_it_did_not_measure_out_of_the_total():
    out = io.StringIO()
    runs = [("symmem", 0, [("put", 8), ("put", 32)]), ("mpi4py", 0, [("put", 8), ("put", 32)])]
    shown = progress.Progress(runs, "plain", out)
    shown.begin(0)
    for record in (
        dict(op="init", seconds=0.1),
        dict(op="put", bytes=8, us=1.0),
        dict(op="put", bytes=32, us=1.0),
    ):
        shown.measured(record)
    shown.end(0)
    shown.begin(1)
    shown.measured(dict(op="init", seconds=0.1))
    shown.measured(dict(op="put", bytes=8, us=1.0))
    shown.end(1)  # failed after one measurement: its other leaves the total
    shown.close()
    lines = out.getvalue().splitlines()
    assert re.fullmatch(
        r"symmem\.bench: \[symmem\] done in 0:00; 2/4 measured, 0:00 so far, "
        r"about 0:00 left",
        lines[0],
    ), lines
    assert lines[1].startswith("symmem.bench: [mpi4py] done in 0:00; 3/3 measured"), lines
    assert lines[2:] == ["symmem.bench: 3 measurements in 0:00"] and "\r" not in out.getvalue()


def test_the_estimate_takes_earlier_rounds_then_other_libraries_then_the_bytes():
    estimate = progress.Estimate()
    assert estimate.seconds([("symmem", "put", 8)], []) is None
    estimate.measured("symmem", "put", 8, 0.5)
    estimate.measured("symmem", "put", 1 << 20, 1.0)
    estimate.started("symmem", 2.0)
    assert estimate.seconds([("symmem", "put", 8)], []) == 0.5  # an earlier round's
    assert estimate.seconds([("numpy", "put", 1 << 20)], []) == 1.0  # another library's
    assert estimate.seconds([], ["numpy"]) == 2.0  # the others' start
    estimate.measured("symmem", "get", 64 << 20, 10.5)  # moves 640 MiB
    a, b = estimate._model()
    assert a == 0.5 and b == (10.5 - 0.5) / (640 << 20)
    assert estimate.seconds([("symmem", "get", 16 << 20)], []) == pytest.approx(
        a + b * (16 << 20) * 50
    )


def test_the_summary_says_where_symmem_is_ahead_level_or_behind(tmp_path):
    """Recorded results, two rounds: numpy's put 2x and 1.5x symmem's time
    (ahead), 2% off with a 5% spread (level), then 0.8x and 0.5x (behind)."""
    records = [dict(lib="symmem", op="init", seconds=0.1, round=1)]
    for size, theirs in ((8, 2.0), (32, 1.5), (128, 0.98), (512, 0.8), (2048, 0.5)):
        records += [
            dict(lib="symmem", op="put", bytes=size, us=1.0, round=1),
            dict(lib="symmem", op="put", bytes=size, us=1.05, round=2),
            dict(lib="numpy", op="put", bytes=size, us=theirs, round=1),
            dict(lib="numpy", op="put", bytes=size, us=theirs, round=2),
        ]
    records += [
        dict(lib="symmem", op="barrier", bytes=0, us=1.0, round=1),
        dict(lib="mpi4py", op="barrier", bytes=0, us=1.19, round=1),
    ]
    meta = dict(
        command="python -m symmem.bench (by hand)",
        date="2026-11-28",
        rounds=2,
        machine="test",
        backend="cpu",
        n_pes=2,
        skipped={},
        setup={"numpy": numpy_reference.SETUP},
    )
    saved = tmp_path / "results.json"
    saved.write_text(json.dumps(dict(meta=meta, records=records)))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "symmem.bench",
            "--load",
            str(saved),
            "--out",
            str(tmp_path / "out"),
            "--no-plots",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout[result.stdout.index("== summary (2 PEs): ") :].splitlines()
    assert re.split(r"\s{2,}", summary[1].strip()) == [
        "operation",
        "library",
        "symmem ahead",
        "level",
        "symmem behind",
    ]
    assert re.split(r"\s{2,}", summary[2].strip()) == [
        "put",
        "numpy",
        "8 to 32 (1.50-2.00x)",
        "128 (0.98x)",
        "512 to 2K (0.50-0.80x)",
    ]
    assert re.split(r"\s{2,}", summary[3].strip()) == ["barrier", "mpi4py", "1.19x"]
    assert "one round" not in result.stdout  # two rounds: a spread was measured
    assert result.stdout.index("== put: ") < result.stdout.index("== summary")
    assert "0.98x ~" in result.stdout and "0.80x ~" not in result.stdout
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| put | numpy | 8 to 32 (1.50-2.00x) | 128 (0.98x) | 512 to 2K (0.50-0.80x) |" in report
    assert f"- numpy: {numpy_reference.SETUP}" in report
    assert report.index("**summary**") < report.index("**setup**") < report.index("| size |")


def test_the_numpy_reference_s_buffers_start_where_symmem_s_heap_does():
    for count, dtype in ((8, "uint8"), (1000, "float32"), (3 << 20, "uint8")):
        buffer = numpy_reference.shared(count, dtype, 7)
        assert buffer.__array_interface__["data"][0] % (2 << 20) == 0 and buffer.size == count
        assert buffer.flags.writeable and (buffer == 7).all()
