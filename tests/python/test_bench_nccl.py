"""python -m symmem.bench's NCCL libraries (nccl_libraries.py) on a machine
without GPUs: the command line each one runs, the labels NCCL's symmetric
kernels get by the kernels that ran (nccl_kernels.py, fed the kernel names
CUPTI records: symmetric, fallen back, both, none), the report's list of
them, the message where nccl4py is missing or NCCL too old, and the one
where there are fewer GPUs than PEs. The workers themselves run on GPUs
only: docs/benchmarks.md has the command."""

import importlib.util
import os
import sys
from types import ModuleType, SimpleNamespace

import pytest

from symmem.bench import libraries, nccl_kernels, nccl_libraries, report

NCCL_LIBS = ("nccl", "nccl symmetric", "torch symm-mem", "torch symm-mem nccl")
EVERY_OP = "put,reduce,reducescatter,broadcast,fcollect,alltoall,barrier"

# Kernel names as torch.profiler's CUPTI trace gives them (demangled).
SYMMETRIC_228 = "ncclSymkDevKernel_AllReduce_AGxLL_R_sum_f32(ncclSymkDevWorkArgs4K)"
SYMMETRIC_227 = "ncclSymDevKernel_AllGather_ST(ncclSymDevArgs)"
REGULAR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
OTHERS = ["Memcpy DtoD (Device -> Device)", "void at::native::vectorized_elementwise_kernel<4>"]


def _opts(**kw):
    """What a runner reads of the command line."""
    base = dict(ops=EVERY_OP, min_bytes=8, max_bytes=64, graph=True, pes=2, timeout=30)
    return SimpleNamespace(**{**base, **kw})


@pytest.fixture
def here(monkeypatch):
    """A machine where every NCCL library can run: torch with NCCL and 2
    GPUs, nccl4py on NCCL 2.28.9, torch's symmetric memory on NCCL; the
    commands the runners start are recorded, not run."""
    started = []
    monkeypatch.setattr(nccl_libraries, "torch_nccl", lambda: (None, 2))
    monkeypatch.setattr(nccl_libraries, "missing", lambda module: False)
    monkeypatch.setattr(nccl_libraries, "nccl4py_version", lambda: (2, 28, 9))
    monkeypatch.setattr(nccl_libraries, "torch_nccl_version", lambda: (2, 28, 9, ""))
    monkeypatch.setattr(nccl_libraries, "torch_has_nccl_backend", lambda: True)

    def record(command, env, log):
        store = command[command.index("--store") + 1]
        assert os.path.isdir(os.path.dirname(store))  # a fresh folder while it runs
        started.append(command)
        return iter([])

    monkeypatch.setattr(nccl_libraries, "stream_records", record)
    return started


@pytest.mark.parametrize(
    "lib, worker, ops, extra",
    [
        ("nccl", "nccl_worker", "reduce,reducescatter,broadcast,fcollect,alltoall", []),
        ("nccl symmetric", "nccl_symm_worker", "reduce,reducescatter,fcollect", []),
        ("torch symm-mem", "torch_symm_worker", "reduce", []),
        (
            "torch symm-mem nccl",
            "torch_symm_worker",
            "reduce,reducescatter,fcollect",
            ["--backend", "NCCL"],
        ),
    ],
)
def test_each_nccl_library_runs_its_worker_under_the_launcher(here, lib, worker, ops, extra):
    run = libraries.GPU_LIBRARIES[lib](_opts())
    assert run.ops == ops  # what the progress display counts
    list(run(None))
    (command,) = here
    store = command[command.index("--store") + 1]
    assert command == [
        sys.executable,
        "-m",
        "symmem.run",
        "-n",
        "2",
        "--no-prefix",
        "--timeout",
        "30",
        "-m",
        f"symmem.bench.{worker}",
        "--ops",
        ops,
        "--min-bytes",
        "8",
        "--max-bytes",
        "64",
        "--graph",
        "--store",
        store,
        *extra,
    ]
    assert os.path.basename(store) == "store" and not os.path.exists(os.path.dirname(store))
    assert importlib.util.find_spec(f"symmem.bench.{worker}") is not None
    with pytest.raises(libraries.Unavailable, match="^--ops has none of "):
        libraries.GPU_LIBRARIES[lib](_opts(ops="put,barrier"))


def test_the_label_says_which_kernels_ran():
    label = nccl_kernels.label
    for symmetric in (SYMMETRIC_228, SYMMETRIC_227):
        assert label("nccl symmetric", [*OTHERS, symmetric]) == "nccl symmetric"
        assert label("nccl symmetric", [symmetric] * 100, graph=True) == "nccl symmetric (graph)"
    assert label("nccl symmetric", [*OTHERS, REGULAR]) == "nccl symmetric (fell back)"
    assert label("nccl symmetric", [REGULAR] * 100, True) == "nccl symmetric (fell back) (graph)"
    assert label("torch symm-mem nccl", [SYMMETRIC_228, REGULAR]) == (
        "torch symm-mem nccl (partly fell back)"
    )
    # no NCCL kernel among them (the profiler failed, or saw torch's side only)
    assert label("nccl symmetric", []) == "nccl symmetric (unchecked)"
    unseen = [*OTHERS, "nccl:all_reduce", "ncclDevKernelArgsStorage"]
    assert label("nccl symmetric", unseen, True) == "nccl symmetric (unchecked) (graph)"
    assert nccl_kernels.nccl_kernels([SYMMETRIC_228, REGULAR, SYMMETRIC_228, *OTHERS]) == (
        ["ncclSymkDevKernel_AllReduce_AGxLL_R_sum_f32"],
        ["ncclDevKernel_AllReduce_Sum_f32_RING_LL"],
    )


class CapturedGraph:
    """What nccl_kernels asks of a torch.cuda.CUDAGraph: a DOT dump of its
    kernel nodes (as cudaGraphDebugDotPrint writes them) once debug mode
    kept it."""

    def __init__(self, kernel):
        self.kernel, self.kept = kernel, False

    def enable_debug_mode(self):
        self.kept = True

    def debug_dump(self, path):
        assert self.kept
        with open(path, "w") as f:
            f.write('digraph dot {\n"graph_0_node_0"[label="KERNEL\\n%s\\n"];\n}\n' % self.kernel)


def test_measure_labels_the_eager_and_the_graph_records_by_what_each_ran(monkeypatch):
    """measure() with the GPU parts stood in for: the profiled first call,
    the data check right after it, the timings, the captured graph's
    kernels (here the profiler reports none of a replay's), the records."""
    done, seen = [], [[SYMMETRIC_228], []]  # the profiler's: eager, then graph
    mangled = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
    timing = ModuleType("symmem.bench.torch_timing")

    def best_of(body, iters, line_up):
        done.append(("time eager", iters, line_up))
        return 5.0

    def best_of_graph(body, iters, line_up, watch):
        watch(lambda: done.append("capture and replay"), CapturedGraph(mangled))
        return 3.0

    def kernels_of(run):
        run()
        return seen.pop(0)

    timing.best_of, timing.best_of_graph = best_of, best_of_graph
    monkeypatch.setitem(sys.modules, "symmem.bench.torch_timing", timing)
    monkeypatch.setattr(nccl_kernels, "kernels_of", kernels_of)
    records = []
    nccl_kernels.measure(
        lambda **r: records.append(r),
        "nccl symmetric",
        "reduce",
        1024,
        lambda: done.append("call"),
        lambda: done.append("check"),
        "line up",
        True,
    )
    assert done == ["call", "check", ("time eager", 200, "line up"), "capture and replay"]
    sym, reg = (
        "ncclSymkDevKernel_AllReduce_AGxLL_R_sum_f32",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    )
    assert records == [
        dict(lib="nccl symmetric", op="reduce", bytes=1024, us=5.0, kernels=[sym]),
        dict(
            lib="nccl symmetric (fell back) (graph)", op="reduce", bytes=1024, us=3.0, kernels=[reg]
        ),
    ]


def test_the_report_compares_the_labels_with_symmem_and_lists_the_kernels():
    sym, reg = (
        "ncclSymkDevKernel_AllReduce_AGxLL_R_sum_f32",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    )
    records = [
        dict(lib="symmem", op="reduce", bytes=8, us=4.0),
        dict(lib="symmem", op="reduce", bytes=32, us=4.0),
        dict(lib="symmem (graph)", op="reduce", bytes=32, us=2.0),
        dict(lib="nccl symmetric", op="reduce", bytes=8, us=8.0, kernels=[sym]),
        dict(lib="nccl symmetric (fell back)", op="reduce", bytes=32, us=6.0, kernels=[reg]),
        dict(
            lib="nccl symmetric (fell back) (graph)", op="reduce", bytes=32, us=3.0, kernels=[reg]
        ),
    ]
    rows = {(r["lib"], r["bytes"]): r for r in report.rows(records, 2)}
    assert rows["nccl symmetric", 8]["symmem_speedup"] == 2.0
    assert rows["nccl symmetric (fell back)", 32]["symmem_speedup"] == 1.5
    assert (
        rows["nccl symmetric (fell back) (graph)", 32]["symmem_speedup"] == 1.5
    )  # vs symmem (graph)
    lines = [
        f"nccl symmetric, reduce 8: {sym}",
        f"nccl symmetric (fell back), reduce 32: {reg}",
        f"nccl symmetric (fell back) (graph), reduce 32: {reg}",
    ]
    assert report.kernel_lines(records) == lines
    text = report.text_tables(records, 2)
    assert "== NCCL kernels (2 PEs)" in text and all(f"  {line}" in text for line in lines)
    assert "**NCCL kernels**" in report.markdown(records, 2)
    runs = [
        dict(lib="x", op="fcollect", bytes=b, us=1.0, kernels=[k])
        for b, k in ((8, sym), (32, sym), (128, reg))
    ]
    assert report.kernel_lines(runs) == [f"x, fcollect 8 to 32: {sym}", f"x, fcollect 128: {reg}"]
    assert "NCCL kernels" not in report.text_tables(records[:3], 2)


def test_a_missing_or_old_nccl4py_is_left_out_saying_what_to_install(here, monkeypatch):
    runner = libraries.GPU_LIBRARIES["nccl symmetric"]
    monkeypatch.setattr(nccl_libraries, "missing", lambda module: module == "nccl.core")
    with pytest.raises(libraries.Unavailable) as why:
        runner(_opts())
    assert str(why.value) == (
        "nccl4py is not installed: NCCL's symmetric kernels are called through it "
        "(pip install 'symmem[bench]', or pip install nccl4py)"
    )
    monkeypatch.setattr(nccl_libraries, "missing", lambda module: False)
    monkeypatch.setattr(nccl_libraries, "nccl4py_version", lambda: (2, 26, 5))
    with pytest.raises(libraries.Unavailable) as why:
        runner(_opts())
    assert str(why.value) == (
        "nccl4py loads NCCL 2.26.5: its symmetric kernels need NCCL 2.27 or later "
        "(pip install -U nvidia-nccl-cu13, or -cu12)"
    )
    runner = libraries.GPU_LIBRARIES["torch symm-mem nccl"]
    monkeypatch.setattr(nccl_libraries, "torch_nccl_version", lambda: (2, 26, 2))
    with pytest.raises(libraries.Unavailable, match=r"^torch runs NCCL 2\.26\.2: its symmetric"):
        runner(_opts())
    monkeypatch.setattr(nccl_libraries, "torch_has_nccl_backend", lambda: False)
    with pytest.raises(libraries.Unavailable, match="cannot put its symmetric memory on NCCL"):
        runner(_opts())
    assert here == []  # nothing started
    assert [nccl_libraries.as_version(v) for v in (22703, "2.27.3+cuda12.9", (2, 28, 9, "x"))] == [
        (2, 27, 3),
        (2, 27, 3),
        (2, 28, 9),
    ]


def test_with_fewer_gpus_than_pes_the_nccl_libraries_are_left_out_saying_why(
    here, monkeypatch, tmp_path, capsys
):
    from symmem.bench.__main__ import main

    monkeypatch.setattr(nccl_libraries, "torch_nccl", lambda: (None, 1))
    code = main(
        ["--backend", "gpu", "-n", "2", "--ops", "reduce", "--libs", ",".join(NCCL_LIBS)]
        + ["--out", str(tmp_path), "--no-plots", "--quiet"]
    )
    out = capsys.readouterr().out
    assert code == 1 and "libraries: none" in out, out  # nothing measured, nothing started
    for lib in NCCL_LIBS:
        assert (
            f"left out {lib}: NCCL needs a GPU per rank: -n 2 needs 2 GPUs, 1 here "
            "(symmem's PEs may share a GPU, NCCL's ranks may not)" in out
        ), out
    assert here == []


def test_without_torch_the_nccl_libraries_say_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails, as where it is missing
    for lib in NCCL_LIBS:
        with pytest.raises(
            libraries.Unavailable, match=r"^torch is not installed \(pip install torch\)$"
        ):
            libraries.GPU_LIBRARIES[lib](_opts())
