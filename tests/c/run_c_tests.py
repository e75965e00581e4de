"""Runs every C test program at 1, 2, 3 and 4 PEs through the launcher; the
programs that make their own processes and use no PE run once.

The runs are independent jobs (each launcher names its own job and files),
so several go at once (C_TEST_JOBS, default 4: test_heartbeat mostly sleeps);
each run's line, and a failed run's whole output, print in the same order as
run one by one."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PE_COUNTS = (1, 2, 3, 4)
# They fork their own processes and never call init: the PE count changes
# nothing but their run time (test_heartbeat: 12.5 s a run).
RUN_ONCE = {"test_call_page", "test_heartbeat", "test_host_mesh", "test_pause"}


def run(program, n):
    return subprocess.run(
        [sys.executable, "-m", "symmem.run", "-n", str(n), "--timeout", "120", str(program)],
        capture_output=True,
        text=True,
    )


def main(test_dir):
    programs = sorted(p for p in Path(test_dir).iterdir() if os.access(p, os.X_OK))
    # test_heartbeat first: the longest, it then overlaps the others.
    programs.sort(key=lambda p: p.name != "test_heartbeat")
    runs = [(p, n) for p in programs for n in ((1,) if p.name in RUN_ONCE else PE_COUNTS)]
    failed = passed = 0
    with ThreadPoolExecutor(max_workers=int(os.environ.get("C_TEST_JOBS", "4"))) as pool:
        results = [pool.submit(run, program, n) for program, n in runs]
        for (program, n), future in zip(runs, results):
            result = future.result()
            ok = result.returncode == 0
            passed += ok
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {program.name} -n {n}", flush=True)
            if not ok:
                print(result.stdout + result.stderr, flush=True)
    print(f"c tests: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
