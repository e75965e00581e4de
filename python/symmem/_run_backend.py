"""Who starts a job's PEs: symmem.run itself, or mpirun where the backend
the job names makes PEs that are MPI processes (its ``mpi_processes``
capability, include/symmem/vocabulary.h). The launcher asks the C core what
the named backend can do (its preview, ``_symmem.launcher``), as the
package does everywhere; it never compares the backend's name.

Asked only where a backend is named (``--backend``, else SYMMEM_BACKEND):
auto, the default, takes a backend of MPI processes only for an mpirun or
srun job across hosts, and a job of symmem.run is on one host. The
question loads the extension alone (no NumPy, not the API: milliseconds),
and the named backend as init would: the mpi backend's MPI library (built
on first use where the package has none, _mpi_build.py; not when run.py
runs as a file), the gpu backend's CUDA driver (cuInit, once a job, in the
launcher). Where the compiled part cannot load, or the backend cannot run
here, the launcher starts the PEs itself and each PE's init says why, as it
would have anyway.

Standard library only, but for the extension it asks, imported here.
"""

import os


def _ask(backend):
    """The capabilities the C core gives backend, or raises."""
    if __package__:
        from symmem import _libraries, _mpi_build, _symmem

        _libraries.publish()  # where the backends' libraries are
        _mpi_build.provide(backend)  # as init does: built on first use
    else:  # run.py run as a file: the package's folder is on sys.path, and
        import _libraries  # _mpi_build would import all of the package
        import _symmem

        _libraries.publish()
    return _symmem.launcher(backend=backend)["capabilities"]


def named_backend(args):
    """The backend the job names (--backend, else SYMMEM_BACKEND), or None."""
    return args.backend or os.environ.get("SYMMEM_BACKEND") or None


def capabilities(backend):
    """The capabilities of backend as init would find them here, or () where
    the extension cannot tell (it does not load, or backend cannot run
    here). Leaves the environment as it was: the PEs get the user's."""
    saved = dict(os.environ)
    try:
        return tuple(_ask(backend))
    except Exception:  # noqa: BLE001 (ImportError, NvshmemError, ...: the PEs will say)
        return ()
    finally:
        for name in set(os.environ) - set(saved):
            del os.environ[name]
        os.environ.update(saved)


def started_by_mpirun(args):
    """Whether the job's PEs must be MPI processes, which mpirun starts."""
    backend = named_backend(args)
    return backend is not None and "mpi_processes" in capabilities(backend)
