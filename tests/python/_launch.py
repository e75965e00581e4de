"""Launch helper for test_teams.py, test_collectives.py and test_atomics.py.

Each test writes one PE program (HEADER prepended) and runs it on n PEs
through `python -m symmem.run`; every PE checks what it got against a NumPy
reference (check_equal copies CuPy arrays to the host first: see conftest),
raises on the first difference, and prints "PE k OK" at the end.
The test then asserts rc == 0 and that every PE printed its OK line once.
"""

import textwrap

from conftest import PRELUDE, assert_all_ok, launch  # noqa: F401  (assert_all_ok is re-exported)

HEADER = (
    PRELUDE
    + '''\
import functools
from symmem import Teams

FLOAT_DTYPES = ["float16", "float32", "float64"]
OPS = ["sum", "min", "max", "prod", "and", "or", "xor"]


def fail(what):
    raise AssertionError(f"PE {nvshmem.my_pe()}: {what}")


def check_equal(got, expected, what):
    """Every element equal (float16 within np.allclose), same shape and dtype."""
    got, expected = host(got), host(expected)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        fail(f"{what}: got {got.dtype}{got.shape}, expected {expected.dtype}{expected.shape}")
    if got.dtype == np.float16:
        same = np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=1e-3,
                           atol=0)
    else:
        same = np.array_equal(got, expected)
    if not same:
        bad = np.flatnonzero(got != expected)[:8]
        fail(f"{what}: differs at {bad.tolist()}: got {got[bad].tolist()}, expected "
             f"{expected[bad].tolist()} (got {got!r}, expected {expected!r})")


def expect_invalid(call, fn, *args, **kwargs):
    """fn must raise NvshmemInvalid (a ValueError) naming the call and this PE."""
    msg = expect_raises(nvshmem.NvshmemInvalid, [f"{call}:", f"[pe {nvshmem.my_pe()}]"],
                        fn, *args, **kwargs)
    check(isinstance(nvshmem.NvshmemInvalid(msg), ValueError), "NvshmemInvalid is a ValueError")
    return msg


def members(team):
    """The world PE of each member of team, in team order."""
    return [nvshmem.team_translate_pe(team, i, Teams.TEAM_WORLD)
            for i in range(nvshmem.team_n_pes(team))]


def ok(pe=None):
    """The last line of a passing PE (pass the PE when called after finalize)."""
    print(f"PE {nvshmem.my_pe() if pe is None else pe} OK", flush=True)

'''
)


def run_pes(tmp_path, n, code, timeout=60, env=None, name="prog.py"):
    """Writes HEADER + code to tmp_path/name and runs it on n PEs."""
    program = tmp_path / name
    program.write_text(HEADER + textwrap.dedent(code))
    return launch(n, program, timeout=timeout, env=env)
