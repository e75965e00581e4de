"""The libraries of the bench's gpu comparison, without a GPU: the ones that
cannot run say why; NVSHMEM's C programs (package data: check_package.sh
finds them in an installed package) are built once (a stand-in nvcc here)
and are left out, saying why, where they cannot be built; symmem's
collectives modes run the worker under their mode."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from symmem.bench import plan

REPO = Path(__file__).resolve().parents[2]


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

    from symmem.bench import engine_preview, libraries, symmem_runs

    seen, asked = [], []
    monkeypatch.setattr(
        symmem_runs,
        "stream_records",
        lambda command, env, log: iter(seen.append((command, env)) or []),
    )
    monkeypatch.setattr(
        engine_preview,
        "ask",
        lambda pes, env: asked.append((pes, env)) or dict(engine="nvshmem", why="auto"),
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
    # NVSHMEM's collectives run on its engine only: symmem is asked whether the PEs get it
    assert asked == ([(2, {"SYMMEM_GPU_COLLECTIVES": "nvshmem"})] if mode == "nvshmem" else [])
    with pytest.raises(libraries.Unavailable, match="--ops has none of"):
        libraries.GPU_LIBRARIES[f"symmem/{mode}"](SimpleNamespace(ops="put"))
