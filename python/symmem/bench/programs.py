"""The programs in C and CUDA C that the bench compares symmem with, built
where they run: nvshmem_floor.c (NVSHMEM's host API called directly) and
nvshmem_device.cu (its device API), and why one cannot be built here."""

import glob
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Both ship in this package (package data, with the headers they include:
# nvshmem_abi.h, launched.h), so an installed symmem can build them.
FLOOR_SOURCE = Path(__file__).with_name("nvshmem_floor.c")
DEVICE_SOURCE = Path(__file__).with_name("nvshmem_device.cu")


class Unavailable(Exception):
    """A library that cannot run here; the message says why."""


def _find(patterns):
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def nvshmem_root():
    """The nvidia-nvshmem wheel's folder (include/, lib/)."""
    try:
        import nvidia.nvshmem

        return Path(list(nvidia.nvshmem.__path__)[0])
    except ImportError:
        raise Unavailable(
            "the nvidia-nvshmem wheel is not installed (pip install nvidia-nvshmem-cu13)"
        ) from None


def build_floor(out_dir):
    """Compiles nvshmem_floor.c; the executable's path."""
    if not FLOOR_SOURCE.exists():
        raise Unavailable(f"its source {FLOOR_SOURCE} is missing from the installed package")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        raise Unavailable("no C compiler (cc)")
    nvshmem_lib = nvshmem_root() / "lib"
    roots = [os.environ.get("CUDA_HOME", "/usr/local/cuda"), "/usr/local/cuda"]
    site = [str(Path(p)) for p in sys.path if p.endswith("site-packages")]
    header = _find(
        [f"{r}/include/cuda_runtime_api.h" for r in roots]
        + [f"{s}/nvidia/*/include/cuda_runtime_api.h" for s in site]
    )
    cudart = _find(
        [f"{r}/lib64/libcudart.so*" for r in roots]
        + [f"{s}/nvidia/*/lib/libcudart.so*" for s in site]
    )
    if header is None or cudart is None:
        raise Unavailable("the CUDA runtime's header or library was not found (set CUDA_HOME)")
    exe = Path(out_dir) / "nvshmem_floor"
    command = [
        cc,
        "-O2",
        f"-I{Path(header).parent}",
        str(FLOOR_SOURCE),
        "-o",
        str(exe),
        str(nvshmem_lib / "libnvshmem_host.so.3"),
        cudart,
        f"-Wl,-rpath,{nvshmem_lib}",
        f"-Wl,-rpath,{Path(cudart).parent}",
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise Unavailable(f"compiling it failed: {result.stderr.strip()[-500:]}")
    return exe


def find_nvcc():
    """nvcc: $NVCC if set, else nvcc on PATH, else $CUDA_HOME/bin/nvcc or
    /usr/local/cuda/bin/nvcc; None where there is none."""
    if os.environ.get("NVCC"):
        return shutil.which(os.environ["NVCC"])
    roots = [os.environ.get("CUDA_HOME", "/usr/local/cuda"), "/usr/local/cuda"]
    return shutil.which("nvcc") or _find([f"{root}/bin/nvcc" for root in roots])


def gpu_arch():
    """sm_XY of GPU 0 (CuPy's word), else sm_90 (H100, H200)."""
    try:
        import cupy

        return "sm_" + cupy.cuda.Device(0).compute_capability
    except Exception:
        return "sm_90"


def device_build_command(nvcc, root, exe):
    """nvcc's command line for nvshmem_device.cu against the wheel at root:
    relocatable device code linked with NVSHMEM's device library."""
    lib = root / "lib"
    return [
        nvcc,
        "-O2",
        "-rdc=true",
        f"-arch={gpu_arch()}",
        f"-I{root / 'include'}",
        str(DEVICE_SOURCE),
        "-o",
        str(exe),
        str(lib / "libnvshmem_device.a"),
        f"-L{lib}",
        "-l:libnvshmem_host.so.3",
        "-lcuda",
        "-Xlinker",
        "-rpath",
        "-Xlinker",
        str(lib),
    ]


def build_device_program(out_dir):
    """Compiles nvshmem_device.cu with nvcc, or finds it compiled: the
    executable is kept in ~/.cache/symmem/bench (else out_dir) under a hash
    of the sources, nvcc's version and the command line. Its path."""
    if not DEVICE_SOURCE.exists():
        raise Unavailable(f"its source {DEVICE_SOURCE} is missing from the installed package")
    nvcc = find_nvcc()
    if nvcc is None:
        named = os.environ.get("NVCC")
        raise Unavailable(
            f"NVCC={named} is not an executable"
            if named
            else "no nvcc (NVSHMEM's device API is built with it: set NVCC or "
            "CUDA_HOME, or put nvcc on PATH)"
        )
    root = nvshmem_root()
    for need in ("include/nvshmem.h", "lib/libnvshmem_device.a", "lib/libnvshmem_host.so.3"):
        if not (root / need).exists():
            raise Unavailable(f"the nvidia-nvshmem wheel at {root} has no {need}")
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256()
    for part in (
        DEVICE_SOURCE.read_bytes(),
        DEVICE_SOURCE.with_name("launched.h").read_bytes(),
        version.encode(),
        " ".join(device_build_command(nvcc, root, "")).encode(),
    ):
        key.update(part)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "symmem" / "bench"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        cache = Path(out_dir)
    exe = cache / f"nvshmem_device-{key.hexdigest()[:16]}"
    if exe.exists():
        return exe
    partial = exe.with_name(f"{exe.name}.{os.getpid()}")  # renamed once complete
    result = subprocess.run(
        device_build_command(nvcc, root, partial), capture_output=True, text=True
    )
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise Unavailable(
            f"compiling {DEVICE_SOURCE.name} failed: "
            f"{(result.stdout + result.stderr).strip()[-500:]}"
        )
    os.replace(partial, exe)
    return exe
