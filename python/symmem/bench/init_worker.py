"""One PE of the init operations (plan.INIT_OPS): the wall time of
symmem.init() and of symmem.finalize(), the first pair of a fresh process
(what a job pays to start: the CUDA context, the engine's start-up, the
heap) and a second pair in the same process. Every PE prints its own
record; the driver (symmem_runs.init_records) takes the slowest PE of each
launch, then the median of the launches.

    python -m symmem.run -n 2 -m symmem.bench.init_worker
"""

import json
import time

import symmem  # before the clock: importing is not init


def init_and_finalize(op):
    """Times one init() and the finalize() after it; the record of op."""
    t0 = time.perf_counter()
    symmem.init()
    t1 = time.perf_counter()
    me, engine = symmem.my_pe(), symmem.get_version().engine
    t2 = time.perf_counter()
    symmem.finalize()
    t3 = time.perf_counter()
    return dict(op=op, pe=me, init_s=t1 - t0, finalize_s=t3 - t2, engine=engine)


def main():
    for op in ("init_first", "init_again"):
        print(json.dumps(init_and_finalize(op)), flush=True)


if __name__ == "__main__":
    main()
