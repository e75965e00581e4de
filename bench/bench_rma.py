"""Put/get bandwidth and the cost of one small call: symmem vs NumPy, one run.

    python -m symmem.run -n 2 bench/bench_rma.py [--max-size 64M] [--seconds 0.2]

PE 0 measures everything (put/get target PE 1); PE 1 only owns the memory and
waits in a barrier, asleep once SYMMEM_SPIN_US has passed (a put rings a
sleeping target awake; SYMMEM_SPIN_US=1000000000 keeps PE 1 spinning instead).
The NumPy reference is np.copyto between two private arrays of the same size
in PE 0, timed in rounds alternating with symmem's.
"""
import argparse

import numpy as np

import symmem as nvshmem
from _common import (fmt_size, gbs, header, interleaved, parse_size, ratio, say, sizes, start,
                     table, us)

BW_TARGET, BW_FROM = 0.8, 1 << 20   # put/get >= 0.8x NumPy from 1 MiB on
CALL_TARGET = 3.0                   # an 8-byte put <= 3x an 8-byte np.copyto


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-size", type=parse_size, default=8, help="bytes (K/M/G suffixes)")
    ap.add_argument("--max-size", type=parse_size, default=64 << 20, help="bytes (K/M/G suffixes)")
    ap.add_argument("--step", type=int, default=2, help="size factor between rows")
    ap.add_argument("--seconds", type=float, default=0.2, help="per size and candidate")
    ap.add_argument("--repeats", type=int, default=5,
                    help="alternating rounds; the median is shown")
    ap.add_argument("--calls", type=int, default=100_000, help="small calls timed per candidate")
    ap.add_argument("--batch", type=int, default=1000, help="small calls per timed batch")
    ap.add_argument("--only", choices=("bandwidth", "calls"), help="run one part only")
    return ap.parse_args()


def bandwidth(args):
    fresh = nvshmem.array((args.max_size,), dtype="uint8")   # never touched
    sym = nvshmem.array((args.max_size,), dtype="uint8")
    sym.fill(0)                                 # every PE touches its own copy
    src = np.full(args.max_size, 1, np.uint8)   # private, touched
    dst = np.zeros(args.max_size, np.uint8)
    nvshmem.barrier_all()
    if nvshmem.my_pe() == 0:
        first_touch(fresh, src)
        sweep(args, sym, src, dst)
    nvshmem.barrier_all()
    nvshmem.free_array(sym)
    nvshmem.free_array(fresh)


def first_touch(fresh, src):
    """One copy into memory nobody has touched yet: page faults included."""
    nbytes = fresh.nbytes
    namespace = dict(put=nvshmem.put, copyto=np.copyto, sym=fresh, src=src,
                     dst=np.empty(nbytes, np.uint8))
    t = interleaved({"put": "put(sym, src, remote_pe=1)", "numpy": "copyto(dst, src)"},
                    namespace, batch=1, repeats=1)
    say("\nfirst copy of %s into untouched pages: put %.1f us (%s GB/s), numpy %.1f us (%s GB/s)"
        % (fmt_size(nbytes), t["put"][0] / 1e3, gbs(nbytes, t["put"][0]),
           t["numpy"][0] / 1e3, gbs(nbytes, t["numpy"][0])))


def sweep(args, sym, src, dst):
    """put/get of each size vs np.copyto(dst, src) between private arrays, and
    vs np.copyto through a peer view (the same bytes between the same addresses
    as the put/get, without the symmem call)."""
    peer = nvshmem.get_peer_array(sym, 1)
    stmts = {"put": "put(sym, src, remote_pe=1)", "get": "get(dst, sym, remote_pe=1)",
             "numpy": "copyto(dst, src)",
             "put-peer": "copyto(peer, src)", "get-peer": "copyto(dst, peer)"}
    namespace = {"put": nvshmem.put, "get": nvshmem.get, "copyto": np.copyto}
    rows = {"put": [], "get": []}
    for n in sizes(args.min_size, args.max_size, args.step):
        namespace.update(sym=sym[:n], peer=peer[:n], src=src[:n], dst=dst[:n])
        t = {k: med for k, (med, _) in
             interleaved(stmts, namespace, seconds=args.seconds, repeats=args.repeats).items()}
        for op in rows:
            rows[op].append((n, t[op], t["numpy"], t[op + "-peer"]))
    for op, op_rows in rows.items():
        table("%s PE 0 <-> PE 1 (median of %d rounds, ~%.2f s per size and candidate)"
              % (op, args.repeats, args.seconds),
              ("size", "latency us", "algbw GB/s", "numpy GB/s", "%s/numpy" % op,
               "peer-view GB/s", "%s/peer-view" % op),
              [(fmt_size(n), us(ns), gbs(n, ns), gbs(n, ref), ratio(ref, ns), gbs(n, peer),
                ratio(peer, ns)) for n, ns, ref, peer in op_rows])
        big = [(ref / ns, n) for n, ns, ref, _ in op_rows if n >= BW_FROM]
        if big:
            r, n = min(big)
            say("target: %s >= %.1fx numpy from %s on: lowest %.3fx (at %s) -> %s"
                % (op, BW_TARGET, fmt_size(BW_FROM), r, fmt_size(n),
                   "met" if r >= BW_TARGET else "NOT met"))


def call_cost(args):
    a8 = nvshmem.array((1,), dtype="float64")   # symmetric
    a8.fill(0)
    nvshmem.barrier_all()
    if nvshmem.my_pe() == 0:
        namespace = dict(put=nvshmem.put, get=nvshmem.get, p=nvshmem.p, g=nvshmem.g,
                         copyto=np.copyto, a8=a8, peer8=nvshmem.get_peer_array(a8, 1),
                         b8=np.ones(1), c8=np.zeros(1))
        stmts = {
            "np.copyto(c8, b8)": "copyto(c8, b8)",
            "put(a8, b8, remote_pe=1)": "put(a8, b8, remote_pe=1)",
            "put(a8, b8, 1, 1)": "put(a8, b8, 1, 1)",
            "get(c8, a8, remote_pe=1)": "get(c8, a8, remote_pe=1)",
            "get(c8, a8, 1, 1)": "get(c8, a8, 1, 1)",
            "p(a8, 1.0, 1)": "p(a8, 1.0, 1)",
            "g(a8, 1)": "g(a8, 1)",
            "np.copyto(peer view of a8, b8)": "copyto(peer8, b8)",
            "empty loop (pass)": "pass",
        }
        t = interleaved(stmts, namespace, batch=args.batch,
                        repeats=max(1, args.calls // args.batch))
        ref = t["np.copyto(c8, b8)"][0]
        table("one 8-byte call from Python (float64[1]; %d calls each, median of batches of %d)"
              % (args.calls, args.batch), ("call", "median us", "best us", "vs copyto"),
              [("`%s`" % k, us(med), us(best), ratio(med, ref)) for k, (med, best) in t.items()])
        r = t["put(a8, b8, remote_pe=1)"][0] / ref
        say("target: 8-byte put <= %.0fx np.copyto: %.2fx -> %s"
            % (CALL_TARGET, r, "met" if r <= CALL_TARGET else "NOT met"))
    nvshmem.barrier_all()
    nvshmem.free_array(a8)


def main():
    args = parse_args()
    comm = start()
    if nvshmem.n_pes() < 2:
        raise SystemExit("bench_rma needs 2 PEs: python -m symmem.run -n 2 bench/bench_rma.py")
    header(__file__, comm)
    if args.only != "calls":
        bandwidth(args)
    if args.only != "bandwidth":
        call_cost(args)
    nvshmem.finalize()


if __name__ == "__main__":
    main()
