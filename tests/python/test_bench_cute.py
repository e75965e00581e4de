"""python -m symmem.bench's CuTe DSL group (plan.CUTE_OPS, "--ops cute") on a
machine without GPUs: the operations and their sizes, the two libraries
("symmem cute", "nvshmem cute") left out saying why where they cannot run,
the command they run where they can, the table that sets the engines side
by side, and, where the DSL is installed, the kernels (bench/cute_kernels.py)
compiled for sm_90a on symmem's engine (and on NVSHMEM's where
SYMMEM_TEST_NVSHMEM_BITCODE names its bitcode). The kernels run on GPUs
only: docs/benchmarks.md has the command."""

import importlib.util
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from symmem.bench import engine_preview, libraries, plan, report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUTE = ",".join(plan.CUTE_OPS)
LIBS = ("symmem cute", "nvshmem cute")
DSL_MISSING = "nvidia-cutlass-dsl is not installed (pip install 'symmem[cute]')"


def _parse(*argv):
    from symmem.bench.__main__ import parse_args

    return parse_args(list(argv))


def _opts(**kw):
    """What a runner reads of the command line."""
    base = dict(ops="", device_ops=CUTE, min_bytes=8, max_bytes=1 << 20, graph=False, pes=2)
    return SimpleNamespace(**{**base, "timeout": 30, **kw})


def test_the_cute_group_names_every_cute_operation():
    assert plan.OP_GROUPS["cute"] == tuple(plan.CUTE_OPS)
    assert set(plan.CUTE_OPS) <= set(plan.DEVICE_OPS) and set(plan.CUTE_OPS) <= set(plan.ALL_OPS)
    opts = _parse("--backend", "gpu", "-n", "2", "--ops", "cute")
    assert (opts.ops, opts.device_ops) == ("", CUTE)
    assert libraries.device_ops("symmem cute", opts) == CUTE
    assert libraries.device_ops("nvshmem cute", opts) == CUTE
    assert libraries.device_ops("symmem triton", opts) == ""
    # mixed with other groups, the cute libraries get only theirs
    opts = _parse("--backend", "gpu", "-n", "2", "--ops", "triton_put,cute_put_signal")
    assert libraries.device_ops("nvshmem cute", opts) == "cute_put_signal"
    assert libraries.device_ops("nvshmem triton", opts) == "triton_put"
    # the default gpu run at 2 PEs has them too
    assert set(CUTE.split(",")) <= set(_parse("--backend", "gpu", "-n", "2").device_ops.split(","))


def test_cute_sizes_are_the_device_sweep_and_8_bytes_for_latency():
    for op in ("cute_put", "cute_put_grid", "cute_get", "cute_get_grid"):
        assert plan.sizes(op, 8, 1 << 30, 2) == [1 << s for s in range(10, 27, 2)], op
        assert plan.sizes(op, 8, 1 << 20, 2) == [1 << s for s in range(10, 21, 2)], op
        assert op in report.BANDWIDTH_OPS
    for op in ("cute_put_lat", "cute_get_lat", "cute_put_signal"):
        assert plan.sizes(op, 8, 1 << 30, 2) == [8], op


def test_cute_operations_need_the_gpu_backend_and_two_pes(capsys):
    for argv, why in (
        (("--backend", "cpu", "--ops", "cute"), "device operations run on the gpu backend"),
        (("--backend", "gpu", "-n", "1", "--ops", "cute_put"), "device operations need 2 PEs"),
    ):
        with pytest.raises(SystemExit):
            _parse(*argv)
        assert why in capsys.readouterr().err


@pytest.mark.parametrize("engine", ["symmem", "nvshmem"])
def test_without_the_dsl_a_cute_library_is_left_out_naming_the_extra(engine, monkeypatch):
    monkeypatch.setitem(sys.modules, "cutlass", None)  # as where it is not installed
    with pytest.raises(libraries.Unavailable) as why:
        libraries.GPU_LIBRARIES[f"{engine} cute"](_opts())
    assert str(why.value) == DSL_MISSING


def test_nvshmem_cute_needs_a_gpu_a_pe_and_symmem_cute_a_gpu(monkeypatch):
    """NVSHMEM's engine takes a GPU a PE; symmem's PEs may share one, but
    not run on none (the DSL compiles without one: the run would fail at
    launch)."""
    monkeypatch.setattr(libraries, "_missing", lambda module: False)
    monkeypatch.setattr(libraries, "gpu_count", lambda: 1)
    with pytest.raises(libraries.Unavailable) as why:
        libraries.GPU_LIBRARIES["nvshmem cute"](_opts())
    assert str(why.value) == "2 PEs need a GPU each; 1 found here"
    monkeypatch.setattr(libraries, "gpu_count", lambda: 0)
    with pytest.raises(libraries.Unavailable) as why:
        libraries.GPU_LIBRARIES["symmem cute"](_opts())
    assert str(why.value) == "no GPU found here"


def test_without_its_engines_bitcode_a_cute_library_is_left_out(monkeypatch):
    import symmem._device_host as host

    monkeypatch.setattr(libraries, "_missing", lambda module: False)
    monkeypatch.setattr(libraries, "gpu_count", lambda: 2)
    exists = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda p: not p.endswith("device.bc") and exists(p))
    with pytest.raises(libraries.Unavailable, match=r"^no .*device\.bc: symmem's device library"):
        libraries.GPU_LIBRARIES["symmem cute"](_opts())

    def no_bitcode():
        raise RuntimeError("libnvshmem_device.bc was not found")

    monkeypatch.setattr(host, "find_device_bitcode_library", no_bitcode)
    with pytest.raises(libraries.Unavailable) as why:
        libraries.GPU_LIBRARIES["nvshmem cute"](_opts())
    assert str(why.value) == "no NVSHMEM device bitcode: libnvshmem_device.bc was not found"


@pytest.mark.parametrize("engine", ["symmem", "nvshmem"])
def test_a_cute_library_runs_the_cute_worker_on_its_engine(engine, monkeypatch):
    """Where it can run: device_cute.py under the launcher on every PE, with
    SYMMEM_CUTE_ENGINE=engine and only the cute operations of --ops."""
    import symmem._device_host as host

    seen = []
    monkeypatch.setattr(libraries, "_missing", lambda module: False)
    monkeypatch.setattr(libraries, "gpu_count", lambda: 2)
    monkeypatch.setattr(os.path, "exists", lambda p: True)
    monkeypatch.setattr(host, "find_device_bitcode_library", lambda: "/x/libnvshmem_device.bc")
    monkeypatch.setattr(
        engine_preview, "ask", lambda pes, env: dict(engine="nvshmem", why="auto: a GPU each")
    )
    monkeypatch.setattr(
        libraries,
        "stream_records",
        lambda command, env, log: iter(seen.append((command, env)) or []),
    )
    run = libraries.GPU_LIBRARIES[f"{engine} cute"](
        _opts(device_ops="triton_put,cute_put,cute_put_signal")
    )
    assert run.ops == "cute_put,cute_put_signal"
    list(run(None))
    ((command, env),) = seen
    assert env["SYMMEM_CUTE_ENGINE"] == engine
    assert command[command.index("-n") + 1] == "2"
    assert command[command.index("-m", command.index("symmem.run") + 1) + 1] == (
        "symmem.bench.device_cute"
    )
    assert command[command.index("--ops") + 1] == "cute_put,cute_put_signal"


def test_the_bench_command_without_the_dsl_says_why_it_leaves_cute_out(tmp_path):
    """The whole command, with the DSL hidden (as on a machine without it):
    both libraries left out with the reason, nothing measured."""
    argv = ["--backend", "gpu", "-n", "2", "--ops", "cute", "--rounds", "1", "--no-plots"]
    code = (
        "import sys; sys.modules['cutlass'] = None\n"
        "from symmem.bench.__main__ import main\n"
        f"sys.exit(main({argv + ['--out', str(tmp_path / 'out')]!r}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=240
    )
    assert "libraries: none" in result.stdout, result.stdout + result.stderr
    for lib in LIBS:
        assert f"left out {lib}: {DSL_MISSING}" in result.stdout, result.stdout
    assert result.returncode == 1  # nothing measured


def test_each_cute_library_runs_here_or_is_left_out_with_a_reason():
    from symmem.bench.__main__ import choose_libraries

    opts = _parse("--backend", "gpu", "-n", "2", "--ops", "cute", "--libs", ",".join(LIBS))
    chosen, skipped = choose_libraries(opts)
    names = [name for name, _ in chosen]
    for lib in LIBS:
        assert (lib in names) != bool(skipped.get(lib)), (lib, skipped)


def test_the_cute_table_sets_the_engines_side_by_side_with_nvshmems_time_over_symmems():
    records = [
        dict(lib="symmem cute", op="cute_put", bytes=1 << 20, us=20.0, round=1),
        dict(lib="nvshmem cute", op="cute_put", bytes=1 << 20, us=19.0, round=1),
        dict(lib="symmem cute", op="cute_put_signal", bytes=8, us=2.0, round=1),
        dict(lib="nvshmem cute", op="cute_put_signal", bytes=8, us=2.1, round=1),
        dict(lib="symmem triton", op="triton_put", bytes=1 << 20, us=20.0, round=1),
    ]
    lines = report.text_tables(records, 2).splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("== cute (2 PEs): "))
    assert "0.95x or more" in lines[title]  # the goal, beside the ratio it reads
    assert lines[title + 1].split() == [
        "operation",
        "size",
        "symmem",
        "cute",
        "us",
        "nvshmem",
        "cute",
        "us",
        "symmem",
        "cute",
        "GB/s",
        "nvshmem",
        "/",
        "symmem",
    ]
    # symmem's engine's bandwidth; NVSHMEM's time over symmem's: 0.95x is 5% slower
    assert lines[title + 2].split() == ["cute_put", "1M", "20.000", "19.000", "52.43", "0.95x"]
    assert lines[title + 3].split() == ["cute_put_signal", "8", "2.000", "2.100", "1.05x"]
    assert len(lines) > title + 4 and not lines[title + 4].startswith("cute_")
    # the Triton kernels keep their own table, without the CuTe rows
    triton = next(i for i, line in enumerate(lines) if line.startswith("== triton (2 PEs): "))
    assert lines[triton + 2].split()[:3] == ["triton_put", "1M", "20.000"]
    assert "| cute_put | 1M | 20.000 | 19.000 | 52.43 | 0.95x |" in report.markdown(records, 2)
    rows = {(r["op"], r["lib"]): r for r in report.rows(records, 2)}
    assert rows["cute_put", "symmem cute"]["symmem_speedup"] is None  # the baseline
    assert abs(rows["cute_put", "nvshmem cute"]["symmem_speedup"] - 0.95) < 1e-9


# Compiles every launcher of cute_kernels.py for sm_90a on the engine argv[1]
# names, with no GPU and no init (any state address compiles), as
# cute_compile.py does; argv[2]: NVSHMEM's bitcode.
COMPILE = """
import sys
import cutlass, cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor
import symmem._device_host as host
from symmem.device.cute import _engine
_engine._engine = sys.argv[1]
_engine.state = lambda call: 0x7F0000001000
if len(sys.argv) > 2:
    host.find_device_bitcode_library = lambda *a, **k: sys.argv[2]
from symmem.bench import cute_kernels as K
for kind, (launcher, tensors, ints) in K.LAUNCHERS.items():
    views = [make_fake_compact_tensor(cutlass.Uint8, (1 << 20,), assumed_align=16)] * 2
    views += [make_fake_compact_tensor(cutlass.Uint64, (1,), assumed_align=8)] * (tensors - 2)
    cute.compile(launcher, *views, *[1] * ints, options="--gpu-arch sm_90a")
    print("compiled", kind, flush=True)
"""
needs_cute = pytest.mark.skipif(
    importlib.util.find_spec("cutlass") is None,
    reason="nvidia-cutlass-dsl is not installed (pip install 'symmem[cute]')",
)


def _compile(*args):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a")
    out = subprocess.run(
        [sys.executable, "-c", COMPILE, *args],
        capture_output=True,
        text=True,
        timeout=1200,
        env=env,
        cwd=ROOT,
    )
    return out.returncode, out.stdout + out.stderr


@needs_cute
@pytest.mark.timeout(1300)
def test_the_cute_kernels_compile_on_symmems_engine():
    from symmem.bench import cute_kernels  # noqa: F401  (imports without a GPU)

    if not os.path.exists(os.path.join(ROOT, "python", "symmem", "device", "device.bc")):
        pytest.skip("the package has no device.bc (setup.py builds it where clang is)")
    rc, out = _compile("symmem")
    assert rc == 0, out[-3000:]
    assert out.count("compiled ") == 5, out[-3000:]


@needs_cute
@pytest.mark.timeout(1300)  # the first kernel drops the bitcode's sections: a minute
def test_the_cute_kernels_compile_on_nvshmems_engine():
    bitcode = os.environ.get("SYMMEM_TEST_NVSHMEM_BITCODE")
    if not bitcode:
        pytest.skip("SYMMEM_TEST_NVSHMEM_BITCODE names no NVSHMEM device bitcode")
    rc, out = _compile("nvshmem", bitcode)
    assert rc == 0, out[-3000:]
    assert out.count("compiled ") == 5, out[-3000:]
