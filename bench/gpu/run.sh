#!/usr/bin/env bash
# The gpu benchmarks in one run: builds the C floor, runs it and symmem's
# bench on the same 2 GPUs one after the other, and prints both with ratios.
#   bash bench/gpu/run.sh [max_log2=30] [out_dir=bench/results]
set -euo pipefail
cd "$(dirname "$0")/../.."
MAX_LOG2=${1:-30}
OUT_DIR=${2:-bench/results}
mkdir -p "$OUT_DIR"
PY=${PYTHON:-python3}
NV=$($PY -c "import nvidia.nvshmem, os; print(list(nvidia.nvshmem.__path__)[0])")
CUDA=${CUDA_HOME:-/usr/local/cuda}
cc -O2 -Isrc/backends/gpu -I"$CUDA/include" bench/gpu/nvshmem_floor.c -o "$OUT_DIR/nvshmem_floor" \
   -L"$NV/lib" -l:libnvshmem_host.so.3 -Wl,-rpath,"$NV/lib" -L"$CUDA/lib64" -lcudart
export NVSHMEM_SYMMETRIC_SIZE=$(( (2 << MAX_LOG2) + (1 << 30) ))
FLOOR_MAX_LOG2=$MAX_LOG2 $PY -m symmem.run -n 2 --timeout 500 "$OUT_DIR/nvshmem_floor" | tee "$OUT_DIR/floor.jsonl"
SYMMEM_BACKEND=gpu $PY -m symmem.run -n 2 --timeout 500 bench/gpu/bench_gpu.py --max-log2 "$MAX_LOG2" | tee "$OUT_DIR/symmem.jsonl"
$PY bench/gpu/compare.py "$OUT_DIR/floor.jsonl" "$OUT_DIR/symmem.jsonl" | tee "$OUT_DIR/compare.txt"
