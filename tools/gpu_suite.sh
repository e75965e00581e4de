#!/bin/sh
# The gpu suite on a lent GPU machine, in stages that fit one call (at most
# 10 minutes), with the kernel caches carried from call to call
# (docs/testing.md, "The gpu backend").
#
#   sh tools/gpu_suite.sh STAGE[=SECONDS] ...     (there; logs under $OUT)
#
# Each stage runs under its own limit (SECONDS, else its default) and is
# stopped with SIGINT at it, so pytest still prints what ran (-v: each
# test's result as it ends, in the stage's log). Before the
# stages: the package is installed (pip -e, no network), and
# .devcache/caches.tar.xz, if a call carried it, is unpacked: NVRTC's PTX
# (SYMMEM_KERNEL_CACHE) and the driver's translations (CUDA_CACHE_PATH),
# which make a fresh machine warm. After them the caches are packed into
# $OUT/caches.tar.xz (copy it to .devcache/ here and carry .devcache next
# time) and the logs into $OUT/logs.tar.xz.
#
# Stages (SYMMEM_GPU_ENGINE is the caller's; unset: auto):
#   host         test_gpu.py, test_gpu_host_calls.py, test_gpu_faults.py (-n 2)
#   collectives  test_gpu_collectives.py, one job at a time (PEs that share
#                a GPU take turns: jobs side by side only slow each other)
#   kernels      test_gpu_kernels.py, test_gpu_examples.py, test_gpu_triton.py (-n 2)
#   dsl          test_gpu_dsl.py (-n 2; CuTe and numba-cuda-mlir need
#                tools/gpu_wheels.sh's wheels on PYTHONPATH)
#   repro        test_reproducible.py on the gpu backend (-n 2)
#   stress       test_gpu_kernel_stress.py (nvcc)
#   init         python -m symmem.bench --ops init, both engines, 1 PE
set -u
cd "$(dirname "$0")/.."
STAGES="host collectives kernels dsl repro stress init"

usage() {  # the comment at the top of this file
    echo "usage: sh tools/gpu_suite.sh STAGE[=SECONDS] ... (STAGE: $STAGES)"
    sed -n '2,/^set -u/{/^#/s/^# \{0,1\}//p}' tools/gpu_suite.sh
}

# the arguments first: nothing is written before they are all known
[ $# -gt 0 ] || { usage >&2; exit 2; }
for arg in "$@"; do
    case $arg in
    -h | --help) usage; exit 0 ;;
    esac
    case " $STAGES " in
    *" ${arg%%=*} "*) ;;
    *) usage >&2; exit 2 ;;
    esac
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu_suite}
LOGS=/tmp/gpu_suite_logs
mkdir -p "$OUT" "$LOGS" .devcache/cuda .devcache/ptx
chmod 700 .devcache/ptx
[ -f .devcache/caches.tar.xz ] && tar -xJf .devcache/caches.tar.xz
export CUDA_CACHE_PATH="$PWD/.devcache/cuda" SYMMEM_KERNEL_CACHE="$PWD/.devcache/ptx"
export CUDA_CACHE_MAXSIZE=1073741824
START=$(date +%s)
if ! python3 -m pip install -q --no-build-isolation --no-deps -e . > "$LOGS/install.log" 2>&1; then
    tail -30 "$LOGS/install.log"
    exit 1
fi
echo "install: $(($(date +%s) - START)) s"

PYTEST="python3 -m pytest -v -rfE --tb=line -p no:cacheprovider --durations=12"
stage() {  # name limit command...
    name=$1 limit=$2
    shift 2
    begun=$(date +%s)
    timeout -s INT -k 15 "$limit" "$@" > "$LOGS/$name.log" 2>&1
    rc=$?
    echo "== $name: rc=$rc in $(($(date +%s) - begun)) s (limit $limit s)"
    grep -E "passed|failed|FAILED|ERROR|skipped" "$LOGS/$name.log" | cut -c1-300 | tail -n 25
}

for arg in "$@"; do
    name=${arg%%=*}
    limit=${arg#*=}
    [ "$limit" = "$arg" ] && limit=
    case $name in
    host)
        stage host "${limit:-300}" $PYTEST -n 2 tests/python/test_gpu.py \
            tests/python/test_gpu_host_calls.py tests/python/test_gpu_faults.py ;;
    collectives) stage collectives "${limit:-400}" $PYTEST tests/python/test_gpu_collectives.py ;;
    kernels)
        stage kernels "${limit:-300}" $PYTEST -n 2 tests/python/test_gpu_kernels.py \
            tests/python/test_gpu_examples.py tests/python/test_gpu_triton.py ;;
    dsl) stage dsl "${limit:-300}" $PYTEST -n 2 tests/python/test_gpu_dsl.py ;;
    repro)
        stage repro "${limit:-300}" env SYMMEM_BACKEND=gpu $PYTEST -n 2 \
            tests/python/test_reproducible.py ;;
    stress) stage stress "${limit:-120}" $PYTEST tests/python/test_gpu_kernel_stress.py ;;
    init)
        stage init "${limit:-120}" python3 -m symmem.bench --backend gpu -n 1 --ops init \
            --libs symmem/symmem_engine,symmem/nvshmem_engine --rounds 2 --no-plots --quiet \
            --out "$LOGS/bench-init" ;;
    esac
done

tar -cJf "$OUT/caches.tar.xz" .devcache/cuda .devcache/ptx
tar -cJf "$OUT/logs.tar.xz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
echo "total $(($(date +%s) - START)) s; caches and logs in $OUT"
