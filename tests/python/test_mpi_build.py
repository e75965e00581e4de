"""The mpi backend built on first use (python/symmem/_mpi_build.py), where
the package was built without an MPI compiler: once for all the PEs that
start together, into a cache of this user's, per MPI compiler; and what
init says where it cannot be built. tests/package/check_package.sh
installs the mpi extra into a fresh environment and runs 2 PEs on it."""

import os
import stat
import sys

import pytest

from symmem import _mpi_build
from test_mpi_backend import NODE_PATH, needs_mpi

# The package's own backend is set aside (as in a package built without an
# MPI compiler), so init builds one into this test's cache; each PE reports
# where its library came from and the previous PE's numbers.
FIRST_USE = """
    del os.environ["SYMMEM_MPI_BACKEND_LIB"]  # the package's, which publish() set
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    print(f"PE {me} loaded {os.environ['SYMMEM_MPI_BACKEND_LIB']}", flush=True)
    src = nvshmem.array((4,), dtype="int64")
    dst = nvshmem.array((4,), dtype="int64")
    src[:] = np.arange(4) + 100 * me
    nvshmem.barrier_all()
    nvshmem.put(dst, src, remote_pe=(me + 1) % n)
    nvshmem.barrier_all()
    check_equal(dst, np.arange(4) + 100 * ((me - 1) % n), "the ring")
    nvshmem.free_array(src)
    nvshmem.free_array(dst)
    ok()
    nvshmem.finalize()
"""


@needs_mpi
def test_the_pes_build_the_mpi_backend_once_on_first_use(run_pes, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = run_pes(2, FIRST_USE, timeout=120, env=NODE_PATH)
    assert result.rc == 0, str(result)
    # one PE built it while the other waited for its lock
    assert result.stderr.count("symmem: building the mpi backend with ") == 1, str(result)
    [folder] = (tmp_path / "cache" / "symmem" / "mpi-backend").iterdir()
    for pe in range(2):
        assert f"PE {pe} loaded {folder / 'libsymmem_mpi.so'}" in result.lines(pe), str(result)
        assert f"PE {pe} OK" in result.lines(pe), str(result)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(p.name for p in folder.iterdir()) == ["libsymmem_mpi.so", "lock"]
    # the next use (the same MPI compiler, this Python's) builds nothing
    said = []
    assert _mpi_build.library(say=said.append) == str(folder / "libsymmem_mpi.so")
    assert said == []


def test_init_says_why_the_mpi_backend_cannot_be_built(tmp_path):
    # a named MPI compiler that is not there: init raises before the C library looks
    from conftest import run_plain, wait_all, write_program

    program = write_program(
        tmp_path,
        """
        os.environ.pop("SYMMEM_MPI_BACKEND_LIB", None)
        try:
            nvshmem.init()
        except nvshmem.NvshmemError as error:
            print("raised:", error)
    """,
    )
    env = {"SYMMEM_BACKEND": "mpi", "SYMMEM_MPICC": str(tmp_path / "none" / "mpicc")}
    [(rc, out, err)] = wait_all([run_plain(program, env=env)])
    assert rc == 0, err
    assert "init: backend='mpi' cannot run here: the package was built without an MPI" in out
    assert f"the MPI compiler {tmp_path}/none/mpicc (SYMMEM_MPICC) is not a program" in out, out


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_no_mpi_compiler_at_all_says_what_brings_one(tmp_path, monkeypatch, own_cache):
    monkeypatch.delenv("SYMMEM_MPICC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    with pytest.raises(_mpi_build.BuildError, match=r"no MPI compiler was found .*symmem\[mpi\]"):
        _mpi_build.library()


def script(path, text):
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return str(path)


def test_a_failed_build_shows_the_compilers_words(tmp_path, monkeypatch, own_cache):
    broken = script(tmp_path / "mpicc", 'echo "mpi.h: no such file" >&2\nexit 1\n')
    monkeypatch.setenv("SYMMEM_MPICC", broken)
    with pytest.raises(_mpi_build.BuildError, match=r"(?s)exited with 1:.*mpi\.h: no such file"):
        _mpi_build.library()
    [folder] = (own_cache / "symmem" / "mpi-backend").iterdir()
    assert [p.name for p in folder.iterdir()] == ["lock"]  # nothing half built is left


def test_a_cache_others_can_write_is_refused(tmp_path, monkeypatch, own_cache):
    # every PE loads the library: a folder another user can write is no place for it
    monkeypatch.setenv("SYMMEM_MPICC", script(tmp_path / "mpicc", "exit 0\n"))
    (own_cache / "symmem").mkdir(parents=True)
    (own_cache / "symmem").chmod(0o777)
    with pytest.raises(_mpi_build.BuildError, match=r"symmem belongs to uid .* mode 0o777"):
        _mpi_build.library()


@needs_mpi
def test_each_mpi_compiler_has_a_library_of_its_own(tmp_path):
    # another compiler (another MPI, or a module swapped) is another key
    real = _mpi_build.compiler()
    other = script(tmp_path / "mpicc", f'exec "{real}" "$@"\n')
    assert _mpi_build._key(real) == _mpi_build._key(real)
    assert _mpi_build._key(real) != _mpi_build._key(other)
    assert os.path.isfile(os.path.join(_mpi_build.SOURCES, "SOURCES"))
