"""Builds the C extension symmem._symmem from the C library's sources, and
the gpu backend (loaded at run time only when it is chosen) beside it.

The compiler flags come from cflags.txt (which the Makefile reads too) and
the version from include/symmem/symmem.h. setuptools builds in build-python/,
never in make's build/, and always compiles afresh: a broken compiler fails
the install instead of reusing objects from an earlier build.

SYMMEM_EXTRA_CFLAGS, a build variable (never read at run time), adds flags
to both compiling and linking: `make test-sanitize` builds with the
sanitizers through it.

symmem runs on Linux only (futexes, /dev/shm): building the extension
anywhere else stops with a message saying so. An sdist can be made anywhere."""
import os
import re
import sys
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def read_version():
    header = open("include/symmem/symmem.h").read()
    parts = [re.search(rf"#define SYMMEM_VERSION_{part} (\d+)", header).group(1)
             for part in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


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
            sys.exit(f"symmem builds and runs on Linux only (its engine uses futexes and "
                     f"Linux's shared memory); this is {sys.platform}. On macOS or Windows, "
                     f"use a Linux container or WSL.")
        super().run()


extra_flags = os.environ.get("SYMMEM_EXTRA_CFLAGS", "").split()
flags = open("cflags.txt").read().split() + extra_flags
core_sources = sorted(
    glob("src/extension/*.c") + glob("src/core/*.c") + glob("src/backends/cpu/*.c")
    + glob("src/device/*.c")
)
headers = (glob("include/symmem/*.h") + glob("src/**/*.h", recursive=True)
           + glob("src/**/*.def", recursive=True))

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
            sources=sorted(glob("src/backends/gpu/**/*.c", recursive=True)),
            depends=headers,
            include_dirs=["include"],
            extra_compile_args=flags,
            extra_link_args=extra_flags,
            libraries=["pthread", "dl"],
        ),
    ],
)
