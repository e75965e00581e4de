"""Where the gpu backend's libraries are, handed to the C core through the
environment before anything initialises: the backend library this package
ships (SYMMEM_GPU_BACKEND_LIB) and libnvshmem_host.so.3 from the
nvidia-nvshmem wheel (SYMMEM_NVSHMEM_WHEEL_LIB; SYMMEM_NVSHMEM_LIB, set by the
user, is tried first)."""
import glob
import importlib.util
import os


def _gpu_backend_library():
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "_gpu_backend*.so")))
    return found[0] if found else None


def _nvshmem_wheel_library():
    try:
        spec = importlib.util.find_spec("nvidia.nvshmem")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, "lib", "libnvshmem_host.so.3")
        if os.path.exists(path):
            return path
    return None


def publish():
    backend = _gpu_backend_library()
    if backend and not os.environ.get("SYMMEM_GPU_BACKEND_LIB"):
        os.environ["SYMMEM_GPU_BACKEND_LIB"] = backend
    wheel = _nvshmem_wheel_library()
    if wheel and not os.environ.get("SYMMEM_NVSHMEM_WHEEL_LIB"):
        os.environ["SYMMEM_NVSHMEM_WHEEL_LIB"] = wheel
