"""The own collective kernels under stress on one GPU (tests/gpu/kernel_stress.cu):
2 to 8 PEs played by streams of one process, thousands of random collectives
of every kernel, each PE's result checked bit for bit against the one order
of docs/reproducibility.md, with values whose bits depend on the order (the
run counts the elements another order would change, which must be some).
Needs nvcc and one GPU, no NVSHMEM:
it runs where the multi-GPU tests cannot (a machine with one GPU) and finds
protocol races that one run of a collective seldom shows.
SYMMEM_STRESS_ITERATIONS sets the collectives of a run (default 3000)."""

import os
import re
import shutil
import subprocess

import pytest

from gpu_jobs import ROOT

NVCC = shutil.which("nvcc") or (
    "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None
)


def _has_gpu():
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    result = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return result.returncode == 0 and "GPU" in result.stdout


pytestmark = pytest.mark.skipif(
    NVCC is None or not _has_gpu(), reason="needs nvcc and an NVIDIA GPU"
)

# (dtype code of symmem/vocabulary.h, op code, name): 4-, 2-, 1- and 8-byte
# elements, so the one-phase reduce's 8-byte chunks hold 2, 4, 8 and 1 of them;
# both 16-bit floats (accumulated in float32, rounded once); min (NaN, -0)
VARIANTS = [
    (11, 0, "float32-sum"),
    (10, 0, "bfloat16-sum"),
    (9, 0, "float16-sum"),
    (11, 1, "float32-min"),
    (1, 2, "int8-max"),
    (4, 0, "int64-sum"),
    (12, 0, "float64-sum"),
]
ORDER_SHOWS = re.compile(r"order shows in (\d+) elements, rounding at every step in (\d+)")


def order_showed(variant, n, stdout):
    """A float sum at 3 PEs or more had elements whose bits another order
    changes (for the 16-bit floats, rounding at every step too)."""
    found = ORDER_SHOWS.search(stdout)
    assert found, stdout
    if n >= 3 and variant.endswith("-sum") and variant.startswith(("float", "bfloat")):
        assert int(found.group(1)) > 0, f"no element showed the order: a weak test\n{stdout}"
        if variant in ("float16-sum", "bfloat16-sum"):
            assert int(found.group(2)) > 0, f"no element showed the rounding\n{stdout}"


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    out = tmp_path_factory.mktemp("kernel_stress")
    procs = {}
    for dtype, op, name in VARIANTS:
        exe = out / name
        procs[name] = (
            exe,
            subprocess.Popen(
                [
                    NVCC,
                    "-std=c++17",
                    "-arch=sm_90",
                    f"-DSYMMEM_REDUCE_DTYPE={dtype}",
                    f"-DSYMMEM_REDUCE_OP={op}",
                    "-I",
                    str(ROOT / "include"),
                    "-I",
                    str(ROOT / "src/backends/gpu/kernels"),
                    "-o",
                    str(exe),
                    str(ROOT / "tests/gpu/kernel_stress.cu"),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ),
        )
    built = {}
    for name, (exe, proc) in procs.items():
        log = proc.communicate(timeout=300)[0]
        assert proc.returncode == 0, f"{name}: nvcc failed:\n{log}"
        built[name] = exe
    return built


@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("variant", [v[2] for v in VARIANTS])
def test_own_kernels_give_every_pe_the_right_result_under_stress(binaries, variant, n):
    iterations = os.environ.get("SYMMEM_STRESS_ITERATIONS", "3000")
    seed = str(1000 * n + [v[2] for v in VARIANTS].index(variant))
    result = subprocess.run(
        [str(binaries[variant]), str(n), iterations, seed],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert result.returncode == 0 and result.stdout.rstrip().endswith("OK"), (
        f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    )
    for line in result.stdout.splitlines():  # every kernel ran
        if line.startswith("  "):
            assert int(line.split()[-1]) > 0, result.stdout
    order_showed(variant, n, result.stdout)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("variant", ["float32-sum", "bfloat16-sum"])
def test_own_kernels_replayed_in_cuda_graphs_give_every_pe_the_right_result(binaries, variant, n):
    """Each PE's collectives captured in a CUDA graph, the graphs replayed
    20 times in a random order of PEs: every replay checked on every PE."""
    seed = str(7000 + 10 * n + [v[2] for v in VARIANTS].index(variant))
    result = subprocess.run(
        [str(binaries[variant]), str(n), "300", seed, "graph"],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert result.returncode == 0 and result.stdout.rstrip().endswith("OK"), (
        f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    )
    assert "replayed 20 times" in result.stdout, result.stdout
    order_showed(variant, n, result.stdout)
