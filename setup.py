"""Builds the C extension symmem._symmem from the C library's sources, and
the gpu backend (loaded at run time only when it is chosen) beside it."""
from glob import glob

from setuptools import Extension, setup

core_sources = sorted(
    glob("src/extension/*.c") + glob("src/core/*.c") + glob("src/backends/cpu/*.c")
)
headers = glob("include/symmem/*.h") + glob("src/*/*.h") + glob("src/backends/*/*.h")
flags = ["-std=gnu11", "-O3", "-Wall", "-Wno-missing-field-initializers"]

setup(
    ext_modules=[
        Extension(
            "symmem._symmem",
            sources=core_sources,
            depends=headers,
            include_dirs=["include"],
            extra_compile_args=flags,
            libraries=["pthread", "dl"],
        ),
        # Not a Python module: a shared object the core dlopens for backend="gpu".
        Extension(
            "symmem._gpu_backend",
            sources=sorted(glob("src/backends/gpu/**/*.c", recursive=True)),
            depends=headers,
            include_dirs=["include"],
            extra_compile_args=flags,
            libraries=["dl"],
        ),
    ]
)
