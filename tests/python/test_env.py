"""The environment table: python -m symmem info lists every variable with
its default and where it applies, and a malformed value is named and
replaced by the table's default."""
import os
import subprocess
import sys

from symmem import _symmem

from conftest import run_plain, wait_all, write_program


def test_info_lists_every_variable_with_its_default_and_backend():
    out = subprocess.run([sys.executable, "-m", "symmem", "info"], capture_output=True,
                         text=True, check=True, env=dict(os.environ, SYMMEM_TIMEOUT="7")).stdout
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
    for name in ("SYMMEM_BACKEND", "SYMMEM_SYMMETRIC_SIZE", "SYMMEM_GPU_KERNELS",
                 "SYMMEM_GPU_BACKEND_LIB", "SYMMEM_NVSHMEM_WHEEL_LIB", "SYMMEM_LOCAL_RANK",
                 "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"):
        assert name in {row[0] for row in rows}, name


def test_a_malformed_value_is_named_and_the_default_used(tmp_path):
    prog = write_program(tmp_path, """
        nvshmem.init()
        buf = nvshmem.buffer(1 << 20)   # fits the default heap, not a broken one
        nvshmem.free(buf)
        nvshmem.finalize()
        print("ok")
    """)
    env = {"SYMMEM_BACKEND": "cpu", "SYMMEM_SYMMETRIC_SIZE": "lots", "SYMMEM_TIMEOUT": "-3"}
    [(rc, out, err)] = wait_all([run_plain(prog, env=env)])
    assert rc == 0 and out.strip().endswith("ok"), out + err
    assert "ignoring SYMMEM_SYMMETRIC_SIZE=lots (not a size such as 4096, 512M or 1G); using 1G" in err
    assert "ignoring SYMMEM_TIMEOUT=-3 (not a number >= 0); using 0" in err


def test_a_zero_heap_is_refused(tmp_path):
    prog = write_program(tmp_path, """
        msg = expect_raises(nvshmem.NvshmemInvalid, ["init:", "SYMMEM_SYMMETRIC_SIZE=0"],
                            nvshmem.init)
        print("raised:", msg)
    """)
    [(rc, out, err)] = wait_all([run_plain(prog, env={"SYMMEM_BACKEND": "cpu",
                                                      "SYMMEM_SYMMETRIC_SIZE": "0"})])
    assert rc == 0 and "raised: " in out, out + err
