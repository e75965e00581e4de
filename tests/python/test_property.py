"""The whole contract under random use (issue 11, "How it is checked"): a
seeded program (_property_pe.py) makes thousands of random calls on every PE,
drawn from the whole public API (put/get/p/g and their nbi forms, signals,
waits, every atomic op and dtype, quiet/fence/barriers, every collective
with every op and dtype, teams, allocations, peer views, finalize and init),
with arguments that are sometimes valid and sometimes malformed (wrong types,
None, out-of-range numbers, freed, read-only, object or byte-swapped memory,
views, mismatched dtypes and sizes, missing and extra arguments). Each PE
knows every PE's calls and keeps a model of every PE's memory, and checks:

- a valid call succeeds with the right data (its result, and after a barrier
  every byte of every allocation on this PE);
- a malformed call raises exactly the documented exception (NvshmemInvalid,
  NvshmemError for a heap too small, NotImplementedError for what the cpu
  backend lacks, ModuleNotFoundError for the torch factories without torch),
  naming the call and the argument, with one "[pe N] " prefix, .msg and
  .status, and changes nothing; a collective's malformed argument is
  malformed on every PE, and every PE raises;
- nothing else: another exception type, a PE killed by a signal, or a hang
  (SYMMEM_TIMEOUT bounds every wait, the launcher's --timeout the run) fails
  the test with the seed, the step and each PE's call.

Each run draws a fresh seed (printed on failure). Replay one with
SYMMEM_PROPERTY_SEED=<seed> SYMMEM_PROPERTY_PES=<n> (SYMMEM_PROPERTY_STEPS
sets the steps of each run).
"""

import os
import random

import pytest

from conftest import launch, not_on_gpu, not_on_mpi

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_property_pe.py")
# Four runs of STEPS steps (a call or two of each PE per step, about 95,000
# calls in all) take 15 seconds on an idle 2-core machine, up to 45 s on a
# busy one; under AddressSanitizer a call costs about twice as much and
# make test-sanitize runs the two 3-PE runs only (SANITIZE_PES), of a third
# of the steps (each 45 s with half of them in make test, a quarter of
# that stage).
STEPS = 9000
SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")
RUNS = [(2, "a"), (3, "a"), (2, "b"), (3, "b")]
LIMIT = 240  # seconds a run may take before the launcher stops it (a hang)


def spin_us(n, run):
    """SYMMEM_SPIN_US of a run: 0 (a wait that is not over at once sleeps on
    its futex, as waits do on a busy machine) but for 3 PEs' run a, which
    keeps the default spin (with 3 PEs on CI's 2 cores a spinning PE yields).
    Two PEs that both spin while other tests hold the cores burn them: the
    2-PE run a took 70 s of CPU in make test, against 12 without spinning."""
    return None if (n, run) == (3, "a") else "0"


def run_seed(n, run):
    """The seed of this run: SYMMEM_PROPERTY_SEED (one run per PE count), or a
    fresh one."""
    fixed = os.environ.get("SYMMEM_PROPERTY_SEED")
    wanted = os.environ.get("SYMMEM_PROPERTY_PES")
    if wanted and int(wanted) != n or fixed and run != "a":
        pytest.skip("SYMMEM_PROPERTY_SEED/PES replay another run")
    return int(fixed) if fixed else random.SystemRandom().randrange(2**32)


def report(result, seed, n, steps, trail, spin=None):
    """What a failed run says: the seed and how to replay it, the failure the
    PEs printed, the launcher's report, and each PE's last steps."""
    waits = f"SYMMEM_SPIN_US={spin} " if spin else ""
    lines = [
        f"seed={seed} on {n} PEs, {steps} steps: replay with {waits}"
        f"SYMMEM_PROPERTY_SEED={seed} "
        f"SYMMEM_PROPERTY_PES={n} SYMMEM_PROPERTY_STEPS={steps} "
        "pytest tests/python/test_property.py",
        f"rc={result.rc}",
    ]
    text = result.stderr.splitlines()
    failures = [i for i, line in enumerate(text) if "PROPERTY FAILURE" in line]
    if failures:  # the first PE's failure, with every PE's call
        first = text[failures[0]]
        prefix = first[: first.index("] ") + 2] if first.startswith("[pe ") else ""
        lines.append(first[first.index("PROPERTY FAILURE") :])
        lines += [
            line
            for line in text[failures[0] + 1 : failures[0] + 3 * n + 6]
            if line.startswith(prefix + "  ")
        ]
    for pe in range(n):
        path = f"{trail}.{pe}"
        last = open(path).read().splitlines()[-3:] if os.path.exists(path) else []
        lines.append(f"PE {pe}'s last steps: " + " | ".join(last))
    lines += [
        "--- stdout (end) ---",
        result.stdout[-6000:],
        "--- stderr (end) ---",
        result.stderr[-8000:],
    ]
    return "\n".join(lines)


@not_on_mpi(
    "its model expects the cpu backend's answers: get_version().backend, the words "
    "of its refusals, get_peer_array reaching every PE"
)
@not_on_gpu("a model of the cpu backend's NumPy arrays; PEs outnumber GPUs")
@pytest.mark.parametrize("n, run", RUNS, ids=[f"{n}pes-{run}" for n, run in RUNS])
def test_random_calls_keep_the_contract(tmp_path, n, run):
    seed = run_seed(n, run)
    steps = int(os.environ.get("SYMMEM_PROPERTY_STEPS", STEPS // 3 if SANITIZED else STEPS))
    trail = tmp_path / "trail"
    result = launch(
        n,
        PROGRAM,
        timeout=LIMIT,
        args=(seed, steps, trail),
        env={"SYMMEM_TIMEOUT": "20", "SYMMEM_SYMMETRIC_SIZE": "256M"}
        | ({"SYMMEM_SPIN_US": spin_us(n, run)} if spin_us(n, run) else {}),
    )
    assert result.rc == 0, report(result, seed, n, steps, trail, spin_us(n, run))
    for pe in range(n):
        done = [line for line in result.lines(pe) if line.startswith(f"PE {pe} OK calls=")]
        assert len(done) == 1, report(result, seed, n, steps, trail, spin_us(n, run))
