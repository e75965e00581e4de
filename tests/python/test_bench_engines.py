"""The bench's comparison of the gpu backend's two engines, without a GPU:
symmem/symmem_engine and symmem/nvshmem_engine run symmem's worker with
SYMMEM_GPU_ENGINE set, left out with symmem's own reason where their PEs
would not get that engine (engine_preview asks symmem as PE 0 of the
job); cudaMemcpyAsync, the reference for put and get, copies between PE
0's GPU and PE 1's; the init operations time init() + finalize() in fresh
jobs (run for real on the cpu backend here) and keep the median launch's
slowest PE; the report's ratio column, engines table and init table."""

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from conftest import clean_env
from symmem.bench import (
    engine_libraries,
    engine_preview,
    engine_report,
    libraries,
    plan,
    report,
    symmem_runs,
)


def _opts(**kw):
    """What a runner reads of the command line."""
    base = dict(ops="", min_bytes=8, max_bytes=1 << 20, graph=False, pes=2, timeout=30)
    return SimpleNamespace(**{**base, "backend": "gpu", **kw})


def _fake_launches(monkeypatch, pe_times):
    """symmem_runs' launches, recorded instead of run: [(command, env)].
    An init_worker launch prints each PE's init_s for each init operation
    from pe_times (one list of per-PE seconds per launch, in turn)."""
    seen, launches = [], iter(pe_times)

    def fake(command, env, log):
        seen.append((command, env))
        if "symmem.bench.init_worker" not in command:
            return iter([])
        times = next(launches)
        return iter(
            dict(op=op, pe=pe, init_s=t, finalize_s=0.001, engine=env["SYMMEM_GPU_ENGINE"])
            for op in plan.INIT_OPS
            for pe, t in enumerate(times)
        )

    monkeypatch.setattr(symmem_runs, "stream_records", fake)
    return seen


@pytest.mark.parametrize("engine", ["symmem", "nvshmem"])
def test_an_engine_library_runs_symmems_worker_and_its_init_on_that_engine(engine, monkeypatch):
    asked = []
    monkeypatch.setattr(
        engine_preview, "ask", lambda pes, env: asked.append((pes, env)) or dict(engine=engine)
    )
    seen = _fake_launches(monkeypatch, [[0.5, 0.9], [0.3, 0.2], [0.7, 0.4]])
    ops = "put,get_lat,call_cost,atomic,init_first,init_again,reduce,barrier"
    label = f"symmem/{engine}_engine"
    run = libraries.GPU_LIBRARIES[label](_opts(ops=ops, libs=label))
    assert run.ops == "put,atomic,init_first,init_again,reduce,barrier"  # its ops, in order
    assert asked[0] == (2, {"SYMMEM_GPU_ENGINE": engine})
    records = list(run(None))
    # three fresh launches of the init worker, then one of the sweep
    assert [c[c.index("-m", c.index("symmem.run") + 1) + 1] for c, _ in seen] == [
        "symmem.bench.init_worker"
    ] * plan.INIT_LAUNCHES + ["symmem.bench.shmem_worker"]
    for command, env in seen:
        assert env["SYMMEM_GPU_ENGINE"] == engine and env["SYMMEM_BACKEND"] == "gpu"
        assert command[command.index("-n") + 1] == "2"
    sweep, sweep_env = seen[-1]
    assert sweep[sweep.index("--ops") + 1] == "put,atomic,reduce,barrier"
    assert sweep[sweep.index("--label") + 1] == f"symmem/{engine}_engine"
    assert "NVSHMEM_SYMMETRIC_SIZE" in sweep_env  # the sweep's heap; init's at the defaults
    # each launch's slowest PE (0.9, 0.3, 0.7), then the median launch
    first = next(r for r in records if r["op"] == "init_first")
    assert first["lib"] == f"symmem/{engine}_engine" and first["engine"] == engine
    assert first["us"] == pytest.approx(701e3) and first["init_us"] == pytest.approx(7e5)
    assert first["launches_us"] == pytest.approx([901e3, 301e3, 701e3])
    assert {r["op"] for r in records} == set(plan.INIT_OPS)


def test_an_engine_its_pes_would_not_get_is_left_out_with_symmems_reason(monkeypatch):
    refusal = "SYMMEM_GPU_ENGINE=nvshmem, but 4 PEs on this host but only 1 GPUs"
    monkeypatch.setattr(engine_preview, "ask", lambda pes, env: dict(refused=refusal))
    with pytest.raises(libraries.Unavailable) as why:
        libraries.GPU_LIBRARIES["symmem/nvshmem_engine"](_opts(ops="put", pes=4))
    assert str(why.value) == refusal
    monkeypatch.setattr(
        engine_preview, "ask", lambda pes, env: dict(engine="nvshmem", why="auto: a GPU each")
    )
    with pytest.raises(libraries.Unavailable) as why:
        engine_preview.need_engine(_opts(), "symmem")
    assert str(why.value) == "it would run on the nvshmem engine (auto: a GPU each)"
    with pytest.raises(libraries.Unavailable, match="^--ops has none of put, put_lat, get"):
        libraries.GPU_LIBRARIES["symmem/symmem_engine"](_opts(ops="get_lat,call_cost"))


def test_by_default_the_engine_plain_symmem_gets_is_left_to_it(monkeypatch):
    """symmem (auto) runs on one of the engines: its library would measure
    the same again; named in --libs it runs all the same."""
    monkeypatch.setattr(
        engine_preview, "ask", lambda pes, env: dict(engine="nvshmem", why="auto: a GPU each")
    )
    with pytest.raises(libraries.Unavailable) as why:
        libraries.GPU_LIBRARIES["symmem/nvshmem_engine"](_opts(ops="put", libs=None))
    assert str(why.value) == (
        "symmem runs on the nvshmem engine here (auto: a GPU each), and the report takes its "
        "rows for this engine's (--libs symmem/nvshmem_engine runs it too)"
    )
    named = _opts(ops="put", libs="symmem,symmem/nvshmem_engine")
    assert libraries.GPU_LIBRARIES["symmem/nvshmem_engine"](named).ops == "put"


def test_the_preview_asks_symmem_as_pe_0_of_a_job_of_n_pes(monkeypatch):
    """One process per question, remembered: symmem.run's variables for
    the job, the library's environment, no launcher of its own."""
    monkeypatch.setattr(engine_preview, "_answers", {})
    monkeypatch.setenv("SYMMEM_LAUNCHER", "1:2")
    monkeypatch.setenv("SYMMEM_JOB_SECRET", "theirs")
    calls = []

    def fake_run(command, **kw):
        calls.append(kw["env"])
        return SimpleNamespace(stdout='noise\n{"engine": "symmem", "why": "auto: x"}\n')

    monkeypatch.setattr(engine_preview.subprocess, "run", fake_run)
    for _ in range(2):
        answer = engine_preview.ask(4, {"SYMMEM_GPU_ENGINE": "symmem"})
    assert answer == {"engine": "symmem", "why": "auto: x"} and len(calls) == 1
    env = calls[0]
    assert (env["SYMMEM_NRANKS"], env["SYMMEM_RANK"], env["SYMMEM_LOCAL_RANK"]) == ("4", "0", "0")
    assert env["SYMMEM_GPU_ENGINE"] == "symmem" and env["SYMMEM_BACKEND"] == "gpu"
    assert env["SYMMEM_JOB"] and "SYMMEM_LAUNCHER" not in env
    assert "SYMMEM_JOB_SECRET" not in env


def test_the_preview_gets_symmems_own_answer():
    """For real: symmem's answer for this machine, an engine or the reason
    the gpu backend cannot run (here, without a GPU, no CUDA driver)."""
    engine_preview._answers.clear()
    answer = engine_preview.ask(2, {"SYMMEM_GPU_ENGINE": "nvshmem"})
    assert answer.get("engine") in ("nvshmem",) or answer.get("refused"), answer
    assert "cannot run here" not in answer.get("refused", "")  # symmem's prefix is cut


@pytest.mark.parametrize(
    "pes, gpus, expect", [(2, 1, ("0", "0")), (4, 2, ("0", "1")), (1, 2, ("0", "0"))]
)
def test_the_memcpy_reference_copies_between_pe_0s_gpu_and_pe_1s(pes, gpus, expect, monkeypatch):
    seen = []
    monkeypatch.setattr(engine_libraries, "missing", lambda module: False)
    monkeypatch.setattr(engine_libraries, "gpu_count", lambda: gpus)
    monkeypatch.setattr(
        engine_libraries, "stream_records", lambda c, env, log: iter(seen.append(c) or [])
    )
    run = libraries.GPU_LIBRARIES["cudaMemcpyAsync"](
        _opts(ops="put,put_lat,get,reduce", pes=pes, iters=7)
    )
    assert run.ops == "put,get"
    list(run(None))
    ((command,),) = [seen]
    assert command[1:3] == ["-m", "symmem.bench.memcpy_reference"]  # one process
    assert (command[command.index("--pe0-gpu") + 1], command[command.index("--pe1-gpu") + 1]) == (
        expect
    )
    assert command[command.index("--ops") + 1] == "put,get"
    assert command[command.index("--iters") + 1] == "7"


def test_the_memcpy_reference_says_why_it_cannot_run(monkeypatch):
    monkeypatch.setattr(engine_libraries, "missing", lambda module: module == "cupy")
    with pytest.raises(libraries.Unavailable, match=r"^cupy is not installed"):
        libraries.GPU_LIBRARIES["cudaMemcpyAsync"](_opts(ops="put"))
    monkeypatch.setattr(engine_libraries, "missing", lambda module: False)
    monkeypatch.setattr(engine_libraries, "gpu_count", lambda: 0)
    with pytest.raises(libraries.Unavailable, match=r"^no GPU found here"):
        libraries.GPU_LIBRARIES["cudaMemcpyAsync"](_opts(ops="put"))
    with pytest.raises(libraries.Unavailable, match=r"^--ops has none of put, get"):
        libraries.GPU_LIBRARIES["cudaMemcpyAsync"](_opts(ops="reduce"))


def test_a_launch_where_a_pe_printed_no_init_time_is_an_error():
    found = [dict(op="init_first", pe=0, init_s=0.1, finalize_s=0.0)]
    with pytest.raises(RuntimeError, match="^init_worker: PE 1 printed no init_first time$"):
        symmem_runs.slowest_pe(found, "init_first", 2)


def test_init_and_finalize_run_for_real_in_fresh_jobs(tmp_path):
    """The init operations on the cpu backend: three launches of two PEs,
    each PE's times; the report's init table, in ms."""
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "symmem.bench", "--backend", "cpu", "-n", "2", "--ops", "init"]
        + ["--libs", "symmem", "--no-plots", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    records = json.loads((out / "results.json").read_text())["records"]
    timed = {r["op"]: r for r in records if r["op"] in plan.INIT_OPS}
    assert set(timed) == set(plan.INIT_OPS)
    for r in timed.values():
        assert len(r["launches_us"]) == plan.INIT_LAUNCHES and r["us"] in r["launches_us"]
        assert r["init_us"] > 0 and r["finalize_us"] > 0
        assert r["us"] == pytest.approx(r["init_us"] + r["finalize_us"])
    assert "== init (2 PEs): symmem.init() + finalize()" in result.stdout
    line = next(x for x in result.stdout.splitlines() if x.startswith("  symmem "))
    assert f"{timed['init_first']['us'] / 1e3:.1f} (" in line
    assert "== init_first" not in result.stdout  # its table is the init table, in ms


def _put(lib, size, us, **extra):
    return dict(lib=lib, op="put", bytes=size, us=us, round=1, **extra)


def test_the_ratio_column_and_the_engines_table_set_symmem_beside_the_copy_and_nvshmem():
    """cudaMemcpyAsync's time over symmem's is symmem's bandwidth as a
    fraction of the copy's; plain symmem stands for the engine it ran on."""
    mib = 1 << 20
    records = [
        dict(lib="symmem", op="init", seconds=0.3, engine="symmem", round=1),
        dict(lib="symmem/nvshmem_engine", op="init", seconds=1.0, engine="nvshmem", round=1),
        _put("symmem", mib, 10.0),
        _put("cudaMemcpyAsync", mib, 9.0),
        _put("symmem/nvshmem_engine", mib, 12.0),
        dict(lib="symmem", op="init_first", bytes=0, us=2e5, init_us=1.9e5, finalize_us=1e4,
             engine="symmem", round=1),
        dict(lib="symmem/nvshmem_engine", op="init_first", bytes=0, us=3e6, init_us=2.9e6,
             finalize_us=1e5, engine="nvshmem", round=1),
    ]  # fmt: skip
    rows = report.rows(records, 2)
    copy = next(r for r in rows if r["lib"] == "cudaMemcpyAsync")
    assert copy["symmem_speedup"] == pytest.approx(0.9)
    text = report.text_tables(records, 2)
    assert "cudaMemcpyAsync" in text and "0.90x" in text
    assert engine_report.standing_for(records) == {
        "symmem": ["symmem"],
        "nvshmem": ["symmem/nvshmem_engine"],
    }
    header, _, lines = engine_report.engines_table(rows, records)
    assert lines == [["put", "1M", "10.00", "12.00", "9.00", "104.86", "1.20x", "0.90x"]]
    assert header[-2:] == ["nvshmem / symmem", "memcpy / symmem"]
    _, _, init_lines = engine_report.init_table(records)
    assert init_lines == [
        ["symmem", "symmem", "200.0 (190.0 + 10.0)", "-", ""],
        ["symmem/nvshmem_engine", "nvshmem", "3000.0 (2900.0 + 100.0)", "-", "15.00x"],
    ]
    assert "symmem: the symmem engine" in text
    assert "symmem/nvshmem_engine: the nvshmem engine" in text
    md = report.markdown(records, 2)
    assert "| put | 1M | 10.00 | 12.00 | 9.00 | 104.86 | 1.20x | 0.90x |" in md
    assert "- symmem: the symmem engine" in md


def test_the_engine_librarys_rows_stand_for_its_engine_before_plain_symmems():
    """Where both have a row, the engine's own library's; where it has none
    (a size or op it did not run), plain symmem's, which ran on that engine."""
    records = [
        dict(lib="symmem", op="init", seconds=0.3, engine="nvshmem", round=1),
        _put("symmem", 8, 2.0),
        _put("symmem", 32, 4.0),
        _put("symmem/symmem_engine", 8, 1.0),
        _put("symmem/nvshmem_engine", 8, 3.0),
    ]
    assert engine_report.standing_for(records) == {
        "symmem": ["symmem/symmem_engine"],
        "nvshmem": ["symmem/nvshmem_engine", "symmem"],
    }
    _, title, lines = engine_report.engines_table(report.rows(records, 2), records)
    assert lines == [
        ["put", "8", "1.00", "3.00", "-", "0.01", "3.00x", ""],
        ["put", "32", "-", "4.00", "-", "", "", ""],
    ]
    assert "symmem/symmem_engine as the symmem engine" in title
    assert "symmem/nvshmem_engine (else symmem's, which ran on it) as the nvshmem" in title
    assert engine_report.engines_table(report.rows(records[:2], 2), records[:2]) is None


def test_libraries_without_symmems_init_or_atomic_leave_them_out():
    """NVSHMEM's own libraries and symmem njit measure the rest of --ops;
    with nothing else left they are left out, saying so."""
    opts = _opts(ops="put,atomic,init_first,init_again,reduce")
    assert libraries.nvshmem_ops(opts) == "put,reduce"
    with pytest.raises(libraries.Unavailable, match="^--ops has only operations NVSHMEM's"):
        libraries.nvshmem_ops(_opts(ops="atomic,init_first"))
    with pytest.raises(libraries.Unavailable, match=r"^--ops has only operations it does not"):
        libraries.njit_runner(_opts(ops="init_first,init_again", backend="cpu"))
