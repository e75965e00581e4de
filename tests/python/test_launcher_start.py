"""python -m symmem.run starts without the package's API
(symmem/_launcher_only.py): no NumPy, no extension in the launcher, so a
job starts faster and the launcher runs even while the compiled part is
broken; any other use of the package imports all of it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import not_on_mpi

pytestmark = not_on_mpi("tests symmem.run's own launcher; mpirun starts the mpi backend's PEs")

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "symmem"


def python(*args, env=None, timeout=60):
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, **(env or {})),
    )


def launcher_imports(result):
    """The modules the launcher (not its PEs) imported, from -X importtime."""
    return [
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]


@pytest.mark.parametrize(
    "options",
    [["-m", "symmem.run"], ["-msymmem.run"], ["-W", "ignore", "-B", "-m", "symmem.run"]],
    ids=["-m", "-mNAME", "options first"],
)
def test_the_launcher_imports_neither_numpy_nor_the_extension(options):
    result = python("-X", "importtime", *options, "-n", "2", "-c", "print('hi')")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["[pe 0] hi", "[pe 1] hi"]
    imported = launcher_imports(result)
    assert "symmem.run" in imported, result.stderr
    assert "numpy" not in imported and "symmem._symmem" not in imported, imported


def test_other_modules_of_the_package_get_all_of_it():
    # python -m of another module, and a program that imports symmem: the API.
    result = python("-m", "symmem.bench", "--help")
    assert result.returncode == 0, result.stderr
    program = "import sys, symmem; print(callable(symmem.init), 'numpy' in sys.modules)"
    result = python("-c", program)
    assert result.stdout.split() == ["True", "True"], result.stderr
    result = python("-m", "symmem.run", "-n", "1", "-c", program)
    assert result.stdout.split() == ["[pe", "0]", "True", "True"], result.stderr


def test_the_launcher_runs_while_the_extension_is_broken(tmp_path):
    # A copy of the package whose extension cannot load: the launcher still
    # starts the PEs; a PE that imports symmem says what is wrong.
    copy = tmp_path / "symmem"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for built in PACKAGE.glob("_symmem*.so"):
        (copy / built.name).write_bytes(b"not a shared object")
    env = {"PYTHONPATH": str(tmp_path)}
    result = python("-m", "symmem.run", "-n", "2", "-c", "print('hi')", env=env)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["[pe 0] hi", "[pe 1] hi"]
    result = python("-m", "symmem.run", "-n", "1", "-c", "import symmem", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert str(copy) in result.stderr and "_symmem" in result.stderr, result.stderr
