"""symmem: symmetric memory for Python on CPUs and GPUs.

A superset of NVIDIA's NVSHMEM4Py host API: `import symmem as nvshmem` runs
NVSHMEM4Py programs. Start N PEs with `python -m symmem.run -n N prog.py`.
"""

from symmem import _launcher_only

_launcher_only.run_if_started()  # python -m symmem.run: the launcher, and exit

from symmem import _libraries  # noqa: E402

_libraries.publish()  # before the core looks for the gpu backend

from symmem import _resolver, _symmem  # noqa: E402

_resolver.install()  # memory without the buffer protocol, and whose Buffer an array is
from symmem import _launched  # noqa: E402

_launched.setup()  # a PE of symmem.run prints its stacks when the launcher asks
from symmem._enums import ComparisonType, InitStatus, SignalOp, SmemAmount, Teams, ThreadSupport
from symmem._errors import NvshmemError, NvshmemInvalid, NvshmemWarning
from symmem._lifecycle import (
    UniqueID,
    Version,
    finalize,
    get_name,
    get_unique_id,
    get_version,
    init,
    init_status,
    my_pe,
    n_pes,
)
from symmem._capabilities import ask_smem, query_thread
from symmem._mutable_enum import MutableEnum
from symmem._streams import NvshmemStream, NvshmemStreamsType
from symmem._memory import (
    Buffer,
    array,
    array_get_buffer,
    buffer,
    bytearray,
    free,
    free_array,
    get_peer_array,
    get_peer_buffer,
)
from symmem._resource import BufferTypes, NvshmemResource
from symmem._teams import (
    Team,
    TeamConfig,
    TeamUniqueId,
    barrier,
    get_team_unique_id,
    sync,
    team_destroy,
    team_get_config,
    team_init,
    team_my_pe,
    team_n_pes,
    team_split_2d,
    team_split_strided,
    team_translate_pe,
)
from symmem._collectives import (
    alltoall,
    broadcast,
    collective_on_buffer,
    fcollect,
    reduce,
    reducescatter,
)
from symmem._atomics import (
    atomic_add,
    atomic_and,
    atomic_compare_swap,
    atomic_fetch,
    atomic_fetch_add,
    atomic_fetch_and,
    atomic_fetch_inc,
    atomic_fetch_or,
    atomic_fetch_xor,
    atomic_inc,
    atomic_or,
    atomic_set,
    atomic_swap,
    atomic_xor,
)
from symmem._symmem import (
    barrier_all,
    fence,
    g,
    get,
    get_nbi,
    p,
    put,
    put_nbi,
    put_signal,
    put_signal_nbi,
    quiet,
    signal_fetch,
    signal_op,
    signal_wait,
    sync_all,
    test,
    wait_until,
)
from symmem._multicast import get_multicast_array, get_multicast_buffer, get_multicast_tensor
from symmem._external import (
    register_external_array,
    register_external_buffer,
    register_external_tensor,
    unregister_external_array,
    unregister_external_buffer,
    unregister_external_tensor,
)
from symmem._device_host import (
    DeviceLibLanguage,
    NvshmemKernelObject,
    find_device_bitcode_library,
    find_device_library,
    library_finalize,
    library_init,
    module_finalize,
    module_init,
)
from symmem.interop.torch import bytetensor, free_tensor, get_peer_tensor, tensor, tensor_get_buffer
from symmem import interop

flush = quiet  # flush(stream=None): NVSHMEM's name for completing outstanding work

__version__ = _symmem.VERSION
# Written out, so that type checkers see what `import symmem` exports (mypy
# --strict re-exports only what __all__ lists); tests/python/test_typing.py
# checks that it lists every public name defined above, and nothing else.
__all__ = [
    "ComparisonType",
    "InitStatus",
    "SignalOp",
    "SmemAmount",
    "Teams",
    "ThreadSupport",
    "NvshmemError",
    "NvshmemInvalid",
    "NvshmemWarning",
    "UniqueID",
    "Version",
    "finalize",
    "get_name",
    "get_unique_id",
    "get_version",
    "init",
    "init_status",
    "my_pe",
    "n_pes",
    "ask_smem",
    "query_thread",
    "MutableEnum",
    "NvshmemStream",
    "NvshmemStreamsType",
    "Buffer",
    "array",
    "array_get_buffer",
    "buffer",
    "bytearray",
    "free",
    "free_array",
    "get_peer_array",
    "get_peer_buffer",
    "BufferTypes",
    "NvshmemResource",
    "Team",
    "TeamConfig",
    "TeamUniqueId",
    "barrier",
    "get_team_unique_id",
    "sync",
    "team_destroy",
    "team_get_config",
    "team_init",
    "team_my_pe",
    "team_n_pes",
    "team_split_2d",
    "team_split_strided",
    "team_translate_pe",
    "alltoall",
    "broadcast",
    "collective_on_buffer",
    "fcollect",
    "reduce",
    "reducescatter",
    "atomic_add",
    "atomic_and",
    "atomic_compare_swap",
    "atomic_fetch",
    "atomic_fetch_add",
    "atomic_fetch_and",
    "atomic_fetch_inc",
    "atomic_fetch_or",
    "atomic_fetch_xor",
    "atomic_inc",
    "atomic_or",
    "atomic_set",
    "atomic_swap",
    "atomic_xor",
    "barrier_all",
    "fence",
    "g",
    "get",
    "get_nbi",
    "p",
    "put",
    "put_nbi",
    "put_signal",
    "put_signal_nbi",
    "quiet",
    "signal_fetch",
    "signal_op",
    "signal_wait",
    "sync_all",
    "test",
    "wait_until",
    "get_multicast_array",
    "get_multicast_buffer",
    "get_multicast_tensor",
    "register_external_array",
    "register_external_buffer",
    "register_external_tensor",
    "unregister_external_array",
    "unregister_external_buffer",
    "unregister_external_tensor",
    "DeviceLibLanguage",
    "NvshmemKernelObject",
    "find_device_bitcode_library",
    "find_device_library",
    "library_finalize",
    "library_init",
    "module_finalize",
    "module_init",
    "bytetensor",
    "free_tensor",
    "get_peer_tensor",
    "tensor",
    "tensor_get_buffer",
    "interop",
    "flush",
]

from symmem import core  # noqa: E402,F401  (the NVSHMEM4Py-style alias module)
from symmem import utils  # noqa: E402,F401  (nvshmem.core.utils)

import typing as _typing  # noqa: E402

if not _typing.TYPE_CHECKING:  # (a module __getattr__ would let a type checker pass any name)

    def __getattr__(name):
        # nvshmem.bindings (NVSHMEM4Py's low-level module) at its first use:
        # importing it with the package cost 10 ms of every PE's start.
        if name == "bindings":
            import importlib

            return importlib.import_module("symmem.bindings")
        raise AttributeError(f"module 'symmem' has no attribute {name!r}")
