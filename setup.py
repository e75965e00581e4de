"""Builds the C extension symmem._symmem from the C library's sources."""
from glob import glob

from setuptools import Extension, setup

sources = sorted(
    glob("src/python/*.c") + glob("src/core/*.c") + glob("src/backends/cpu/*.c")
)

setup(
    ext_modules=[
        Extension(
            "symmem._symmem",
            sources=sources,
            include_dirs=["include"],
            extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wno-missing-field-initializers"],
            libraries=["pthread"],
        )
    ]
)
