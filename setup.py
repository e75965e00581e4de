"""Builds the C extension symmem._symmem from the C library's sources, and
the gpu backend (loaded at run time only when it is chosen) beside it; the
mpi backend too, where an MPI compiler is found (mpi_compiler()). Where
none is (pip builds symmem before it installs an extra's MPI wheel), the
package carries the mpi backend's sources (_mpi_sources/, copied here) and
builds the backend on first use (python/symmem/_mpi_build.py).

The compiler flags come from cflags.txt (which the Makefile reads too) and
the version from include/symmem/symmem.h. setuptools builds in build-python/,
never in make's build/, and always compiles afresh: a broken compiler fails
the install instead of reusing objects from an earlier build.

SYMMEM_EXTRA_CFLAGS, a build variable (never read at run time), adds flags
to both compiling and linking: `make test-sanitize` builds with the
sanitizers through it.

The GPU code is copied by tools/embed.py, never linked: the gpu backend's
programs (src/backends/gpu/kernels/*.cu, *.ptx) become C strings in
build-python/.../gen/kernel_sources.c, compiled into _gpu_backend; the
package's device.cuh (include/symmem/device.cuh with its headers inlined)
and bench/nvshmem_abi.h are written into python/symmem/ on every run of
this file, so that an editable install, an sdist and a wheel all have them.

symmem runs on Linux only (futexes, /dev/shm): building the extension
anywhere else stops with a message saying so. An sdist can be made anywhere."""

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def read_version():
    header = open("include/symmem/symmem.h").read()
    parts = [
        re.search(rf"#define SYMMEM_VERSION_{part} (\d+)", header).group(1)
        for part in ("MAJOR", "MINOR", "PATCH")
    ]
    return ".".join(parts)


def load_embed():
    """tools/embed.py, which is no part of the package."""
    spec = importlib.util.spec_from_file_location("symmem_embed", os.path.join("tools", "embed.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


embed = load_embed()


class build_ext_afresh(build_ext):
    """Compiles every source on every build. Not in initialize_options:
    distutils' Command.__init__ sets force to None after calling it, and
    finalize_options then takes build's (unset): objects and the extension
    left in build-python/ by an earlier build were reused, so a broken
    compiler (CC=false), an edited cflags.txt or SYMMEM_EXTRA_CFLAGS changed
    nothing. Tracking every input instead (sources, headers, flags, the
    compiler) would save a minute per install and be one more thing to get
    wrong."""

    def finalize_options(self):
        super().finalize_options()
        self.force = True

    def run(self):
        if not sys.platform.startswith("linux"):
            sys.exit(
                f"symmem builds and runs on Linux only (its engine uses futexes and "
                f"Linux's shared memory); this is {sys.platform}. On macOS or Windows, "
                f"use a Linux container or WSL."
            )
        # The gpu backend's programs, as C strings (kernels/programs.h).
        sources = os.path.join(self.build_temp, "gen", "kernel_sources.c")
        embed.write_if_changed(sources, embed.kernel_sources())
        for ext in self.extensions:
            if ext.name == "symmem._gpu_backend" and sources not in ext.sources:
                ext.sources.append(sources)
        super().run()


def build_device_bitcode():
    """device/device.bc (tools/device_bitcode.py): the device library as LLVM
    bitcode, for CuTe DSL kernels (symmem.device.cute's own engine). Only
    where clang is; a failure is reported and the build goes on (without
    it, CuTe kernels use NVSHMEM's engine)."""
    path = os.path.join("tools", "device_bitcode.py")
    if not os.path.exists(path):  # an sdist made before it was listed
        return
    spec = importlib.util.spec_from_file_location("symmem_device_bitcode", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    if tool.clang() is None:
        return
    try:
        tool.build()
    except Exception as error:  # noqa: BLE001 (the build goes on without it)
        print(f"setup.py: device.bc not built ({error}); CuTe's own engine is unavailable")


# The mpi backend's sources: its own files and the core's it compiles in.
MPI_SOURCES = sorted(glob("src/backends/mpi/*.c")) + [
    "src/core/heap_alloc.c",
    "src/core/heartbeat.c",
    "src/core/reduce_kernels.c",
]
MPI_SOURCES_COPY = os.path.join("python", "symmem", "_mpi_sources")


def included(path):
    """The project files path includes (#include "..."), directly or not."""
    found, todo = set(), [path]
    while todo:
        here = todo.pop()
        for name in re.findall(r'^#include "([^"]+)"', open(here).read(), re.M):
            for base in (os.path.dirname(here), "include"):
                candidate = os.path.normpath(os.path.join(base, name))
                if os.path.exists(candidate) and candidate not in found:
                    found.add(candidate)
                    todo.append(candidate)
                    break
    return found


def write_mpi_sources():
    """The mpi backend's sources, the headers they include, cflags.txt and
    SOURCES (what to compile) into the package's _mpi_sources/, in the
    tree's layout, for _mpi_build.py to build the backend on first use;
    files no longer needed go. A file is rewritten only where it changed."""
    wanted = {"cflags.txt": open("cflags.txt").read(), "SOURCES": "\n".join(MPI_SOURCES) + "\n"}
    for path in set(MPI_SOURCES).union(*(included(p) for p in MPI_SOURCES)):
        wanted[path] = open(path).read()
    for path, text in wanted.items():
        embed.write_if_changed(os.path.join(MPI_SOURCES_COPY, path), text)
    for folder, _, names in os.walk(MPI_SOURCES_COPY):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.relpath(path, MPI_SOURCES_COPY) not in wanted:
                os.remove(path)


def mpi_compiler():
    """The MPI compiler the mpi backend is built with, as mpi4py finds one:
    SYMMEM_MPICC, else mpicc beside this Python (a virtual environment with
    Open MPI's wheel), else on PATH; None where there is none."""
    named = os.environ.get("SYMMEM_MPICC")
    if named:
        return named
    beside = os.path.join(os.path.dirname(sys.executable), "mpicc")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpicc")


def mpi_extension(flags, extra_flags):
    """The mpi backend (not a Python module: a shared object the core dlopens
    for backend="mpi"), with the flags `mpicc -show` names; optional, so a
    broken MPI leaves the package without it rather than unbuilt (it is
    then built on first use). None where no MPI compiler is found."""
    mpicc = mpi_compiler()
    if mpicc is None:
        print(
            "symmem: no MPI compiler (mpicc, or SYMMEM_MPICC): the mpi backend is built on "
            "first use, with the MPI found then",
            file=sys.stderr,
        )
        return None
    try:
        words = shlex.split(
            subprocess.run([mpicc, "-show"], capture_output=True, text=True, check=True).stdout
        )[1:]
    except (OSError, subprocess.CalledProcessError) as error:
        print(
            f"symmem: {mpicc} -show failed ({error}): the mpi backend is not built", file=sys.stderr
        )
        return None
    include_dirs = ["include"] + [w[2:] for w in words if w.startswith("-I")]
    compile_extra = [w for w in words if w == "-pthread" or w.startswith("-D")]
    link_extra = [w for w in words if not w.startswith(("-I", "-D"))] + ["-Wl,-z,defs"]
    return Extension(
        "symmem._mpi_backend",
        sources=MPI_SOURCES,
        depends=headers,
        include_dirs=include_dirs,
        extra_compile_args=flags + compile_extra,
        extra_link_args=extra_flags + link_extra,
        optional=True,
    )


extra_flags = os.environ.get("SYMMEM_EXTRA_CFLAGS", "").split()
flags = open("cflags.txt").read().split() + extra_flags
core_sources = sorted(
    glob("src/extension/*.c")
    + glob("src/core/*.c")
    + glob("src/backends/cpu/*.c")
    + glob("src/device/*.c")
)
headers = (
    glob("include/symmem/*.h")
    + glob("src/**/*.h", recursive=True)
    + glob("src/**/*.def", recursive=True)
)
embed.write_package_copies()  # device/device.cuh and bench/nvshmem_abi.h
write_mpi_sources()  # _mpi_sources/, for the mpi backend built on first use
build_device_bitcode()  # device/device.bc, where clang is
mpi_backend = mpi_extension(flags, extra_flags)

setup(
    version=read_version(),
    cmdclass={"build_ext": build_ext_afresh},
    options={"build": {"build_base": "build-python"}},
    ext_modules=[
        Extension(
            "symmem._symmem",
            sources=core_sources,
            depends=headers,
            include_dirs=["include"],
            define_macros=[("SYMMEM_EMBEDDED", "1")],
            extra_compile_args=flags,
            extra_link_args=extra_flags,
            libraries=["pthread", "dl"],
        ),
        # Not a Python module: a shared object the core dlopens for backend="gpu".
        Extension(
            "symmem._gpu_backend",
            sources=sorted(glob("src/backends/gpu/**/*.c", recursive=True))
            + ["src/core/heartbeat.c", "src/core/heap_alloc.c"],
            depends=headers,
            include_dirs=["include"],
            extra_compile_args=flags,
            extra_link_args=extra_flags,
            libraries=["pthread", "dl"],
        ),
    ]
    + ([mpi_backend] if mpi_backend is not None else []),
)
