"""Signal ping-pong and barrier_all latency: symmem vs MPI in the same run.

    mpirun -n 2 python bench/bench_sync.py           # symmem and MPI side by side
    python -m symmem.run -n 3 bench/bench_sync.py    # symmem only (MPI columns empty)

Under mpirun symmem boots over mpi4py (initializer_method="mpi"); everything
measured still runs on symmem's cpu backend. The ping-pong needs exactly 2 PEs
and is skipped otherwise; the barrier runs on any number of PEs.
"""
import argparse
import time

import numpy as np

import symmem as nvshmem
from _common import fmt_size, gbs, header, interleaved, parse_size, ratio, say, start, table, us

SET = int(nvshmem.SignalOp.SIGNAL_SET)
GE = int(nvshmem.ComparisonType.CMP_GE)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8,1K,64K,1M",
                    type=lambda s: [parse_size(x) for x in s.split(",")],
                    help="put_signal payloads, comma-separated (K/M suffixes)")
    ap.add_argument("--iters", type=int, default=10_000,
                    help="round trips per round (small sizes)")
    ap.add_argument("--bytes", type=parse_size, default=256 << 20,
                    help="caps round trips per round at BYTES/size for big payloads")
    ap.add_argument("--repeats", type=int, default=3,
                    help="alternating rounds; the median is shown")
    ap.add_argument("--barriers", type=int, default=20_000, help="barriers timed per candidate")
    ap.add_argument("--batch", type=int, default=1000, help="barriers per timed batch")
    ap.add_argument("--only", choices=("pingpong", "barrier"), help="run one part only")
    return ap.parse_args()


# ---- ping-pong: PE 0 sends value v and waits for v back; PE 1 mirrors it.
# Each loop is written out in full so that no wrapper call is timed.
# They return nanoseconds per half round trip.

def pp_put_signal(me, values, dst, src, sig):
    put_signal, wait, peer = nvshmem.put_signal, nvshmem.signal_wait, 1 - me
    t0 = time.perf_counter_ns()
    if me == 0:
        for v in values:
            put_signal(dst, src, sig, v, SET, peer)
            wait(sig, v, GE)
    else:
        for v in values:
            wait(sig, v, GE)
            put_signal(dst, src, sig, v, SET, peer)
    return (time.perf_counter_ns() - t0) / (2 * len(values))


def pp_signal_op(me, values, sig):
    signal_op, wait, peer = nvshmem.signal_op, nvshmem.signal_wait, 1 - me
    t0 = time.perf_counter_ns()
    if me == 0:
        for v in values:
            signal_op(sig, v, SET, peer)
            wait(sig, v, GE)
    else:
        for v in values:
            wait(sig, v, GE)
            signal_op(sig, v, SET, peer)
    return (time.perf_counter_ns() - t0) / (2 * len(values))


def pp_mpi(me, values, comm, sbuf, rbuf):
    send, recv, peer = comm.Send, comm.Recv, 1 - me
    t0 = time.perf_counter_ns()
    if me == 0:
        for _ in values:
            send(sbuf, peer)
            recv(rbuf, peer)
    else:
        for _ in values:
            recv(rbuf, peer)
            send(sbuf, peer)
    return (time.perf_counter_ns() - t0) / (2 * len(values))


def pingpong(args, comm):
    if nvshmem.n_pes() != 2:
        say("\nping-pong: skipped (needs exactly 2 PEs)")
        return
    me, top = nvshmem.my_pe(), max(args.sizes)
    dst, sig = nvshmem.array((top,), dtype="uint8"), nvshmem.array((1,), dtype="uint64")
    dst.fill(0)
    sig.fill(0)
    src, rbuf = np.ones(top, np.uint8), np.zeros(top, np.uint8)
    nvshmem.barrier_all()
    v0, rows = 1, []   # signal values only grow, over every round
    for op, n in [("signal_op", 0)] + [("put_signal", n) for n in args.sizes]:
        iters = min(args.iters, max(20, args.bytes // max(n, 1)))
        if op == "signal_op":
            runs = {"symmem": lambda vals: pp_signal_op(me, vals, sig)}
        else:
            runs = {"symmem": lambda vals: pp_put_signal(me, vals, dst[:n], src[:n], sig)}
        if comm is not None:
            runs["mpi"] = lambda vals: pp_mpi(me, vals, comm, src[:n], rbuf[:n])
        samples = {name: [] for name in runs}
        for _ in range(args.repeats + 1):   # the first round warms up and is dropped
            for name, run in runs.items():
                nvshmem.barrier_all()
                samples[name].append(run(range(v0, v0 + iters)))
                v0 += iters
        med = {name: float(np.median(s[1:])) for name, s in samples.items()}
        mpi = med.get("mpi")
        rows.append((op, fmt_size(n), str(iters), us(med["symmem"]),
                     gbs(n, med["symmem"]) if n else "-", us(mpi) if mpi else "-",
                     ratio(med["symmem"], mpi) if mpi else "-"))
    table("ping-pong PE 0 <-> PE 1: half round trip (median of %d rounds)" % args.repeats,
          ("op", "size", "round trips", "symmem us", "symmem GB/s", "MPI Send/Recv us",
           "symmem/MPI"), rows)
    nvshmem.barrier_all()
    nvshmem.free_array(sig)
    nvshmem.free_array(dst)


def barrier(args, comm):
    stmts = {"barrier_all": "barrier_all()"}
    if comm is not None:
        stmts["MPI Barrier"] = "comm.Barrier()"
    t = interleaved(stmts, {"barrier_all": nvshmem.barrier_all, "comm": comm},
                    batch=args.batch, repeats=max(1, args.barriers // args.batch))
    sym, mpi = t["barrier_all"], t.get("MPI Barrier")
    table("barrier latency on PE 0 (%d barriers each, median of batches of %d)"
          % (args.barriers, args.batch),
          ("PEs", "barrier_all us", "best batch us", "MPI_Barrier us", "barrier_all/MPI"),
          [(str(nvshmem.n_pes()), us(sym[0]), us(sym[1]), us(mpi[0]) if mpi else "-",
            ratio(sym[0], mpi[0]) if mpi else "-")])


def main():
    args = parse_args()
    comm = start()
    header(__file__, comm)
    if args.only != "barrier":
        pingpong(args, comm)
    if args.only != "pingpong":
        barrier(args, comm)
    nvshmem.finalize()


if __name__ == "__main__":
    main()
