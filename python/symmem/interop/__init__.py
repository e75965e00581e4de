"""Factories for arrays and tensors backed by symmetric memory:
symmem.interop.numpy, symmem.interop.torch and symmem.interop.cupy."""
from symmem.interop import cupy, numpy, torch  # noqa: F401
