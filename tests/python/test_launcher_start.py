"""python -m symmem.run starts without the package's API
(symmem/_launcher_only.py): no NumPy, no extension in the launcher, so a
job starts faster and the launcher runs even while the compiled part is
broken; any other use of the package imports all of it. A backend named
(--backend, SYMMEM_BACKEND) is asked what it can do through the extension
alone: mpirun starts the PEs of one whose PEs are MPI processes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import not_on_mpi

pytestmark = not_on_mpi("tests symmem.run's own launcher; mpirun starts the mpi backend's PEs")

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "symmem"


def python(*args, env=None, timeout=60, unset=()):
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={k: v for k, v in dict(os.environ, **(env or {})).items() if k not in unset},
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
    # no backend named (a named one is asked what it can do: below)
    result = python(
        "-X", "importtime", *options, "-n", "2", "-c", "print('hi')", unset={"SYMMEM_BACKEND"}
    )
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


# Issue 48: who starts the PEs is the named backend's capability
# (mpi_processes: mpirun starts them), never a comparison with its name.
MPI_BUILT = bool(list(PACKAGE.glob("_mpi_backend*.so")))
MPIRUN = Path(sys.executable).parent / "mpirun"
WHO_STARTED = "import os; print(os.environ.get('OMPI_COMM_WORLD_SIZE'), 'SYMMEM_GPU_BACKEND_LIB' in os.environ)"
# the user's environment, without what the package publishes on import
USER_ENV = {
    k: v for k, v in os.environ.items() if not (k.startswith("SYMMEM_") and k.endswith("_LIB"))
}


def run_who_started(*launcher, env=None):
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "symmem.run", *launcher, "-n", "2"]
        + ["-c", WHO_STARTED],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(USER_ENV, **(env or {})),
    )
    assert result.returncode == 0, result.stderr
    return sorted(result.stdout.splitlines()), launcher_imports(result)


def test_a_named_backend_without_mpi_processes_has_the_launcher_start_its_pes():
    # asked through the extension alone (no NumPy); the PEs get the user's
    # environment, not what the question published
    lines, imported = run_who_started("--backend", "cpu")
    assert lines == ["[pe 0] None False", "[pe 1] None False"]
    assert "symmem._symmem" in imported and "numpy" not in imported, imported


@pytest.mark.skipif(
    not MPI_BUILT or not os.access(MPIRUN, os.X_OK),
    reason="the mpi backend was not built, or there is no mpirun beside this Python",
)
@pytest.mark.parametrize("named_by", ["--backend", "SYMMEM_BACKEND"])
def test_a_backend_of_mpi_processes_has_mpirun_start_its_pes(named_by):
    launcher, env = (
        (["--backend", "mpi"], {}) if named_by == "--backend" else ([], {named_by: "mpi"})
    )
    lines, _ = run_who_started(*launcher, env=env)
    assert [line.split()[:3] for line in lines] == [["[pe", "0]", "2"], ["[pe", "1]", "2"]], lines
    # where the backend cannot load, the launcher starts them (their init says why)
    lines, _ = run_who_started(*launcher, env=dict(env, SYMMEM_MPI_BACKEND_LIB="/nonexistent.so"))
    assert lines == ["[pe 0] None False", "[pe 1] None False"]


@pytest.mark.skipif(
    not MPI_BUILT or not os.access(MPIRUN, os.X_OK),
    reason="the mpi backend was not built, or there is no mpirun beside this Python",
)
def test_a_backend_built_on_first_use_is_asked_once_built(tmp_path):
    # A copy of the package without its mpi backend (as built without an MPI
    # compiler): the launcher builds it as init would (_mpi_build.py) before
    # it asks, so mpirun starts the PEs.
    copy = tmp_path / "symmem"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("_mpi_backend*", "__pycache__"))
    env = {"PYTHONPATH": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    lines, _ = run_who_started("--backend", "mpi", env=env)
    assert [line.split()[:3] for line in lines] == [["[pe", "0]", "2"], ["[pe", "1]", "2"]], lines
    cache = tmp_path / "cache" / "symmem" / "mpi-backend"
    assert len(list(cache.glob("*/libsymmem_mpi.so"))) == 1  # built once, by the launcher
