#!/bin/sh
# What a GPU machine needs for the CuTe DSL and numba-cuda-mlir tests, which
# its image lacks (docs/testing.md, "CuTe and numba-cuda-mlir"). One call to
# such a machine carries at most 64 MiB, and nvidia-cutlass-dsl's CUDA 13
# library wheel is 92 MB, so:
#
#   sh tools/gpu_wheels.sh prepare   (here, with network; PYVER=3.12 for the
#                                     GPU machine's Python, default this one's)
#     .devwheels/cute/   nvidia-cutlass-dsl, -libs-base and -libs-core wheels,
#                        protobuf's, and cutlass-libs-cu13.tar.xz: the cu13
#                        wheel unpacked without its lib/stubs, xz -9e (about
#                        54 MB; minutes on 2 cores)
#     .devwheels/mlir/   numba-cuda-mlir's wheel (71 MB) unpacked, xz -9e
#                        (about 47 MB), and cuda-core's wheel (installed
#                        there only where the image's is older than 0.5.1)
#     python/symmem/device/device.bc   the device library as LLVM bitcode
#                        (tools/device_bitcode.py; needs clang), which
#                        symmem.device.cute's own engine links
#   sh tools/gpu_wheels.sh install-cute   (there; carry .devwheels/cute)
#   sh tools/gpu_wheels.sh install-mlir   (there; carry .devwheels/mlir)
#     both install into .devwheels/site, which later calls keep (git ignores
#     it and no call carries it); then
#   PYTHONPATH=$PWD/.devwheels/site:$PWD/.devwheels/site/nvidia_cutlass_dsl/dsl_packages
#     (the cutlass wheel's .pth file, which adds dsl_packages, is not read
#     from PYTHONPATH).
#
# And nccl4py, for the bench's "nccl symmetric" (python -m symmem.bench):
#   sh tools/gpu_wheels.sh prepare-nccl   (here) .devwheels/nccl/: nccl4py's wheel,
#                        cuda-core's and cuda-pathfinder's (10 MB)
#   sh tools/gpu_wheels.sh install-nccl   (there; carry .devwheels/nccl) into
#     .devwheels/nccl-site: nccl4py, and cuda-core and cuda-pathfinder where the
#     image's are older than nccl4py needs (that cuda-core would then be
#     symmem's too: the script says so); then PYTHONPATH=$PWD/.devwheels/nccl-site
#
# Versions: CUTLASS_DSL (default 4.8.1), NUMBA_CUDA_MLIR (0.6.0), NCCL4PY
# (0.6.0); PYTHON runs pip.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
case $PYTHON in */*) PYTHON=$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON") ;; esac
OUT=.devwheels
CUTLASS_DSL=${CUTLASS_DSL:-4.8.1}
NUMBA_CUDA_MLIR=${NUMBA_CUDA_MLIR:-0.6.0}
NCCL4PY=${NCCL4PY:-0.6.0}

download() {  # download DIR SPEC...: wheels for the GPU machine's Python, no dependencies
    dir=$1
    shift
    $PYTHON -m pip download -q --no-deps --only-binary=:all: -d "$dir" \
        --python-version "$PYVER" --platform manylinux_2_28_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform any "$@"
}

prepare() {
    PYVER=${PYVER:-$($PYTHON -c 'import sys; print("%d.%d" % sys.version_info[:2])')}
    rm -rf "$OUT/cute" "$OUT/mlir" "$OUT/mlir1" "$OUT/mlir2" "$OUT/unpack"
    mkdir -p "$OUT/cute" "$OUT/mlir" "$OUT/unpack"
    download "$OUT/cute" "nvidia-cutlass-dsl==$CUTLASS_DSL" \
        "nvidia-cutlass-dsl-libs-base==$CUTLASS_DSL" \
        "nvidia-cutlass-dsl-libs-core==$CUTLASS_DSL" "protobuf>=4.21.12"
    download "$OUT/unpack" "nvidia-cutlass-dsl-libs-cu13==$CUTLASS_DSL"
    (cd "$OUT/unpack" && $PYTHON -m zipfile -e nvidia_cutlass_dsl_libs_cu13-*.whl tree &&
        rm -rf tree/nvidia_cutlass_dsl/cu13/lib/stubs &&
        cd tree && tar -cf - . | xz -T2 -9e --lzma2=preset=9e,dict=256MiB \
            > ../../cute/cutlass-libs-cu13.tar.xz)
    rm -rf "$OUT/unpack"
    mkdir -p "$OUT/unpack"
    download "$OUT/unpack" "numba-cuda-mlir==$NUMBA_CUDA_MLIR"
    download "$OUT/mlir" "cuda-core>=0.5.1,<2"
    # a wheel's files are what pip puts in site-packages: unpacked, they pack
    # smaller in xz (one call carries them with the tree)
    (cd "$OUT/unpack" && $PYTHON -m zipfile -e numba_cuda_mlir-*.whl tree &&
        cd tree && tar -cf - . | xz -T2 -9e > ../../mlir/numba-cuda-mlir.tar.xz)
    rm -rf "$OUT/unpack"
    $PYTHON tools/device_bitcode.py
    du -sh "$OUT/cute" "$OUT/mlir" python/symmem/device/device.bc
    echo "for Python $PYVER; carry .devwheels/cute (and python/symmem/device/device.bc)" \
         "and .devwheels/mlir in separate calls"
}

install_cute() {
    mkdir -p "$OUT/site"
    $PYTHON -m pip install -q --no-deps --target "$OUT/site" "$OUT"/cute/*.whl
    xz -dc "$OUT/cute/cutlass-libs-cu13.tar.xz" | tar -xf - -C "$OUT/site"
    echo "installed nvidia-cutlass-dsl $CUTLASS_DSL (cu13) into $OUT/site"
}

install_mlir() {
    mkdir -p "$OUT/site"
    xz -dc "$OUT/mlir/numba-cuda-mlir.tar.xz" | tar -xf - -C "$OUT/site"
    # cuda-core: the image's where it is new enough (numba-cuda-mlir needs 0.5.1)
    if ! $PYTHON -c 'import cuda.core as c, sys
v = tuple(int(x) for x in c.__version__.split(".")[:2]); sys.exit(v < (0, 5))' 2>/dev/null; then
        $PYTHON -m pip install -q --no-deps --target "$OUT/site" "$OUT"/mlir/cuda_core-*.whl
    fi
    echo "installed numba-cuda-mlir $NUMBA_CUDA_MLIR into $OUT/site"
}

prepare_nccl() {
    PYVER=${PYVER:-$($PYTHON -c 'import sys; print("%d.%d" % sys.version_info[:2])')}
    rm -rf "$OUT/nccl"
    download "$OUT/nccl" "nccl4py==$NCCL4PY" "cuda-core>=1.0,<2" "cuda-pathfinder>=1.5.4,<2"
    du -sh "$OUT/nccl"
    echo "for Python $PYVER; carry .devwheels/nccl"
}

install_nccl() {
    # nccl4py $NCCL4PY needs cuda-core 1.x and cuda-pathfinder 1.5.4 or later:
    # the image's where they are new enough (one pip call: both fill cuda/)
    wheels=$(ls "$OUT"/nccl/nccl4py-*.whl)
    if ! $PYTHON -c 'import cuda.core as c, sys
sys.exit(int(c.__version__.split(".")[0]) < 1)' 2>/dev/null; then
        wheels="$wheels $(ls "$OUT"/nccl/cuda_core-*.whl)"
        echo "no cuda-core 1.x here: $OUT/nccl-site has one, symmem's too on its PYTHONPATH"
    fi
    if ! $PYTHON -c 'import cuda.pathfinder as p, sys
sys.exit(tuple(int(x) for x in p.__version__.split(".")[:3]) < (1, 5, 4))' 2>/dev/null; then
        wheels="$wheels $(ls "$OUT"/nccl/cuda_pathfinder-*.whl)"
    fi
    rm -rf "$OUT/nccl-site"
    # shellcheck disable=SC2086  (one word a wheel)
    $PYTHON -m pip install -q --no-deps --target "$OUT/nccl-site" $wheels
    echo "installed nccl4py $NCCL4PY into $OUT/nccl-site"
}

usage() {  # the comment at the top of this file
    echo "usage: sh tools/gpu_wheels.sh prepare|install-cute|install-mlir|prepare-nccl|install-nccl"
    sed -n '2,/^set -eu/{/^#/s/^# \{0,1\}//p}' tools/gpu_wheels.sh  # cwd: the root
}

case "${1:-}" in
    prepare) prepare ;;
    install-cute) install_cute ;;
    install-mlir) install_mlir ;;
    prepare-nccl) prepare_nccl ;;
    install-nccl) install_nccl ;;
    -h | --help) usage ;;
    *) usage >&2; exit 2 ;;
esac
