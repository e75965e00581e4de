"""The environment table: python -m symmem info lists every variable with
its default and where it applies; init refuses a malformed size, number or
duration, naming it; durations take a unit."""

import json
import os
import subprocess
import sys

from symmem import _symmem

from conftest import run_plain, wait_all, write_program


def test_info_lists_every_variable_with_its_default_and_backend():
    out = subprocess.run(
        [sys.executable, "-m", "symmem", "info"],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, SYMMEM_TIMEOUT="7"),
    ).stdout
    rows = _symmem.env_table()
    assert len(rows) > 30
    for name, default, applies_to, help_text in rows:
        line = next((l for l in out.splitlines() if l.split()[:1] == [name]), None)
        assert line is not None, f"{name} missing from info:\n{out}"
        assert f"[{applies_to}]" in line, line
        assert help_text in out, name
        if name == "SYMMEM_TIMEOUT":
            assert "7 (set)" in line, line
        elif default and not os.environ.get(name):
            assert default in line, line
    for name in (
        "SYMMEM_BACKEND",
        "SYMMEM_SYMMETRIC_SIZE",
        "SYMMEM_GPU_KERNELS",
        "SYMMEM_GPU_BACKEND_LIB",
        "SYMMEM_NVSHMEM_WHEEL_LIB",
        "SYMMEM_LOCAL_RANK",
        "RANK",
        "OMPI_COMM_WORLD_RANK",
        "SLURM_PROCID",
        "PMI_RANK",
    ):
        assert name in {row[0] for row in rows}, name


# Values of typed variables (sizes, numbers, durations) init refuses, naming
# the variable, the value and what it takes: none becomes the default.
MALFORMED = [
    ("SYMMEM_TIMEOUT", "30x", "a duration such as 30, 1.5, 30s, 500ms or 2min"),
    ("SYMMEM_TIMEOUT", "-3", "a duration"),
    ("SYMMEM_TIMEOUT", "inf", "a duration"),
    ("SYMMEM_TIMEOUT", "1h", "a duration"),
    ("SYMMEM_HEARTBEAT_S", "soon", "a duration"),
    ("SYMMEM_SPIN_US", "20us", "a number >= 0"),
    ("SYMMEM_SYMMETRIC_SIZE", "lots", "a size such as 4096, 512M, 1.5G or 2GB"),
    ("SYMMEM_NT_COPY_MIN", "nan", "a size"),
]


def test_malformed_values_are_refused_at_init(tmp_path):
    prog = write_program(
        tmp_path,
        """
        import json
        for name, value, takes in json.loads(sys.argv[1]):
            os.environ[name] = value
            expect_raises(nvshmem.NvshmemInvalid, [f"init: {name}='{value}' is not {takes}"],
                          nvshmem.init)
            del os.environ[name]
        print("ok")
    """,
    )
    [(rc, out, err)] = wait_all(
        [run_plain(prog, args=[json.dumps(MALFORMED)], env={"SYMMEM_BACKEND": "cpu"})]
    )
    assert rc == 0 and out.strip() == "ok", out + err
    assert "ignoring" not in err, err


def test_durations_take_a_unit(tmp_path):
    # seconds by default; s, ms and min; the timeout then holds (300ms)
    prog = write_program(
        tmp_path,
        """
        for text, seconds in [("30s", 30), ("1.5", 1.5), ("250 ms", 0.25), ("2min", 120),
                              ("0", 0)]:
            os.environ["SYMMEM_TIMEOUT"] = text
            got = nvshmem._symmem.env("SYMMEM_TIMEOUT")
            check(abs(got - seconds) < 1e-9, f"SYMMEM_TIMEOUT={text}: {got}")
        os.environ["SYMMEM_TIMEOUT"] = "300ms"
        nvshmem.init()
        sig = nvshmem.array((1,), dtype="uint64")
        sig[:] = 0
        start = time.monotonic()
        expect_raises(nvshmem.NvshmemError, ["signal_wait:", "timed out after 0.3 s"],
                      nvshmem.signal_wait, sig, 1, nvshmem.ComparisonType.CMP_EQ)
        check(0.25 < time.monotonic() - start < 10, f"waited {time.monotonic() - start} s")
        nvshmem.free_array(sig)
        nvshmem.finalize()
        print("ok")
    """,
    )
    [(rc, out, err)] = wait_all([run_plain(prog, env={"SYMMEM_BACKEND": "cpu"})])
    assert rc == 0 and out.strip() == "ok", out + err


def test_a_zero_heap_is_refused(tmp_path):
    prog = write_program(
        tmp_path,
        """
        msg = expect_raises(nvshmem.NvshmemInvalid, ["init:", "SYMMEM_SYMMETRIC_SIZE=0"],
                            nvshmem.init)
        print("raised:", msg)
    """,
    )
    [(rc, out, err)] = wait_all(
        [run_plain(prog, env={"SYMMEM_BACKEND": "cpu", "SYMMEM_SYMMETRIC_SIZE": "0"})]
    )
    assert rc == 0 and "raised: " in out, out + err
