"""Where the device libraries' files are: NVSHMEM's (find_device_bitcode_library,
in the forms DeviceLibLanguage names) beside the NVSHMEM host library, and
symmem's own (find_device_library, device.cuh, in the package)."""

import enum
import os
import re

from symmem import _symmem
from symmem._errors import invalid

_HERE = os.path.dirname(os.path.abspath(__file__))


class DeviceLibLanguage(enum.Enum):
    """The forms of NVSHMEM's device library (NVSHMEM4Py's members and values).

    LLVM_BITCODE ("bc"), LTOIR ("ltoir") and STATIC ("a"), for
    find_device_bitcode_library().

    Example:
        >>> symmem.DeviceLibLanguage("bc") is symmem.DeviceLibLanguage.LLVM_BITCODE
        True
    """

    LLVM_BITCODE = "bc"
    LTOIR = "ltoir"
    STATIC = "a"


_LIBRARY_FILES = {
    DeviceLibLanguage.LTOIR: "libnvshmem_device.ltoir.fatbin",
    DeviceLibLanguage.STATIC: "libnvshmem_device.a",
}


def _language(language, call, choices):
    for member in choices:
        if language is member or language == member.value:
            return member
    raise invalid(
        f"{call}: language={language!r} is not one of {', '.join(str(m) for m in choices)}"
    )


def _arch(arch, call):
    """An SM architecture as NVSHMEM's file names write it: 90 from 90,
    "sm_90", "90a", (9, 0) or anything with .major and .minor."""
    if isinstance(arch, (tuple, list)) and len(arch) == 2:
        arch = f"{arch[0]}{arch[1]}"
    elif hasattr(arch, "major") and hasattr(arch, "minor"):
        arch = f"{arch.major}{arch.minor}"
    match = re.fullmatch(r"(?:sm_|compute_)?(\d+)a?", str(arch).strip().lower())
    if isinstance(arch, bool) or not match:
        raise invalid(f"{call}: arch={arch!r} is not an SM architecture (90, 'sm_90', (9, 0))")
    return match.group(1)


def _nvshmem_lib_dirs():
    """Where NVSHMEM's libraries are: beside the host library the gpu backend
    would load (SYMMEM_NVSHMEM_LIB first, then the nvidia-nvshmem wheel's)."""
    dirs = []
    for name in ("SYMMEM_NVSHMEM_LIB", "SYMMEM_NVSHMEM_WHEEL_LIB"):
        path = _symmem.env(name)
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        if folder and folder not in dirs:
            dirs.append(folder)
    return dirs


def find_device_bitcode_library(*, language=DeviceLibLanguage.LLVM_BITCODE, arch=None):
    """The path of NVSHMEM's device library (NVSHMEM4Py's call).

    Looked for beside the NVSHMEM host library (the nvidia-nvshmem wheel's,
    or the one SYMMEM_NVSHMEM_LIB names). Kernels linked with it run on the
    gpu backend after module_init() / library_init(). symmem's own device
    library is CUDA C: find_device_library().

    Args:
        language: a DeviceLibLanguage (or its value): LLVM_BITCODE for
            libnvshmem_device.bc, LTOIR for libnvshmem_device.ltoir.fatbin,
            STATIC for libnvshmem_device.a.
        arch: with LLVM_BITCODE, an SM architecture (90, "sm_90", (9, 0),
            or anything with .major and .minor) for
            libnvshmem_device_sm_<arch>.bc; None for the generic one.

    Returns:
        The file's path (a str).

    Raises:
        NvshmemInvalid: language is not a DeviceLibLanguage; arch is not an
            SM architecture; the file is not there (or NVSHMEM is not
            installed).

    Example:
        >>> try:
        ...     path = symmem.find_device_bitcode_library()
        ... except symmem.NvshmemInvalid:  # NVSHMEM is not installed here
        ...     path = None
        >>> path is None or path.endswith("libnvshmem_device.bc")
        True
    """
    call = "find_device_bitcode_library"
    language = _language(language, call, list(DeviceLibLanguage))
    if language is DeviceLibLanguage.LLVM_BITCODE:
        name = (
            "libnvshmem_device.bc"
            if arch is None
            else f"libnvshmem_device_sm_{_arch(arch, call)}.bc"
        )
    else:
        name = _LIBRARY_FILES[language]
    dirs = _nvshmem_lib_dirs()
    for folder in dirs:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    where = (
        f"looked in {', '.join(dirs)}"
        if dirs
        else "no NVSHMEM here: the nvidia-nvshmem wheel is not installed and "
        "SYMMEM_NVSHMEM_LIB is not set"
    )
    raise invalid(
        f"{call}: NVSHMEM's device library {name} was not found ({where}); install "
        "the nvidia-nvshmem-cu13 (or -cu12) wheel, or set SYMMEM_NVSHMEM_LIB to a "
        "libnvshmem_host.so.3 whose directory holds it. symmem's own device "
        "library is CUDA C source: symmem.find_device_library()"
    )


def find_device_library(language="cuda"):
    """The path of symmem's device library, device.cuh.

    CUDA C source in one file (include/symmem/device.cuh with the headers
    it includes inlined at build time), compiled by NVRTC with no include
    path together with the kernel that includes it (its only form; there is
    no .bc, LTO-IR or .a of it).

    Args:
        language: "cuda", the only form.

    Returns:
        The file's path (a str).

    Raises:
        NvshmemInvalid: language is not "cuda" (a DeviceLibLanguage names
            a form of NVSHMEM's library: find_device_bitcode_library()).

    Example:
        >>> symmem.find_device_library().endswith("device.cuh")
        True
    """
    call = "find_device_library"
    if isinstance(language, DeviceLibLanguage):
        raise invalid(
            f"{call}: language={language} is a form of NVSHMEM's device library "
            "(find_device_bitcode_library); symmem's is CUDA C source only: "
            "language='cuda'"
        )
    if not isinstance(language, str) or language != "cuda":
        raise invalid(
            f"{call}: language={language!r:.60} is not 'cuda' (symmem's device library "
            "is CUDA C source)"
        )
    return os.path.join(_HERE, "device", "device.cuh")
