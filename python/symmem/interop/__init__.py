"""Factories for arrays and tensors backed by symmetric memory.

symmem.interop.numpy (NumPy arrays, the cpu backend's), symmem.interop.cupy
(CuPy arrays, the gpu backend's) and symmem.interop.torch (torch tensors,
CPU or CUDA by the backend), each with NVSHMEM4Py's interop names:
empty(shape, dtype) and its module's array or tensor factories.

Example:
    >>> from symmem.interop import numpy as snp
    >>> a = snp.empty(4, dtype="float32")
    >>> snp.free_array(a)
"""

from symmem.interop import cupy, numpy, torch  # noqa: F401
