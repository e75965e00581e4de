"""Registers the device names for @numba.cuda.jit kernels when numba-cuda is
installed. numba-cuda 0.30 refers to np.row_stack, which NumPy 2.5 removed
(numba-cuda is in maintenance, with no release that fixes it): where it is
gone and numba-cuda is about to load, it is put back as np.vstack, which it
always was. GPU_UNAVAILABLE is None once registered, else why not, in words.
Under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1) the names are
registered for simulated kernels instead (_simulator.py)."""

import importlib.util

import numpy as np


def _register():
    if importlib.util.find_spec("numba_cuda") is None:
        return "numba-cuda is not installed (pip install numba-cuda)"
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    import numba.cuda  # noqa: F401

    if _simulated():  # NUMBA_ENABLE_CUDASIM=1: kernels run as Python threads, on the cpu backend
        from . import _simulator

        _simulator.install()
        return None
    from . import _cuda, _cuda_collectives, _cuda_smem  # noqa: F401

    return None


def _simulated():
    try:
        from numba.cuda.core import config
    except ImportError:  # older numba-cuda: numba's own config
        from numba.core import config
    return bool(getattr(config, "ENABLE_CUDASIM", 0))


GPU_UNAVAILABLE = _register()
