"""The mpi backend where the package has none: built on first use against
the MPI found then, once per MPI, into a cache of this user's.

pip builds symmem before it installs an extra's requirements, so
``pip install 'symmem[mpi]'`` (mpi4py and Open MPI's wheel) finds no MPI
compiler when setup.py runs, and a wheel built elsewhere cannot know the
MPI of the machine it lands on. So the first init() that may take the mpi
backend (backend='mpi', or 'auto' in an mpirun or srun job across hosts)
compiles the backend's C sources, which the package carries
(_mpi_sources/, setup.py's copies), with the MPI compiler setup.py would
use: SYMMEM_MPICC, else mpicc beside this Python (an MPI wheel of this
environment, the MPI mpi4py loads first too), else mpicc on PATH (a
cluster's MPI).

The library goes to $XDG_CACHE_HOME/symmem/mpi-backend/KEY/ (~/.cache
where XDG_CACHE_HOME is unset), KEY a hash of the sources, the compiler's
flags, the MPI compiler (its path, what `-show` says it runs, the libmpi
that links) and the machine, so that another MPI (a module swapped, an
upgrade) gets a library of its own. PEs that start together build it once:
the first takes the key's lock (flock) and builds into a folder of its
own, then renames the library into place, which no reader sees half done
(even where the file system has no locks); the others wait for the lock
and find it. The library is loaded into every PE, so the cache must be
this user's and writable by nobody else, or nothing is built or loaded.
"""

import fcntl
import glob
import hashlib
import os
import platform
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from symmem import _symmem
from symmem._errors import exception
from symmem._libraries import user_cache

# The backend whose library this module builds: init(backend=NAME) asks for
# it by name, as _libraries.py finds each backend's library by its name.
NAME = "mpi"
SOURCES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_mpi_sources")
LIBRARY = "libsymmem_mpi.so"
LAUNCHERS = ("mpirun", "srun", "pmi")  # the launchers whose jobs across hosts take it (auto)


class BuildError(Exception):
    """The mpi backend could not be built: the message says why and what to do."""


def compiler():
    """The MPI compiler, as setup.py finds it; None where there is none."""
    named = os.environ.get("SYMMEM_MPICC")
    if named:
        return shutil.which(named) or named
    beside = os.path.join(os.path.dirname(sys.executable), "mpicc")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpicc")


def _run(cmd, cwd=None):
    """cmd's stdout; BuildError with its output where it fails."""
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BuildError(f"{shlex.join(cmd)} failed: {error}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
        raise BuildError(f"{shlex.join(cmd)} exited with {done.returncode}:\n{tail}")
    return done.stdout


def _libmpi(show):
    """The libmpi that `mpicc -show`'s words link: (path, size, mtime) or None."""
    words = shlex.split(show)
    folders = [w[2:] for w in words if w.startswith("-L")]
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "libmpi.so*"))):
            st = os.stat(path)
            return os.path.realpath(path), st.st_size, st.st_mtime_ns
    return None


def _key(mpicc):
    """The cache key of the backend built with mpicc from SOURCES."""
    digest = hashlib.sha256()
    listing = sorted(glob.glob(os.path.join(SOURCES, "**", "*"), recursive=True))
    for path in listing:
        if os.path.isfile(path):
            digest.update(os.path.relpath(path, SOURCES).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(f.read() + b"\0")
    try:  # Open MPI's, MPICH's and Intel MPI's wrappers say what they run
        show = _run([mpicc, "-show"])
    except BuildError:
        show = ""
    st = os.stat(mpicc)
    identity = (os.path.realpath(mpicc), st.st_mtime_ns, show, _libmpi(show), platform.machine())
    digest.update(repr(identity).encode())
    return digest.hexdigest()[:20]


def _own_folder(path):
    """Makes path (mode 0700) where it is missing; BuildError unless it is a
    folder of this user's that nobody else can write."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path):
        raise BuildError(f"{path} is not a folder")
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise BuildError(
            f"{path} belongs to uid {st.st_uid} with mode {oct(st.st_mode & 0o777)}: the mpi "
            f"backend's cache must be this user's (uid {os.getuid()}) and writable by nobody "
            f"else, as every PE loads the library from it (chmod go-w, or set XDG_CACHE_HOME)"
        )


def cache_folder():
    return user_cache("mpi-backend")


def _compile(mpicc, into):
    """Builds the backend from SOURCES with mpicc into folder into; its path."""
    flags = open(os.path.join(SOURCES, "cflags.txt")).read().split()
    flags.append("-I" + os.path.join(SOURCES, "include"))
    sources = open(os.path.join(SOURCES, "SOURCES")).read().split()
    objects = [os.path.join(into, f"{i}.o") for i in range(len(sources))]
    jobs = [
        [mpicc, *flags, "-c", os.path.join(SOURCES, source), "-o", obj]
        for source, obj in zip(sources, objects)
    ]
    with ThreadPoolExecutor(max(1, min(8, os.cpu_count() or 1))) as pool:
        list(pool.map(_run, jobs))  # the first failure raises
    library = os.path.join(into, LIBRARY)
    _run([mpicc, *flags, "-shared", "-Wl,-z,defs", "-o", library, *objects])
    return library


def library(say=None):
    """The path of the backend built for the MPI compiler found now: from the
    cache, else built (once, under the key's lock); say(text) tells of a
    build. BuildError where there is no compiler, no safe cache, or the
    build fails."""
    mpicc = compiler()
    if mpicc is None:
        raise BuildError(
            f"no MPI compiler was found (SYMMEM_MPICC, mpicc beside {sys.executable}, mpicc on "
            f"PATH): pip install 'symmem[mpi]' brings Open MPI's wheel; with a cluster's MPI, "
            f"load it (module load ...) or set SYMMEM_MPICC"
        )
    if not os.access(mpicc, os.X_OK):
        raise BuildError(f"the MPI compiler {mpicc} (SYMMEM_MPICC) is not a program to run")
    if not os.path.isfile(os.path.join(SOURCES, "SOURCES")):
        raise BuildError(f"the package has no mpi backend sources ({SOURCES}): reinstall symmem")
    top = cache_folder()
    base = os.path.dirname(os.path.dirname(top))
    os.makedirs(base, mode=0o700, exist_ok=True)
    if os.stat(base).st_mode & (stat.S_IWOTH | stat.S_ISVTX) == stat.S_IWOTH:
        raise BuildError(f"{base}, the cache's folder, is writable by anyone (and not sticky)")
    for folder in (os.path.dirname(top), top):
        _own_folder(folder)
    where = os.path.join(top, _key(mpicc))
    _own_folder(where)
    path = os.path.join(where, LIBRARY)
    if os.path.exists(path):
        return path
    lock = os.open(os.path.join(where, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
        except OSError:
            pass  # no locks here (some network file systems): the rename keeps it whole
        if os.path.exists(path):  # another PE built it while this one waited
            return path
        if say:
            say(f"symmem: building the mpi backend with {mpicc}, once for this MPI, into {where}")
        scratch = tempfile.mkdtemp(prefix="build-", dir=where)
        try:
            os.replace(_compile(mpicc, scratch), path)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return path
    finally:
        os.close(lock)


def _wanted(backend):
    """Whether init(backend=backend) may take the mpi backend: 'strict' where
    it must (asked for), 'maybe' where auto may, else None."""
    asked = backend if backend is not None else os.environ.get("SYMMEM_BACKEND", "")
    if asked == NAME:
        return "strict"
    if asked not in ("", "auto"):
        return None
    try:  # where the PEs are, loading no backend (the cpu engine's view)
        job = _symmem.launcher(backend="cpu")
    except Exception:  # noqa: BLE001 (init says what is wrong with the job)
        return None
    return "maybe" if job["spans_hosts"] and job["launcher"] in LAUNCHERS else None


def provide(backend=None, call="init"):
    """Sets SYMMEM_MPI_BACKEND_LIB, before the C library first looks for the
    mpi backend, where init(backend=backend) may take it and neither the
    user nor the package set it: to the backend built for this machine's
    MPI. Raises NvshmemError where backend='mpi' was asked for and it
    cannot be built; for 'auto', init then goes on without it."""
    if os.environ.get("SYMMEM_MPI_BACKEND_LIB") or _symmem.initialized():
        return
    how = _wanted(backend)
    if how is None:
        return
    try:
        path = library(say=lambda text: print(text, file=sys.stderr, flush=True))
    except (BuildError, OSError) as error:
        if how == "maybe":
            return
        raise exception(
            _symmem.ERR_BACKEND,
            f"{call}: backend='mpi' cannot run here: the package was built without an MPI "
            f"compiler, and building the mpi backend now failed: {error}",
        ) from None
    os.environ["SYMMEM_MPI_BACKEND_LIB"] = path
