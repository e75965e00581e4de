"""Collective sweeps (reduce, reducescatter, fcollect, alltoall, broadcast) and
barrier latency: symmem against references measured in the same run.

    python -m symmem.run -n 2 bench/bench_collectives.py      # symmem vs NumPy
    mpirun -n 2 python bench/bench_collectives.py             # ... and vs MPI too

Columns follow NVSHMEM's perftest / nccl-tests: size (bytes), count
(elements), latency (us), algbw = size / time and busbw = algbw * factor
(reduce 2(n-1)/n; reducescatter, fcollect, alltoall (n-1)/n; broadcast 1).
For fcollect, alltoall and reducescatter "size" is the total bytes of the
full buffer (fcollect/alltoall: the dst each PE ends up with; reducescatter:
the src each PE contributes), as nccl-tests does; with n PEs it is rounded
down to whole float32 blocks of n, so sizes at 3 PEs read 12, 24, 120, ...

References (measured on PE 0 while the other PEs wait in a barrier, right
after the symmem measurement of the same size):
  numpy: one process computing the collective's result once --
         reduce / reducescatter: the sum of n float32 arrays of `size` bytes,
         np.add(x0, x1, out=c) then np.add(c, xk, out=c) for k >= 2
         (at 2 PEs exactly `np.add(a, b, out=c)`);
         fcollect / alltoall / broadcast: np.copyto of `size` bytes.
  MPI:   (under mpirun only) Allreduce, Reduce_scatter_block, Allgather,
         Alltoall, Bcast on private NumPy buffers, timed like symmem.

Timing: two warm-up calls (they fault in every page), a 3-call estimate,
the largest estimate over the PEs fixes the iterations of each round (the
same on every PE); each of --repeats rounds starts with barrier_all and
times `iters` back-to-back calls; time per call = round time / iters; the
table shows PE 0's median round. Each result is checked once per size.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import time

import numpy as np

import symmem as nvshmem
from _common import fmt_size, header, interleaved, parse_size, ratio, say, sizes, start, table, us

F32 = 4
COLLS = ("reduce", "reducescatter", "fcollect", "alltoall", "broadcast")
BUSBW = {"reduce": lambda n: 2 * (n - 1) / n, "reducescatter": lambda n: (n - 1) / n,
         "fcollect": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
         "broadcast": lambda n: 1.0}
TARGET_SIZE, TARGET_PES, TARGET_RATIO = 64 << 20, 2, 2.0


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min", type=parse_size, default=8, help="smallest size (default 8 B)")
    ap.add_argument("--max", type=parse_size, default=64 << 20, help="largest size (64 MiB)")
    ap.add_argument("--factor", type=int, default=4, help="size step (default x4; max is added)")
    ap.add_argument("--budget", type=float, default=0.2,
                    help="seconds of timed calls per size and candidate (default 0.2)")
    ap.add_argument("--repeats", type=int, default=5, help="timed rounds per size (median shown)")
    ap.add_argument("--colls", default=",".join(COLLS) + ",barrier",
                    help="comma-separated subset of %s,barrier" % ",".join(COLLS))
    return ap.parse_args()


class Bench:
    def __init__(self, args, comm):
        self.args, self.comm = args, comm
        self.me, self.n = nvshmem.my_pe(), nvshmem.n_pes()
        self.world = nvshmem.Teams.TEAM_WORLD
        elems = args.max // F32
        self.src = nvshmem.array((elems,), dtype="float32")
        self.dst = nvshmem.array((elems,), dtype="float32")
        self.src.fill(self.me + 1)
        self.dst.fill(0)
        self.ctl_in = nvshmem.array((1,), dtype="int64")
        self.ctl_out = nvshmem.array((1,), dtype="int64")
        self.ref = None
        if self.me == 0:   # the NumPy reference's inputs and output, touched in advance
            self.ref = [np.full(elems, k + 1, np.float32) for k in range(self.n)]
            self.ref_out = np.zeros(elems, np.float32)
        if comm is not None:
            self.msrc, self.mdst = np.full(elems, self.me + 1, np.float32), np.zeros(elems, np.float32)
        nvshmem.barrier_all()

    def agree_max(self, value):
        """The largest value over all PEs (through symmem's own reduce)."""
        self.ctl_in[0] = int(value)
        nvshmem.reduce(self.world, self.ctl_out, self.ctl_in, "max")
        return int(self.ctl_out[0])

    def time_team(self, call):
        """Median and best ns per call of a collective, run by every PE alike."""
        call()
        call()
        nvshmem.barrier_all()
        t0 = time.perf_counter_ns()
        for _ in range(3):
            call()
        est = self.agree_max(max(1, (time.perf_counter_ns() - t0) // 3))
        reps = self.args.repeats
        iters = max(1, int(self.args.budget * 1e9 / reps / est))
        samples = []
        for _ in range(reps):
            nvshmem.barrier_all()
            t0 = time.perf_counter_ns()
            for _ in range(iters):
                call()
            samples.append((time.perf_counter_ns() - t0) / iters)
        return statistics.median(samples), min(samples), iters

    def time_local(self, call):
        """Same rounds for a one-process reference (PE 0 only)."""
        call()
        call()
        t0 = time.perf_counter_ns()
        for _ in range(3):
            call()
        est = max(1, (time.perf_counter_ns() - t0) / 3)
        reps = self.args.repeats
        iters = max(1, int(self.args.budget * 1e9 / reps / est))
        samples = []
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            for _ in range(iters):
                call()
            samples.append((time.perf_counter_ns() - t0) / iters)
        return statistics.median(samples), min(samples), iters

    # ---- one collective at one size: (bytes, count, symmem call, check, numpy call, mpi call)

    def plan(self, coll, size):
        n, me, world = self.n, self.me, self.world
        src, dst = self.src, self.dst
        ref, out, comm = self.ref, getattr(self, "ref_out", None), self.comm
        if coll in ("reduce", "broadcast"):
            count = max(1, size // F32)
            s, d = src[:count], dst[:count]
        else:
            block = max(1, size // (F32 * n))
            count = block * n
            if coll == "fcollect":
                s, d = src[:block], dst[:count]
            elif coll == "reducescatter":
                s, d = src[:count], dst[:block]
            else:
                s, d = src[:count], dst[:count]
        nbytes = count * F32
        if coll == "reduce":
            run = lambda: nvshmem.reduce(world, d, s, "sum")
            want = lambda: bool(d[0] == d[-1] == n * (n + 1) / 2)
        elif coll == "reducescatter":
            run = lambda: nvshmem.reducescatter(world, d, s, "sum")
            want = lambda: bool(d[0] == d[-1] == n * (n + 1) / 2)
        elif coll == "fcollect":
            run = lambda: nvshmem.fcollect(world, d, s)
            want = lambda: all(d[k * block] == d[(k + 1) * block - 1] == k + 1 for k in range(n))
        elif coll == "alltoall":
            run = lambda: nvshmem.alltoall(world, d, s)
            want = lambda: all(d[k * block] == d[(k + 1) * block - 1] == k + 1 for k in range(n))
        else:
            run = lambda: nvshmem.broadcast(world, d, s, 0)
            want = lambda: bool(d[0] == d[-1] == 1)
        np_call = None
        if ref is not None:
            o = out[:count]
            if coll in ("reduce", "reducescatter"):
                xs = [x[:count] for x in ref]

                def np_call():
                    np.add(xs[0], xs[1], out=o)
                    for x in xs[2:]:
                        np.add(o, x, out=o)
            else:
                x0 = ref[0][:count]
                np_call = lambda: np.copyto(o, x0)
        mpi_call = None
        if comm is not None:
            ms, md = self.msrc, self.mdst
            if coll == "reduce":
                from mpi4py import MPI
                mpi_call = lambda: comm.Allreduce(ms[:count], md[:count], MPI.SUM)
            elif coll == "reducescatter":
                from mpi4py import MPI
                mpi_call = lambda: comm.Reduce_scatter_block(ms[:count], md[:block], MPI.SUM)
            elif coll == "fcollect":
                mpi_call = lambda: comm.Allgather(ms[:block], md[:count])
            elif coll == "alltoall":
                mpi_call = lambda: comm.Alltoall(ms[:count], md[:count])
            else:
                mpi_call = lambda: comm.Bcast(md[:count] if me else ms[:count], 0)
        return nbytes, count, run, want, np_call, mpi_call

    def sweep(self, coll):
        a = self.args
        todo = sizes(a.min, a.max, a.factor)
        if todo[-1] != a.max:
            todo.append(a.max)
        factor, rows, at_target = BUSBW[coll](self.n), [], None
        for size in todo:
            nbytes, count, run, want, np_call, mpi_call = self.plan(coll, size)
            t_sym, _, iters = self.time_team(run)
            bad = self.agree_max(0 if want() else 1)
            nvshmem.barrier_all()
            t_np = self.time_local(np_call)[0] if np_call else None
            nvshmem.barrier_all()
            t_mpi = self.time_team(mpi_call)[0] if mpi_call else None
            algbw = nbytes / t_sym   # bytes per ns == GB/s
            row = [str(nbytes), str(count), us(t_sym), "%.2f" % algbw, "%.2f" % (algbw * factor),
                   str(iters), us(t_np) if t_np else "-", ratio(t_sym, t_np) if t_np else "-"]
            if self.comm is not None:
                row += [us(t_mpi), ratio(t_sym, t_mpi)]
            row.append("WRONG" if bad else "ok")
            rows.append(tuple(row))
            if coll == "reduce" and nbytes == TARGET_SIZE:
                at_target = (t_sym, t_np)
        cols = ["size (B)", "count", "latency us", "algbw GB/s", "busbw GB/s", "iters",
                "numpy us", "symmem/numpy"]
        if self.comm is not None:
            cols += ["MPI us", "symmem/MPI"]
        cols.append("check")
        table("%s, float32, TEAM_WORLD, %d PEs (busbw factor %.3g; PE 0's median of %d rounds)"
              % (coll, self.n, factor, a.repeats), cols, rows)
        if at_target and self.me == 0:
            t_sym, t_np = at_target
            verdict = ("MET" if t_sym <= TARGET_RATIO * t_np else "NOT MET") \
                if self.n == TARGET_PES else "n/a (target is for %d PEs)" % TARGET_PES
            n_adds = "np.add(a, b, out=c)" if self.n == 2 else "%d np.adds" % (self.n - 1)
            say("\nTARGET reduce %s at %d PEs: symmem %.2f ms, numpy %s %.2f ms, "
                "ratio %.2f (target <= %.1f): %s"
                % (fmt_size(TARGET_SIZE), self.n, t_sym / 1e6, n_adds, t_np / 1e6,
                   t_sym / t_np, TARGET_RATIO, verdict))

    def barriers(self):
        nvshmem.barrier_all()
        t0 = time.perf_counter_ns()
        for _ in range(100):
            nvshmem.barrier_all()
        est = self.agree_max((time.perf_counter_ns() - t0) // 100)
        reps = 3 * self.args.repeats
        batch = max(10, int(2 * self.args.budget * 1e9 / reps / est))
        stmts = {"barrier_all": "barrier_all()", "barrier": "barrier(world)",
                 "sync_all": "sync_all()"}
        if self.comm is not None:
            stmts["MPI Barrier"] = "comm.Barrier()"
        t = interleaved(stmts, {"barrier_all": nvshmem.barrier_all, "barrier": nvshmem.barrier,
                                "sync_all": nvshmem.sync_all, "world": self.world,
                                "comm": self.comm}, batch=batch, repeats=reps)
        row = [str(self.n), us(t["barrier_all"][0]), us(t["barrier_all"][1]),
               us(t["barrier"][0]), us(t["barrier"][1]), us(t["sync_all"][0]),
               ratio(t["barrier"][0], t["barrier_all"][0])]
        cols = ["PEs", "barrier_all us", "best", "barrier(TEAM_WORLD) us", "best", "sync_all us",
                "barrier/barrier_all"]
        if self.comm is not None:
            mpi = t["MPI Barrier"][0]
            row += [us(mpi), ratio(t["barrier_all"][0], mpi)]
            cols += ["MPI_Barrier us", "barrier_all/MPI"]
        table("barrier latency on PE 0 (%d rounds of %d, interleaved; median round, best round)"
              % (reps, batch), cols, [tuple(row)])

    def close(self):
        nvshmem.barrier_all()
        for a in (self.ctl_out, self.ctl_in, self.dst, self.src):
            nvshmem.free_array(a)


def build_info():
    """The git commit of the tree and when the loaded extension was built."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        rev = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--", "src",
                                "include", "python", "setup.py"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev, dirty = "", ""
    ext = nvshmem._symmem.__file__
    built = datetime.datetime.fromtimestamp(os.path.getmtime(ext)).isoformat(timespec="seconds")
    return "git %s%s, extension %s built %s" % (rev or "?", " + uncommitted changes" if dirty
                                                else "", os.path.relpath(ext), built)


def main():
    args = parse_args()
    comm = start()
    header(__file__, comm)
    say("# " + build_info())
    say("# collectives: sizes %s..%s x%d, %.2f s per size and candidate, %d rounds"
        % (fmt_size(args.min), fmt_size(args.max), args.factor, args.budget, args.repeats))
    if nvshmem.n_pes() > (os.cpu_count() or 1):
        say("# NOTE: %d PEs on %d cores: oversubscribed, PEs share cores"
            % (nvshmem.n_pes(), os.cpu_count()))
    bench = Bench(args, comm)
    started = time.perf_counter()
    for coll in args.colls.split(","):
        if coll == "barrier":
            bench.barriers()
        else:
            bench.sweep(coll)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    say("\n# done in %.1f s, loadavg %s" % (time.perf_counter() - started, load))
    bench.close()
    nvshmem.finalize()


if __name__ == "__main__":
    main()
