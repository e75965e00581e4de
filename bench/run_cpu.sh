#!/bin/sh
# Runs every cpu-backend benchmark (about 2 minutes) and keeps each output in
# bench/results/ (git-ignored). Run it on an otherwise idle machine.
#   bench/run_cpu.sh                  # PY=... and MPIRUN=... override the tools
set -e
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
MPIRUN=${MPIRUN:-.venv/bin/mpirun}
MPIFLAGS="--oversubscribe"
[ "$(id -u)" = 0 ] && MPIFLAGS="$MPIFLAGS --allow-run-as-root"
OUT=bench/results
mkdir -p "$OUT"

run() {  # run NAME COMMAND...: print and keep the output
    name=$1
    shift
    echo "\$ $*" | tee "$OUT/$name.txt"
    "$@" 2>&1 | tee -a "$OUT/$name.txt"
}

run rma $PY -m symmem.run -n 2 bench/bench_rma.py
for n in 2 3 4; do
    run sync-$n $MPIRUN $MPIFLAGS -n $n $PY bench/bench_sync.py
done
for n in 2 3 4; do
    run sync-$n-spin200 env SYMMEM_SPIN_US=200 $MPIRUN $MPIFLAGS -n $n $PY bench/bench_sync.py
done
# The same RMA run with PE 1 spinning in its barrier instead of asleep.
run rma-target-spinning env SYMMEM_SPIN_US=1000000000 $PY -m symmem.run -n 2 bench/bench_rma.py
