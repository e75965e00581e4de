"""Launch helper for test_teams.py, test_collectives.py and test_atomics.py.

Each test writes one PE program (HEADER prepended) and runs it on n PEs
through `python -m symmem.run`; every PE checks what it got against a NumPy
reference, raises on the first difference, and prints "PE k OK" at the end.
The test then asserts rc == 0 and that every PE printed its OK line once.
"""
import os
import re
import subprocess
import sys
import textwrap
import time

# Variables by which a launcher (or torchrun/mpirun) tells init() who is who:
# removed so that a pytest started under one of them cannot leak them in.
_LAUNCHER_VARS = re.compile(
    r"^(SYMMEM_\w+|RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|"
    r"TORCHELASTIC_\w*|OMPI_\w*|PMIX_\w*|SLURM_\w*|PMI_\w*|MPI_LOCALRANKID)$")

HEADER = '''\
import functools, os, sys, time
import numpy as np
import symmem as nvshmem
from symmem import Teams

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "float16", "float32", "float64"]
INT_DTYPES = [d for d in DTYPES if d.startswith(("int", "uint"))]
FLOAT_DTYPES = ["float16", "float32", "float64"]
OPS = ["sum", "min", "max", "prod", "and", "or", "xor"]


def fail(what):
    raise AssertionError(f"PE {nvshmem.my_pe()}: {what}")


def check(cond, what):
    if not cond:
        fail(what)


def check_equal(got, expected, what):
    """Every element equal (float16 within np.allclose), same shape and dtype."""
    got, expected = np.asarray(got), np.asarray(expected)
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


def expect_raises(exc, words, fn, *args, **kwargs):
    """fn(*args, **kwargs) must raise exc (not a subclass's sibling) whose message
    holds every string in words; returns the message."""
    label = getattr(fn, "__name__", repr(fn))
    try:
        fn(*args, **kwargs)
    except exc as error:
        msg = str(error)
        for word in words:
            if word not in msg:
                fail(f"{label}{args!r}: message {msg!r} lacks {word!r}")
        return msg
    except BaseException as error:
        fail(f"{label}{args!r} {kwargs!r}: expected {exc.__name__}, got "
             f"{type(error).__name__}: {error}")
    fail(f"{label}{args!r} {kwargs!r}: expected {exc.__name__}, nothing was raised")


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


def _clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not _LAUNCHER_VARS.match(k)}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


class Result:
    def __init__(self, proc, elapsed):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.elapsed = elapsed

    def lines(self, pe):
        prefix = f"[pe {pe}] "
        return [line[len(prefix):] for line in self.stdout.splitlines()
                if line.startswith(prefix)]

    def __repr__(self):
        return (f"rc={self.rc} elapsed={self.elapsed:.1f}s\n--- stdout ---\n{self.stdout}"
                f"\n--- stderr ---\n{self.stderr}")


def run_pes(tmp_path, n, code, timeout=60, env=None, name="prog.py"):
    """Writes HEADER + code to tmp_path/name and runs it on n PEs."""
    program = tmp_path / name
    program.write_text(HEADER + textwrap.dedent(code))
    cmd = [sys.executable, "-m", "symmem.run", "-n", str(n), "--timeout", str(timeout),
           str(program)]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30,
                          env=_clean_env(env))
    return Result(proc, time.monotonic() - started)


def assert_all_ok(result, n):
    """rc == 0 and each of the n PEs printed "PE k OK" exactly once."""
    assert result.rc == 0, repr(result)
    for pe in range(n):
        assert result.lines(pe).count(f"PE {pe} OK") == 1, f"PE {pe} printed no OK\n{result!r}"
    assert f"[pe {n}] " not in result.stdout, repr(result)
