"""The docstrings of symmem.device.numba's calls for what NVSHMEM's device
library can use and symmem does not: the shared memory NVSHMEM stages TMA
copies in (ask_smem, give_smem, release_smem: accepted, nothing done) and
NVLink multicast (get_multicast_array: refused, saying why; _device_docs.py
merges them with the others)."""

from ._device_doc_format import _FROM_PYTHON, build

DOCS = {}

_STAGING = (
    "symmem's device calls copy through the peer mappings and stage nothing in "
    "shared memory, so this is accepted and does nothing; NVSHMEM4Py's programs "
    "that use it run unchanged."
)
DOCS["ask_smem"] = build(
    "ask_smem",
    ["flag"],
    "The dynamic shared memory (bytes) to launch with for NVSHMEM's TMA staging.",
    [
        f"NvshmemInvalid: when {_FROM_PYTHON} (there, use symmem.ask_smem).",
        "TypingError: at compile time (numba.core.errors.TypingError), naming ask_smem: "
        "flag must be a SmemAmount or an integer.",
    ],
    "need = dev.ask_smem(dev.SmemAmount.SMEM_RECOMMENDED)",
    returns="16 for every flag, as symmem.ask_smem: symmem stages nothing, but programs "
    "written for NVSHMEM carve their own data after it or require it positive.",
)
DOCS["give_smem"] = build(
    "give_smem",
    ["smem"],
    "Register the kernel's dynamic shared memory for NVSHMEM's TMA copies.",
    [
        f"NvshmemInvalid: when {_FROM_PYTHON}.",
        "TypingError: at compile time (numba.core.errors.TypingError), naming give_smem: "
        "smem must be a C-contiguous array.",
    ],
    "smem = cuda.shared.array(0, dtype=numba.uint8)   # launched with ask_smem() bytes\n"
    "dev.give_smem(smem)\n...\ndev.release_smem()",
    body=_STAGING,
)
DOCS["release_smem"] = build(
    "release_smem",
    [],
    "End the registration give_smem made, before the kernel returns.",
    [
        f"NvshmemInvalid: when {_FROM_PYTHON}.",
        "TypingError: at compile time (numba.core.errors.TypingError): it takes no arguments.",
    ],
    "dev.give_smem(smem)\n...\ndev.release_smem()",
    body=_STAGING,
)
DOCS["get_multicast_array"] = build(
    "get_multicast_array",
    ["team", "array"],
    "The array over NVLink multicast memory of array: a store reaches every member's copy.",
    [
        f"NvshmemInvalid: when {_FROM_PYTHON}.",
        "TypingError: at compile time (numba.core.errors.TypingError), always, naming "
        "get_multicast_array and why: symmem never enables NVLink multicast (it can take a "
        "shared host's GPUs down), so on the cpu backend it needs the gpu backend, and on the "
        "gpu backend multicast is disabled (NVSHMEM_DISABLE_NVLS) or not mapped.",
    ],
    "mc = dev.get_multicast_array(Teams.TEAM_NODE, x)   # fails the compile, saying why",
    returns="Never returns here: see Raises.",
    body="symmem.get_multicast_array, the host call, raises for the same reasons.",
)
