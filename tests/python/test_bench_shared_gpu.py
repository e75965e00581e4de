"""python -m symmem.bench with more PEs than GPUs, without a GPU (the GPU
count and symmem's engine answers stood in): --backend gpu runs symmem's
libraries with the PEs sharing the GPU and leaves out, saying why, the
libraries that need a GPU a PE; --backend auto keeps the cpu backend and
says how to run them on the GPU; every table heading and the summary say
that the PEs time-shared the GPU (or shared it under CUDA MPS, found by
its control socket) and that the numbers are no speed claim; --iters."""

import json
import os
import socket
import subprocess
import sys

import pytest

from bench_options import _parse
from symmem.bench import engine_libraries, engine_preview, gpu_sharing, libraries, plan, report


@pytest.fixture
def one_gpu_host(monkeypatch, tmp_path):
    """This machine as a host of one GPU, without an MPS daemon, where
    symmem's engine for PEs sharing the GPU is its own and NVSHMEM's refuses."""
    monkeypatch.setattr(libraries, "gpu_count", lambda: 1)
    monkeypatch.setattr(engine_libraries, "gpu_count", lambda: 1)
    monkeypatch.setattr(engine_libraries, "missing", lambda module: False)
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", str(tmp_path / "no-mps"))

    def ask(pes, env):
        if env.get("SYMMEM_GPU_ENGINE") == "nvshmem" or "SYMMEM_GPU_COLLECTIVES" in env:
            return dict(refused=f"{pes} PEs on this host but only 1 GPUs")
        return dict(engine="symmem", why="auto: PEs share a GPU")

    monkeypatch.setattr(engine_preview, "ask", ask)


def test_gpu_with_more_pes_than_gpus_runs_symmems_libraries_on_the_shared_gpu(one_gpu_host):
    from symmem.bench.__main__ import choose_libraries

    opts = _parse("--backend", "gpu", "-n", "4")
    assert opts.sharing == dict(
        pes=4, gpus=1, most=4, mps=False, mps_words=opts.sharing["mps_words"]
    )
    # no device operations by default: each kernel waits on peers 10,000 times
    assert opts.device_ops == ""
    assert opts.ops == ",".join([*plan.OPS, *plan.ATOMIC_OPS, *plan.INIT_OPS])
    chosen, skipped = choose_libraries(opts)
    names = [name for name, _ in chosen]
    for lib in ("symmem", "cudaMemcpyAsync", "symmem/one_shot"):
        assert lib in names, (lib, skipped)
    # plain symmem runs on the symmem engine: it stands for it
    assert skipped["symmem/symmem_engine"].startswith("symmem runs on the symmem engine here")
    assert skipped["symmem/nvshmem_engine"] == "4 PEs on this host but only 1 GPUs"
    assert skipped["symmem/nvshmem"] == "4 PEs on this host but only 1 GPUs"
    assert skipped["nvshmem C"] == (
        "NVSHMEM takes a GPU a PE: -n 4 needs 4 GPUs, 1 here "
        "(symmem's PEs share them, on its symmem engine)"
    )
    for lib in ("nccl", "nccl symmetric", "torch symm-mem", "nvshmem4py"):
        assert lib in skipped, lib  # each with its reason (torch, NCCL, NVSHMEM4Py)
    # the device operations, where asked for, run on symmem's engine but not NVSHMEM's
    opts = _parse("--backend", "gpu", "-n", "4", "--ops", "device_put", "--libs", "nvshmem device")
    assert choose_libraries(opts)[1]["nvshmem device"].startswith("NVSHMEM takes a GPU a PE")


def test_auto_keeps_the_cpu_backend_and_says_how_to_share_the_gpu(one_gpu_host):
    opts = _parse("-n", "4")
    assert (opts.backend, opts.sharing) == ("cpu", None)
    assert "--backend gpu runs the PEs sharing the GPU(s)" in opts.backend_why
    assert "not a speed claim" in opts.backend_why
    opts = _parse("-n", "1")  # a GPU for every PE
    assert (opts.backend, opts.sharing, opts.backend_why) == ("gpu", None, "")


def _serve(path):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    return server


def test_mps_is_found_by_its_control_socket_answering(tmp_path):
    env = {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path)}
    runs, words = gpu_sharing.mps_daemon(env)
    assert not runs and words == f"no CUDA MPS control daemon: {tmp_path}/control does not exist"
    with _serve(tmp_path / "control"):
        runs, words = gpu_sharing.mps_daemon(env)
        assert runs and words == f"a CUDA MPS control daemon answers on {tmp_path}/control"
    # the socket file a daemon left behind: nobody answers
    runs, words = gpu_sharing.mps_daemon(env)
    assert not runs and words.startswith(f"no CUDA MPS control daemon answers on {tmp_path}/")


def test_an_older_drivers_named_pipe_counts_where_its_daemon_runs(tmp_path):
    os.mkfifo(tmp_path / "control")
    proc = tmp_path / "proc"
    (proc / "17").mkdir(parents=True)
    (proc / "17" / "comm").write_text("python3\n")
    env = {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path)}
    assert gpu_sharing.mps_daemon(env, proc=str(proc)) == (
        False,
        f"{tmp_path}/control is there, but no nvidia-cuda-mps-control process runs",
    )
    (proc / "18").mkdir()
    (proc / "18" / "comm").write_text("nvidia-cuda-mps\n")  # the kernel keeps 15 characters
    runs, words = gpu_sharing.mps_daemon(env, proc=str(proc))
    assert runs and words == f"{tmp_path}/control is there and nvidia-cuda-mps-control runs"


def test_the_sharing_words_name_pes_gpus_and_mps(tmp_path):
    env = {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path)}
    assert gpu_sharing.sharing(2, 2, env) is None and gpu_sharing.sharing(2, 0, env) is None
    share = gpu_sharing.sharing(4, 1, env)
    assert gpu_sharing.heading(4, share) == "4 PEs time-sharing 1 GPU: not a speed claim"
    note = gpu_sharing.note(share)
    assert note.startswith("4 PEs shared 1 GPU (PE i on GPU i % 1), without CUDA MPS (no CUDA")
    assert "they are not a speed claim" in note
    uneven = gpu_sharing.sharing(3, 2, env)
    assert gpu_sharing.heading(3, uneven) == (
        "3 PEs time-sharing 2 GPUs (up to 2 a GPU): not a speed claim"
    )
    with _serve(tmp_path / "control"):
        mps = gpu_sharing.sharing(8, 1, env)
    assert gpu_sharing.heading(8, mps) == "8 PEs sharing 1 GPU under CUDA MPS: not a speed claim"
    assert "under CUDA MPS (a CUDA MPS control daemon answers on" in gpu_sharing.note(mps)
    assert gpu_sharing.heading(2, None) == "2 PEs"


RECORDS = [
    dict(lib="symmem", op="init", seconds=0.3, engine="symmem", round=1),
    dict(lib="symmem", op="reduce", bytes=16, us=4500.0, round=1),
    dict(lib="symmem/symmem_engine", op="reduce", bytes=16, us=4400.0, round=1),
    dict(lib="symmem", op="put", bytes=1 << 20, us=10.0, round=1),
    dict(lib="cudaMemcpyAsync", op="put", bytes=1 << 20, us=9.5, round=1),
]
SHARE = dict(pes=4, gpus=1, most=4, mps=False, mps_words="no CUDA MPS control daemon: x")


def test_every_heading_and_the_summary_say_the_pes_time_shared_the_gpu():
    text = report.text_tables(RECORDS, 4, SHARE)
    headings = [line for line in text.splitlines() if line.startswith("== ")]
    assert len(headings) >= 4  # put, reduce, engines, summary
    for line in headings:
        if line.startswith("== which engine:"):  # a list of names, no numbers
            continue
        assert "(4 PEs time-sharing 1 GPU: not a speed claim)" in line, line
    assert headings[-1].startswith("== summary (4 PEs time-sharing 1 GPU: not a speed claim)")
    assert text.splitlines()[-1] == gpu_sharing.note(SHARE)  # last, under the summary
    md = report.markdown(RECORDS, 4, sharing=SHARE)
    assert md.startswith(
        "**4 PEs time-sharing 1 GPU: not a speed claim**: 4 PEs shared 1 GPU (PE i on GPU i % 1)"
    )
    assert md.index("not a speed claim") < md.index("**summary**")
    assert "not a speed claim" not in report.text_tables(RECORDS, 4)


def test_a_saved_run_keeps_its_sharing_in_the_report(tmp_path):
    meta = dict(
        command="python -m symmem.bench --backend gpu -n 4",
        date="2026-12-07T10:00:00",
        machine="host, 1 x H100",
        backend="gpu",
        n_pes=4,
        rounds=1,
        skipped={"nvshmem C": "NVSHMEM takes a GPU a PE"},
        sharing=SHARE,
    )
    saved = tmp_path / "results.json"
    saved.write_text(json.dumps(dict(meta=meta, records=RECORDS)))
    out = tmp_path / "again"
    result = subprocess.run(
        [sys.executable, "-m", "symmem.bench", "--load", str(saved), "--out", str(out)]
        + ["--no-plots"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "== reduce: sum of float32 over every PE (all-reduce) (4 PEs time-sharing 1 GPU" in (
        result.stdout
    )
    assert gpu_sharing.note(SHARE) in result.stdout
    first = (out / "report.md").read_text().splitlines()[0]
    assert "gpu backend, 4 PEs time-sharing 1 GPU: not a speed claim, 1 round(s)" in first


def test_iters_sets_every_timed_runs_calls(capsys):
    from symmem.bench.launching import sweep_args

    assert plan.iterations(8) == 200 and plan.iterations(8, 7) == 7
    assert plan.iterations(1 << 30, 7) == 7
    opts = _parse("--backend", "cpu", "--iters", "7")
    assert sweep_args(opts)[-2:] == ["--iters", "7"]
    assert plan.sweep_parser().parse_args(sweep_args(opts)).iters == 7
    assert "--iters" not in sweep_args(_parse("--backend", "cpu"))
    with pytest.raises(SystemExit):
        _parse("--iters", "0")
    assert "--iters: need at least 1, got 0" in capsys.readouterr().err
