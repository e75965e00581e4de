"""Every example in examples/ on the gpu backend, at 2 and 4 PEs where the
GPUs allow (the lines each must print are gpu_jobs.py's _example_lines; the
Triton ones run in test_gpu_triton.py, the CuTe and numba-cuda-mlir ones in
test_gpu_dsl.py)."""

import pytest

from gpu_jobs import ROOT, _example_lines, _example_runs, _numba_cuda_problem, needs_gpus

GPU_EXAMPLES = sorted(
    p.name
    for p in (ROOT / "examples").glob("*.py")
    if not p.name.startswith(("triton_", "cute_", "mlir_"))
)


def test_every_example_is_run_on_the_gpus():
    """A new example gets its lines in _example_lines, so the tests run it."""
    names = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
    lines = {name: _example_lines(name, 0, 2, {}) for name in names}  # KeyError names it
    assert all(lines.values()), lines


@needs_gpus
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("example", GPU_EXAMPLES)
def test_the_examples_run_on_the_gpus(example, n):
    if example.startswith("device_") and (problem := _numba_cuda_problem()):
        pytest.skip(f"Numba cannot compile CUDA kernels in this Python: {problem}")
    _example_runs(example, n)
