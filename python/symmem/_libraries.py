"""Where the gpu backend's libraries are, handed to the C core through the
environment before anything initialises: the backend library this package
ships (SYMMEM_GPU_BACKEND_LIB; the mpi backend's likewise,
SYMMEM_MPI_BACKEND_LIB, where it was built at install time: else init
builds it on first use, _mpi_build.py) and libnvshmem_host.so.3 from the nvidia-nvshmem
wheel (SYMMEM_NVSHMEM_WHEEL_LIB; SYMMEM_NVSHMEM_LIB, set by the user, is
tried first). For the NVSHMEM atomics the backend compiles at run
time: NVRTC from the CUDA wheel (SYMMEM_NVRTC_LIB) and the CUDA headers
(SYMMEM_CUDA_INCLUDE), each only where the user did not set it; and the
folder that keeps what NVRTC compiles between runs (SYMMEM_KERNEL_CACHE).
Only paths are looked at here; nothing is loaded or made."""

import glob
import importlib.util
import os


def user_cache(*parts):
    """A folder of symmem's in the user's cache: $XDG_CACHE_HOME/symmem/...,
    ~/.cache/symmem/... where XDG_CACHE_HOME is unset."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "symmem", *parts)


def _backend_library(name):
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, f"_{name}_backend*.so")))
    return found[0] if found else None


def _gpu_backend_library():
    return _backend_library("gpu")


def _nvidia_folders():
    """The folders of the nvidia namespace package (the CUDA and NVSHMEM wheels)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []


def _nvshmem_wheel_library():
    for folder in _nvidia_folders():
        path = os.path.join(folder, "nvshmem", "lib", "libnvshmem_host.so.3")
        if os.path.exists(path):
            return path
    return None


def _nvrtc_wheel_library():
    for folder in _nvidia_folders():
        for path in (
            os.path.join(folder, "cu13", "lib", "libnvrtc.so.13"),
            os.path.join(folder, "cuda_nvrtc", "lib", "libnvrtc.so.12"),
        ):
            if os.path.exists(path):
                return path
    return None


def _cuda_include_folders():
    """Folders with cuda_runtime.h or CCCL's cuda/std: a CUDA toolkit's
    (CUDA_HOME, CUDA_PATH, /usr/local/cuda) and the CUDA wheels'."""
    bases = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    candidates = []
    for base in filter(None, bases):
        candidates += [os.path.join(base, "include"), os.path.join(base, "include", "cccl")]
    for folder in _nvidia_folders():
        candidates += [
            os.path.join(folder, "cu13", "include"),
            os.path.join(folder, "cu13", "include", "cccl"),
            os.path.join(folder, "cuda_runtime", "include"),
            os.path.join(folder, "cuda_cccl", "include"),
        ]
    found = []
    for path in candidates:
        has_headers = os.path.exists(os.path.join(path, "cuda_runtime.h")) or os.path.exists(
            os.path.join(path, "cuda", "std", "cstdint")
        )
        if has_headers and path not in found:
            found.append(path)
    return found


def publish():
    backend = _gpu_backend_library()
    if backend and not os.environ.get("SYMMEM_GPU_BACKEND_LIB"):
        os.environ["SYMMEM_GPU_BACKEND_LIB"] = backend
    # the mpi backend, where setup.py found an MPI compiler (else _mpi_build.py)
    mpi = _backend_library("mpi")
    if mpi and not os.environ.get("SYMMEM_MPI_BACKEND_LIB"):
        os.environ["SYMMEM_MPI_BACKEND_LIB"] = mpi
    wheel = _nvshmem_wheel_library()
    if wheel and not os.environ.get("SYMMEM_NVSHMEM_WHEEL_LIB"):
        os.environ["SYMMEM_NVSHMEM_WHEEL_LIB"] = wheel
    nvrtc = _nvrtc_wheel_library()
    if nvrtc and not os.environ.get("SYMMEM_NVRTC_LIB"):
        os.environ["SYMMEM_NVRTC_LIB"] = nvrtc
    if "SYMMEM_KERNEL_CACHE" not in os.environ:  # set empty or off: no cache
        os.environ["SYMMEM_KERNEL_CACHE"] = user_cache("kernels")
    if not os.environ.get("SYMMEM_CUDA_INCLUDE"):
        folders = _cuda_include_folders()
        if folders:
            os.environ["SYMMEM_CUDA_INCLUDE"] = ":".join(folders)
