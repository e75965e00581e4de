"""Runs every C test program at 1, 2, 3 and 4 PEs through the launcher; the
programs that make their own processes and use no PE run once."""

import os
import subprocess
import sys
from pathlib import Path

PE_COUNTS = (1, 2, 3, 4)
# They fork their own processes and never call init: the PE count changes
# nothing but their run time (test_heartbeat: 12.5 s a run).
RUN_ONCE = {"test_call_page", "test_heartbeat"}


def main(test_dir):
    programs = sorted(p for p in Path(test_dir).iterdir() if os.access(p, os.X_OK))
    failed = passed = 0
    for program in programs:
        for n in (1,) if program.name in RUN_ONCE else PE_COUNTS:
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "symmem.run",
                    "-n",
                    str(n),
                    "--timeout",
                    "120",
                    str(program),
                ],
                capture_output=True,
                text=True,
            )
            ok = result.returncode == 0
            passed += ok
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {program.name} -n {n}")
            if not ok:
                print(result.stdout + result.stderr)
    print(f"c tests: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
